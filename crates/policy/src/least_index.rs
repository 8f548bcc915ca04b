//! An index of the eligible nodes by load, for a least-loaded pick in O(log nodes).
//!
//! A tree of minima over node ids (ineligible nodes read as +∞) follows the view's
//! loads through [`LoadView::changes_since`]: between two picks only the few nodes whose
//! load changed are updated, and the view is read in full only when the index falls
//! behind, when the view is another (a router's view polled again), or when membership
//! changes. The pick it answers is the scan's ([`crate::roster::least_of`]): the least
//! load, ties to the first node at or after a given id, wrapping round (a load that is not
//! a number, which no node reports, counts here as the most).

use crate::load::ChangeMark;
use crate::{LoadView, NodeId};

/// Minima of the eligible nodes' loads over ranges of ids.
#[derive(Clone, Debug, Default)]
pub struct LeastIndex {
    /// Indexed by node id.
    eligible: Vec<bool>,
    /// `tree[leaves + id]` is node `id`'s load (+∞ when not eligible); `tree[k]` is the
    /// least of `tree[2k]` and `tree[2k + 1]`; `tree[1]` the least of all.
    tree: Vec<f64>,
    leaves: usize,
    /// How far into the view's changes the tree is; `None`: read the view in full.
    mark: Option<ChangeMark>,
}

impl LeastIndex {
    /// Take the eligible nodes (any order); the next pick reads every load.
    pub fn set_eligible(&mut self, eligible: &[NodeId]) {
        let len = eligible.iter().map(|n| n.index() + 1).max().unwrap_or(0);
        self.eligible = vec![false; len];
        eligible.iter().for_each(|n| self.eligible[n.index()] = true);
        self.leaves = len.next_power_of_two();
        self.tree = vec![f64::INFINITY; 2 * self.leaves];
        self.mark = None;
    }

    /// The least loaded eligible node and its load, ties to the first at or after id
    /// `from` (wrapping round); `None` when no node is eligible.
    pub fn least(&mut self, view: &LoadView, from: NodeId) -> Option<(NodeId, f64)> {
        if self.eligible.is_empty() {
            return None;
        }
        self.follow(view);
        let least = self.tree[1];
        if least == f64::INFINITY {
            // No eligible node has a load that is a number: the first at or after `from`.
            let first = |lo: usize| (lo..self.eligible.len()).find(|&i| self.eligible[i]);
            let node = NodeId(first(from.index()).or_else(|| first(0))? as u32);
            return Some((node, view.load(node)));
        }
        let found = self.first_at_most(from.index(), least);
        let node = found.or_else(|| self.first_at_most(0, least))?;
        Some((NodeId(node as u32), view.load(NodeId(node as u32))))
    }

    /// Bring the tree up to the view's loads.
    fn follow(&mut self, view: &LoadView) {
        let changed = self.mark.and_then(|mark| view.changes_since(mark));
        match changed {
            Some(nodes) => nodes.for_each(|node| self.set(node, view)),
            None => {
                for id in 0..self.eligible.len() {
                    self.tree[self.leaves + id] = self.leaf(NodeId(id as u32), view);
                }
                for k in (1..self.leaves).rev() {
                    self.tree[k] = self.tree[2 * k].min(self.tree[2 * k + 1]);
                }
            }
        }
        self.mark = Some(view.change_mark());
    }

    /// A node's place in the tree: its load when eligible (a load that is not a number
    /// counts as the most), else +∞.
    fn leaf(&self, node: NodeId, view: &LoadView) -> f64 {
        match self.eligible.get(node.index()) {
            Some(true) => Some(view.load(node)).filter(|l| !l.is_nan()).unwrap_or(f64::INFINITY),
            _ => f64::INFINITY,
        }
    }

    fn set(&mut self, node: NodeId, view: &LoadView) {
        if node.index() >= self.eligible.len() {
            return;
        }
        let mut k = self.leaves + node.index();
        self.tree[k] = self.leaf(node, view);
        // Up to the first minimum that stays as it was: most changes stop within a level
        // or two, where a sibling holds the lower load.
        while k > 1 {
            k /= 2;
            let least = self.tree[2 * k].min(self.tree[2 * k + 1]);
            if self.tree[k] == least {
                break;
            }
            self.tree[k] = least;
        }
    }

    /// The first id at or after `from` whose load is at most `least` (finite): up from
    /// `from`'s leaf to the first subtree on its right that holds one, then down to it.
    fn first_at_most(&self, from: usize, least: f64) -> Option<usize> {
        if from >= self.leaves {
            return None;
        }
        let mut k = self.leaves + from;
        while self.tree[k] > least {
            // Past the subtrees that end where `k` does, to the next one on the right.
            while k & 1 == 1 {
                k >>= 1;
            }
            if k == 0 {
                return None;
            }
            k += 1;
        }
        while k < self.leaves {
            k = if self.tree[2 * k] <= least { 2 * k } else { 2 * k + 1 };
        }
        Some(k - self.leaves)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::roster::least_of;

    /// xorshift: a fixed stream.
    fn next(x: &mut u64) -> u64 {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        *x
    }

    #[test]
    fn agrees_with_a_scan_as_loads_move() {
        for n in [1usize, 3, 8, 37] {
            let eligible: Vec<NodeId> =
                (0..n as u32).filter(|i| n < 3 || i % 3 != 1).map(NodeId).collect();
            let mut index = LeastIndex::default();
            index.set_eligible(&eligible);
            let mut view = LoadView::new(n);
            let mut x = 0x1234_5678_9abc_def1u64 + n as u64;
            for step in 0..3_000 {
                let node = NodeId((next(&mut x) % n as u64) as u32);
                match next(&mut x) % 5 {
                    0 | 1 => view.started(node),
                    2 | 3 => view.finished(node),
                    // Every so often many changes at once: the index reads the view anew.
                    _ if step % 500 == 0 => (0..300).for_each(|_| view.started(node)),
                    _ => view.report(node, (next(&mut x) % 4) as f64, 0.0),
                }
                let start = (next(&mut x) % eligible.len() as u64) as usize;
                let scan = {
                    let (tail, head) = eligible.split_at(start);
                    least_of(head.iter().chain(tail).copied(), &view)
                };
                assert_eq!(index.least(&view, eligible[start]), scan, "n {n}, step {step}");
            }
        }
    }

    #[test]
    fn another_view_or_none_eligible() {
        let mut index = LeastIndex::default();
        let view = LoadView::new(2);
        assert_eq!(index.least(&view, NodeId(0)), None);
        index.set_eligible(&[NodeId(0), NodeId(1)]);
        let mut busy = LoadView::new(2);
        busy.started(NodeId(0));
        assert_eq!(index.least(&busy, NodeId(0)), Some((NodeId(1), 0.0)));
        // A clone goes its own way: the index must not take it for the view it followed.
        let mut other = busy.clone();
        other.started(NodeId(1));
        other.started(NodeId(1));
        assert_eq!(index.least(&other, NodeId(0)), Some((NodeId(0), 1.0)));
        assert_eq!(index.least(&busy, NodeId(0)), Some((NodeId(1), 0.0)));
    }
}

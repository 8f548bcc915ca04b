//! `hacc`: the policy of HACC's Smart Router (Zhang et al., USENIX Windows NT 1999).
//!
//! HACC models the namespace as a tree and places subtrees rather than single files, so
//! a directory's documents (or a Domino database's views) share one node's memory. A
//! subtree never seen before goes to the least-loaded node. When the most loaded node's
//! load exceeds the least loaded's by more than a margin (`spec.hacc_margin`), part of
//! its documents move to the least-loaded node, at most once per interval
//! (`spec.hacc_interval`, HACC's 200 ms polling period).
//!
//! What "part" is, is our choice (the paper leaves it open): each subtree counts its
//! requests over the current and the previous interval, and each node remembers the
//! [`HOT_SLOTS`] hottest subtrees it served since the last rebalance. A subtree's share
//! of its node's load is estimated as the node's load times the subtree's fraction of the
//! node's requests. Moving load x from the most to the least loaded node changes their gap
//! g to |g − 2x|, so we move the hottest remembered subtrees whose shares fit in g/2
//! together (no overshoot); if none fits, the smallest one with x < g (it still narrows
//! the gap); and nothing when a single subtree carries the whole gap (moving it would
//! only move the hot spot: `lard-r` replicates such targets, `hacc` does not).
//!
//! With [`crate::PlacementMode::Shared`] (the default) a new subtree goes where every router
//! would put it ([`crate::home`]: its first candidate by name that holds it or
//! that LARD would not call overloaded); rebalancing stays each router's own.
//! [`crate::PlacementMode::PerRouter`] keeps HACC's least loaded node, for comparison.
//!
//! A known subtree costs one table lookup and a few counter updates; the O(n) scans run
//! for new subtrees and once per interval.

use crate::roster::Roster;
use crate::table::TargetTable;
use crate::{
    LoadView, Nanos, NodeId, NodeState, Policy, PolicySpec, PolicyStats, Target, TargetKey,
};

/// How many of its hottest subtrees each node remembers as candidates to move.
pub const HOT_SLOTS: usize = 4;

/// Requests counted in fixed windows (one rebalance interval each); the rate is the count
/// over the current and the previous window, so it never drops to zero at a boundary.
#[derive(Copy, Clone, Debug, Default)]
struct WindowCount {
    window: u64,
    current: u32,
    previous: u32,
}

impl WindowCount {
    /// Count one request in `window` and return the rate.
    fn hit(&mut self, window: u64) -> u64 {
        if self.window != window {
            self.previous =
                if self.window.checked_add(1) == Some(window) { self.current } else { 0 };
            self.current = 0;
            self.window = window;
        }
        self.current = self.current.saturating_add(1);
        self.rate(window)
    }

    /// Requests over `window` and the one before.
    fn rate(&self, window: u64) -> u64 {
        if self.window == window {
            self.current as u64 + self.previous as u64
        } else if self.window.checked_add(1) == Some(window) {
            self.current as u64
        } else {
            0
        }
    }
}

struct Subtree {
    node: NodeId,
    requests: WindowCount,
}

/// What the rebalancer knows of one node's traffic.
#[derive(Clone, Default)]
struct NodeTraffic {
    requests: WindowCount,
    /// (subtree, its rate when last served here); rate 0 marks an empty slot.
    hot: [(TargetKey, u64); HOT_SLOTS],
}

impl NodeTraffic {
    /// Remember `tree` if it is among the hottest seen since the last rebalance.
    fn served(&mut self, tree: TargetKey, rate: u64) {
        if let Some(slot) = self.hot.iter_mut().find(|(k, r)| *r > 0 && *k == tree) {
            slot.1 = rate;
        } else if let Some(coldest) = self.hot.iter_mut().min_by_key(|(_, r)| *r) {
            if rate > coldest.1 {
                *coldest = (tree, rate);
            }
        }
    }
}

pub struct Hacc {
    margin: f64,
    /// LARD's thresholds, for a new subtree's node in shared placement.
    t_low: f64,
    t_high: f64,
    interval: Nanos,
    roster: Roster,
    table: TargetTable<Subtree>,
    /// Indexed by node id.
    traffic: Vec<NodeTraffic>,
    next_rebalance: Nanos,
    reassignments: u64,
}

impl Hacc {
    pub fn from_spec(spec: &PolicySpec) -> Self {
        Hacc {
            margin: spec.hacc_margin,
            t_low: spec.t_low,
            t_high: spec.t_high,
            interval: spec.hacc_interval,
            roster: Roster::new(spec.placement),
            table: TargetTable::new(spec.table_cap),
            traffic: Vec::new(),
            next_rebalance: 0,
            reassignments: 0,
        }
    }

    /// Offload the most loaded node onto the least loaded if their gap exceeds the margin.
    fn rebalance(&mut self, view: &LoadView, window: u64) {
        if let Some(((most, most_load), (least, least_load))) = self.roster.extremes(view) {
            let gap = most_load - least_load;
            let total = self.traffic[most.index()].requests.rate(window);
            if most != least && gap > self.margin && total > 0 {
                let mut candidates = self.traffic[most.index()].hot;
                candidates.sort_by_key(|&(_, rate)| std::cmp::Reverse(rate));
                let share = |rate: u64| most_load * rate as f64 / total as f64;
                let mut budget = gap / 2.0;
                let mut moved = false;
                for &(tree, rate) in candidates.iter().filter(|(_, r)| *r > 0) {
                    if share(rate) <= budget && self.move_subtree(tree, most, least) {
                        budget -= share(rate);
                        moved = true;
                    }
                }
                if !moved {
                    let smallest = candidates.iter().rev().find(|(_, r)| *r > 0);
                    if let Some(&(tree, _)) = smallest.filter(|(_, r)| share(*r) < gap) {
                        self.move_subtree(tree, most, least);
                    }
                }
            }
        }
        for t in &mut self.traffic {
            t.hot = Default::default();
        }
    }

    /// Move `tree` from `from` to `to` if it is still placed on `from`.
    fn move_subtree(&mut self, tree: TargetKey, from: NodeId, to: NodeId) -> bool {
        match self.table.get_mut(tree) {
            Some(subtree) if subtree.node == from => {
                subtree.node = to;
                self.reassignments += 1;
                true
            }
            _ => false,
        }
    }
}

impl Policy for Hacc {
    fn name(&self) -> &'static str {
        "hacc"
    }

    fn pick(&mut self, target: &Target, view: &LoadView, now: Nanos) -> Option<NodeId> {
        let window = now / self.interval;
        if now >= self.next_rebalance {
            self.rebalance(view, window);
            self.next_rebalance = now.saturating_add(self.interval);
        }
        let tree = target.tree;
        let (node, rate) = match self.table.get_mut(tree) {
            Some(subtree) => (subtree.node, subtree.requests.hit(window)),
            None => {
                let (node, _) = self.roster.place(tree, view, self.t_low, self.t_high)?;
                let mut requests = WindowCount::default();
                let rate = requests.hit(window);
                self.table.insert(tree, Subtree { node, requests });
                (node, rate)
            }
        };
        let traffic = &mut self.traffic[node.index()];
        traffic.requests.hit(window);
        traffic.served(tree, rate);
        Some(node)
    }

    fn membership(&mut self, nodes: &[NodeState], _now: Nanos) {
        let lost = self.roster.update(nodes);
        let len = nodes.iter().map(|n| n.id.index() + 1).max().unwrap_or(0);
        if self.traffic.len() < len {
            self.traffic.resize(len, NodeTraffic::default());
        }
        if lost {
            let roster = &self.roster;
            self.table.retain(|_, subtree| roster.is_eligible(subtree.node));
            for (i, t) in self.traffic.iter_mut().enumerate() {
                if !roster.is_eligible(NodeId(i as u32)) {
                    *t = NodeTraffic::default();
                }
            }
        }
    }

    fn stats(&self) -> PolicyStats {
        PolicyStats {
            table_entries: self.table.len() as u64,
            reassignments: self.reassignments,
            replications: 0,
            evictions: self.table.evictions(),
        }
    }

    fn placement(&self, target: &Target) -> Vec<NodeId> {
        self.table.peek(target.tree).map(|s| s.node).into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PlacementMode;
    use crate::{ClassId, PolicyKind};

    const MS: Nanos = 1_000_000;

    /// HACC's Smart Router (one front-end, least loaded first choices).
    fn hacc(n: usize) -> Hacc {
        let spec =
            PolicySpec { placement: PlacementMode::PerRouter, ..PolicySpec::new(PolicyKind::Hacc) };
        let mut p = Hacc::from_spec(&spec);
        p.membership(&NodeState::uniform(n), 0);
        p
    }

    fn in_tree(key: u64, tree: u64) -> Target {
        Target { key: TargetKey(key), tree: TargetKey(tree), class: ClassId::DEFAULT }
    }

    fn loaded(loads: &[u32]) -> LoadView {
        let mut v = LoadView::new(loads.len());
        for (i, &l) in loads.iter().enumerate() {
            for _ in 0..l {
                v.started(NodeId(i as u32));
            }
        }
        v
    }

    #[test]
    fn new_subtrees_go_to_the_least_loaded_and_files_follow_their_subtree() {
        let mut p = hacc(3);
        let v = loaded(&[5, 0, 3]);
        assert_eq!(p.pick(&in_tree(1, 10), &v, 0), Some(NodeId(1)));
        let v = loaded(&[5, 9, 3]);
        assert_eq!(p.pick(&in_tree(2, 10), &v, MS), Some(NodeId(1)), "same subtree");
        assert_eq!(p.pick(&in_tree(3, 20), &v, MS), Some(NodeId(2)));
        assert_eq!(p.placement(&in_tree(4, 10)), vec![NodeId(1)]);
    }

    /// Places subtrees 1..=4 on node 0 with 4, 2, 1 and 1 requests.
    fn skewed() -> Hacc {
        let mut p = hacc(2);
        let v = loaded(&[0, 50]);
        for (tree, hits) in [(1, 4), (2, 2), (3, 1), (4, 1)] {
            for k in 0..hits {
                assert_eq!(p.pick(&in_tree(tree * 100 + k, tree), &v, MS), Some(NodeId(0)));
            }
        }
        p
    }

    #[test]
    fn offloads_the_hottest_subtree_that_fits_half_the_gap() {
        let mut p = skewed();
        // Gap 60 > margin 20. Shares of node 0's load 60: 30, 15, 7.5, 7.5; half the gap
        // is 30, so subtree 1 alone moves.
        let v = loaded(&[60, 0]);
        assert_eq!(p.pick(&in_tree(1, 1), &v, 300 * MS), Some(NodeId(1)));
        assert_eq!(p.pick(&in_tree(2, 2), &v, 301 * MS), Some(NodeId(0)));
        assert_eq!(p.stats().reassignments, 1);
        // At most one rebalance per interval.
        assert_eq!(p.pick(&in_tree(3, 3), &v, 302 * MS), Some(NodeId(0)));
        assert_eq!(p.stats().reassignments, 1);
    }

    #[test]
    fn moves_smaller_subtrees_when_the_hottest_would_overshoot() {
        let mut p = skewed();
        // Gap 30, half 15; shares of load 60: 30, 15, 7.5, 7.5: subtree 2 uses the budget.
        let v = loaded(&[60, 30]);
        p.pick(&in_tree(9, 9), &v, 300 * MS);
        assert_eq!(p.placement(&in_tree(0, 1)), vec![NodeId(0)]);
        assert_eq!(p.placement(&in_tree(0, 2)), vec![NodeId(1)]);
        assert_eq!(p.stats().reassignments, 1);
        // Nothing fits half the gap: the smallest subtree that still narrows it moves.
        let mut p = hacc(2);
        let v = loaded(&[0, 50]);
        for (tree, hits) in [(1, 3), (2, 2)] {
            for k in 0..hits {
                p.pick(&in_tree(k, tree), &v, MS);
            }
        }
        // Gap 25, half 12.5; shares of load 50: 30 and 20.
        let v = loaded(&[50, 25]);
        p.pick(&in_tree(9, 9), &v, 300 * MS);
        assert_eq!(p.placement(&in_tree(0, 1)), vec![NodeId(0)]);
        assert_eq!(p.placement(&in_tree(0, 2)), vec![NodeId(1)]);
    }

    #[test]
    fn stays_put_within_the_margin_and_never_moves_a_lone_hot_spot() {
        let mut p = skewed();
        let v = loaded(&[20, 0]);
        p.pick(&in_tree(9, 9), &v, 300 * MS);
        assert_eq!(p.stats().reassignments, 0, "gap 20 is not above the margin");
        let mut p = hacc(2);
        let v = loaded(&[0, 50]);
        for k in 0..5 {
            p.pick(&in_tree(k, 1), &v, MS);
        }
        let v = loaded(&[60, 0]);
        p.pick(&in_tree(1, 1), &v, 300 * MS);
        assert_eq!(p.stats().reassignments, 0, "one subtree carries the whole gap");
    }

    #[test]
    fn a_down_node_sheds_its_subtrees_and_can_take_new_ones_back() {
        let mut p = hacc(2);
        let v = loaded(&[0, 5]);
        p.pick(&in_tree(1, 1), &v, 0);
        let mut nodes = NodeState::uniform(2);
        nodes[0].up = false;
        p.membership(&nodes, MS);
        assert_eq!(p.stats().table_entries, 0);
        assert_eq!(p.pick(&in_tree(1, 1), &v, MS), Some(NodeId(1)));
        nodes[0].up = true;
        p.membership(&nodes, 2 * MS);
        assert_eq!(p.pick(&in_tree(2, 2), &v, 2 * MS), Some(NodeId(0)));
        p.membership(&[], 3 * MS);
        assert_eq!(p.pick(&in_tree(2, 2), &v, 3 * MS), None);
    }

    #[test]
    fn the_table_stays_within_its_cap() {
        let mut spec = PolicySpec::new(PolicyKind::Hacc);
        spec.table_cap = 3;
        let mut p = Hacc::from_spec(&spec);
        p.membership(&NodeState::uniform(2), 0);
        let v = LoadView::new(2);
        for k in 0..30 {
            p.pick(&in_tree(k, k), &v, k * MS);
        }
        let s = p.stats();
        assert_eq!((s.table_entries, s.evictions), (3, 27));
    }

    #[test]
    fn window_counts_roll_over() {
        let mut c = WindowCount::default();
        assert_eq!(c.hit(0), 1);
        assert_eq!(c.hit(0), 2);
        assert_eq!(c.hit(1), 3, "previous window still counts");
        assert_eq!(c.rate(2), 1);
        assert_eq!(c.hit(5), 1, "old windows are forgotten");
    }
}

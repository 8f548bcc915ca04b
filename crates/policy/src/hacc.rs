//! `hacc`: the policy of HACC's Smart Router (Zhang et al., USENIX Windows NT 1999), with
//! subtrees that split when they are too much for one node and merge when cold.
//!
//! HACC models the namespace as a tree and places subtrees rather than single files, so a
//! directory's documents share one node's memory. A subtree whose load is too large for
//! one node is split into its children, which are spread over the nodes; children that
//! have together gone cold merge back into their parent. The mapper offers each target's
//! subtrees coarsest first ([`crate::TreePath`]: the root, every enclosing directory, the
//! target itself); with a fixed tree depth it offers only one, and nothing splits.
//!
//! Load is requests, counted for every subtree a request passes through over a window
//! that halves every `spec.hacc_half_life` ([`Decayed`]), and compared with a node's fair
//! share of all requests ([`Roster::share`]: with shared placement its configured weight ×
//! reported cache capacity over everyone's, per router an equal share). On each request,
//! walking the target's subtrees from the root:
//! - a split subtree merges back, onto the node it had before it split, when its count
//!   falls below `hacc_merge` × that node's fair share;
//! - the placed subtree splits when its count exceeds `hacc_split` × its node's fair
//!   share (if it has children and is above `hacc_max_depth`); its children start on its
//!   node, so their copies stay where they are until the balance moves some;
//! - a node whose count exceeds `hacc_balance` × its fair share hands the subtree being
//!   requested to a node that stays within half that margin with it.
//!
//! Subtrees below the placed one are counted too, so a subtree that splits knows its
//! children's loads at once; a node's count is the sum of its subtrees' (a moved subtree
//! takes its count along), so a node never sheds more than it must. Split and merge
//! thresholds apart, and the balance's trigger and target apart, keep it from flapping.
//!
//! With [`crate::PlacementMode::Shared`] (the default) a new top subtree goes where every
//! router would put it ([`crate::home`]: a candidate by name that holds it, else the least
//! loaded of its candidates by the nodes' reports) and a moved subtree goes to its first
//! candidate with room, so routers that see alike traffic decide alike.
//! [`crate::PlacementMode::PerRouter`] takes HACC's least loaded node for both, and so does
//! shared placement while its router is alone in front of at most
//! [`crate::home::CANDIDATES`] nodes ([`crate::roster`]).
//!
//! A request costs one table lookup per level of its path (at most [`crate::TREE_LEVELS`]).
//! The table keeps at most `spec.table_cap` subtrees and evicts the least recently
//! requested; a child is requested after its parent, so it goes before its parent, and a
//! child whose parent was forgotten is placed afresh (split epochs never repeat).

use crate::decayed::Decayed;
use crate::roster::{least_of, overloaded, Roster};
use crate::table::TargetTable;
use crate::{
    LoadView, Nanos, NodeId, NodeState, PlacementMode, Policy, PolicySpec, PolicyStats, Target,
    TargetKey,
};

/// Fewer (decayed) requests than this are too few to call a subtree hot: a cold start
/// does not split everything down to single files on its first requests.
pub const MIN_SPLIT_REQUESTS: f64 = 8.0;

/// A child whose (decayed) count, this request included, is below this has no copies
/// worth staying for on its parent's node.
const MIN_HISTORY: f64 = 1.5;

/// How far above its bound a node's count must be, in standard deviations of a count of
/// its fair share (requests arrive about as a Poisson stream), before it sheds a subtree.
pub const NOISE_SIGMAS: f64 = 3.0;

/// A node that took fewer (decayed) requests than this sheds nothing: too few to tell
/// an imbalance from chance.
pub const MIN_BALANCE_REQUESTS: f64 = 128.0;

/// The parent epoch of top-level subtrees.
const ROOT: u64 = 0;

#[derive(Copy, Clone, Debug)]
struct Subtree {
    /// Requests through this subtree, placed, split or below a placed parent.
    count: Decayed,
    /// While placed: its node; while split: the node it had (where it merges back to).
    /// `None`: not placed since it was (re)made a child.
    node: Option<NodeId>,
    split: bool,
    /// This subtree's current split; its children remember it, so after a new split (or
    /// when this entry was forgotten and made again) they are placed afresh.
    epoch: u64,
    /// The parent's epoch when this subtree was placed under it.
    parent: u64,
}

pub struct Hacc {
    split: f64,
    merge: f64,
    balance: f64,
    max_depth: usize,
    half_life: Nanos,
    /// LARD's thresholds, for a new top subtree's node in shared placement.
    t_low: f64,
    t_high: f64,
    roster: Roster,
    table: TargetTable<Subtree>,
    /// Requests placed on each node (indexed by node id), and on all.
    nodes: Vec<Decayed>,
    total: Decayed,
    next_epoch: u64,
    reassignments: u64,
    splits: u64,
    merges: u64,
}

/// What one pick needs to weigh nodes: the roster, the view, the counts, the time.
struct Scales<'a> {
    roster: &'a Roster,
    view: &'a LoadView,
    nodes: &'a [Decayed],
    total: f64,
    now: Nanos,
    half_life: Nanos,
    /// LARD's thresholds: a subtree never moves to a node they call overloaded.
    t_low: f64,
    t_high: f64,
}

impl Scales<'_> {
    /// `node`'s fair share of the recent requests.
    fn fair(&self, node: NodeId) -> f64 {
        self.total * self.roster.share(node)
    }

    /// Requests recently placed on `node`.
    fn count(&self, node: NodeId) -> f64 {
        self.nodes.get(node.index()).map_or(0.0, |c| c.value(self.now, self.half_life))
    }

    /// Whether `node` would stay within `factor` × its fair share with `extra` more.
    fn fits(&self, node: NodeId, extra: f64, factor: f64) -> bool {
        self.count(node) + extra <= factor * self.fair(node)
    }

    /// Whether `node` is above `factor` × its fair share by more than chance would put it
    /// there ([`NOISE_SIGMAS`] standard deviations of a count that large), so routers
    /// that see alike traffic do not move subtrees on the noise of their few requests.
    fn overloaded(&self, node: NodeId, factor: f64) -> bool {
        let (count, fair) = (self.count(node), self.fair(node));
        count >= MIN_BALANCE_REQUESTS && count > factor * fair + NOISE_SIGMAS * fair.sqrt()
    }

    /// `node`'s count with `extra` more over its fair share (infinite with no share).
    fn relative(&self, node: NodeId, extra: f64) -> f64 {
        let fair = self.fair(node);
        if fair > 0.0 {
            (self.count(node) + extra) / fair
        } else {
            f64::INFINITY
        }
    }

    /// Where a subtree with `count` requests goes when it cannot stay: its first shared
    /// candidate that stays within `factor` with it, per router the node that would be
    /// least loaded relative to its share if that one fits.
    fn room(&self, key: TargetKey, count: f64, factor: f64, skip: NodeId) -> Option<NodeId> {
        let open = |least: f64| {
            move |n: &NodeId| {
                *n != skip
                    && self.roster.is_eligible(*n)
                    && !overloaded(self.view.load(*n), least, self.t_low, self.t_high)
            }
        };
        if let Some(candidates) = self.roster.candidates(key) {
            let candidates = candidates.as_slice().iter().copied();
            let least = least_of(candidates.clone(), self.view).map_or(0.0, |(_, load)| load);
            return candidates.filter(open(least)).find(|&n| self.fits(n, count, factor));
        }
        let eligible = self.roster.eligible().iter().copied();
        let least = least_of(eligible.clone(), self.view).map_or(0.0, |(_, load)| load);
        let least = eligible
            .filter(open(least))
            .min_by(|&a, &b| self.relative(a, count).total_cmp(&self.relative(b, count)))?;
        self.fits(least, count, factor).then_some(least)
    }
}

impl Hacc {
    pub fn from_spec(spec: &PolicySpec) -> Self {
        Hacc {
            split: spec.hacc_split,
            merge: spec.hacc_merge,
            balance: spec.hacc_balance,
            max_depth: spec.hacc_max_depth,
            half_life: spec.hacc_half_life,
            t_low: spec.t_low,
            t_high: spec.t_high,
            roster: Roster::new(spec.placement),
            table: TargetTable::new(spec.table_cap),
            nodes: Vec::new(),
            total: Decayed::default(),
            next_epoch: ROOT,
            reassignments: 0,
            splits: 0,
            merges: 0,
        }
    }

    fn scales<'a>(&'a self, view: &'a LoadView, total: f64, now: Nanos) -> Scales<'a> {
        Scales {
            roster: &self.roster,
            view,
            nodes: &self.nodes,
            total,
            now,
            half_life: self.half_life,
            t_low: self.t_low,
            t_high: self.t_high,
        }
    }

    fn fresh_epoch(&mut self) -> u64 {
        self.next_epoch += 1;
        self.next_epoch
    }

    /// The entry for `key`, made if new.
    fn entry(&mut self, key: TargetKey) -> &mut Subtree {
        if self.table.peek(key).is_none() {
            let epoch = self.fresh_epoch();
            let fresh = Subtree {
                count: Decayed::default(),
                node: None,
                split: false,
                epoch,
                parent: ROOT,
            };
            self.table.insert(key, fresh);
        }
        self.table.get_mut(key).expect("inserted above")
    }
}

impl Policy for Hacc {
    fn name(&self) -> &'static str {
        "hacc"
    }

    fn pick(&mut self, target: &Target, view: &LoadView, now: Nanos) -> Option<NodeId> {
        self.roster.sync(view);
        let half_life = self.half_life;
        let total = self.total.add(1.0, now, half_life);
        let single = [target.tree];
        let levels = match target.subtrees.levels() {
            [] => &single[..],
            levels => levels,
        };
        // (epoch, node) of the split subtree above the one being looked at.
        let mut parent: Option<(u64, Option<NodeId>)> = None;
        let mut placed: Option<NodeId> = None;
        for (depth, &key) in levels.iter().enumerate() {
            let finest = depth + 1 == levels.len() || depth >= self.max_depth;
            let mut s = *self.entry(key);
            let count = s.count.add(1.0, now, half_life);
            if placed.is_some() {
                // Below the placed subtree: only counted.
                self.table.get_mut(key).expect("entry above").count = s.count;
                continue;
            }
            let parent_epoch = parent.map_or(ROOT, |p| p.0);
            if s.parent != parent_epoch {
                s.parent = parent_epoch;
                s.node = None;
                s.split = false;
            }
            if s.split {
                let fair = s
                    .node
                    .filter(|&n| self.roster.is_eligible(n))
                    .map(|n| self.scales(view, total, now).fair(n));
                let cold = fair.is_some_and(|fair| count < self.merge * fair);
                if !finest && !cold {
                    parent = Some((s.epoch, s.node));
                    *self.table.get_mut(key).expect("entry above") = s;
                    continue;
                }
                s.split = false;
                self.merges += 1;
            }
            let mut node = match s.node.filter(|&n| self.roster.is_eligible(n)) {
                Some(n) => n,
                None => {
                    // A child requested before stays on its parent's node (where its
                    // copies are) while that node is within the balance; a child never
                    // requested, like a top subtree, goes where every router would put it.
                    let inherited = parent.and_then(|p| p.1).filter(|&n| {
                        count >= MIN_HISTORY
                            && self.roster.is_eligible(n)
                            && self.scales(view, total, now).fits(n, 0.0, self.balance)
                    });
                    match inherited {
                        Some(n) => n,
                        None => {
                            let n = self.roster.place(key, view, self.t_low, self.t_high)?.0;
                            // Its requests so far were counted on its parent's node.
                            if let Some(from) = parent.and_then(|p| p.1).filter(|&f| f != n) {
                                self.nodes[from.index()].add(1.0 - count, now, half_life);
                                self.nodes[n.index()].add(count - 1.0, now, half_life);
                            }
                            n
                        }
                    }
                }
            };
            let (hot, overloaded) = {
                let scales = self.scales(view, total, now);
                let hot = count >= MIN_SPLIT_REQUESTS && count > self.split * scales.fair(node);
                (hot, scales.overloaded(node, self.balance))
            };
            if !finest && hot {
                s.split = true;
                s.node = Some(node);
                s.epoch = self.fresh_epoch();
                self.splits += 1;
                parent = Some((s.epoch, s.node));
                *self.table.get_mut(key).expect("entry above") = s;
                continue;
            }
            if overloaded {
                let target_factor = (1.0 + self.balance) / 2.0;
                if let Some(to) =
                    self.scales(view, total, now).room(key, count, target_factor, node)
                {
                    self.nodes[node.index()].add(-count, now, half_life);
                    self.nodes[to.index()].add(count, now, half_life);
                    self.reassignments += 1;
                    node = to;
                }
            }
            s.node = Some(node);
            *self.table.get_mut(key).expect("entry above") = s;
            placed = Some(node);
        }
        let node = placed?;
        self.nodes[node.index()].add(1.0, now, half_life);
        Some(node)
    }

    fn membership(&mut self, nodes: &[NodeState], _now: Nanos) {
        let lost = self.roster.update(nodes);
        let len = nodes.iter().map(|n| n.id.index() + 1).max().unwrap_or(0);
        if self.nodes.len() < len {
            self.nodes.resize(len, Decayed::default());
        }
        if lost {
            let roster = &self.roster;
            self.table.retain(|_, s| {
                if s.node.is_some_and(|n| !roster.is_eligible(n)) {
                    s.node = None;
                }
                true
            });
            for (i, c) in self.nodes.iter_mut().enumerate() {
                if !roster.is_eligible(NodeId(i as u32)) {
                    *c = Decayed::default();
                }
            }
        }
    }

    fn placement_followed(&self) -> Option<PlacementMode> {
        Some(self.roster.mode())
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
        let mut parent = ROOT;
        for &key in target.subtrees.levels() {
            match self.table.peek(key) {
                Some(s) if s.parent == parent && s.split => parent = s.epoch,
                Some(s) if s.parent == parent => return s.node.into_iter().collect(),
                _ => return Vec::new(),
            }
        }
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ClassId, PlacementMode, PolicyKind, TreePath, SECOND};

    const MS: Nanos = 1_000_000;

    fn hacc_with(n: usize, placement: PlacementMode) -> Hacc {
        let spec = PolicySpec { placement, ..PolicySpec::new(PolicyKind::Hacc) };
        let mut p = Hacc::from_spec(&spec);
        p.membership(&NodeState::uniform(n), 0);
        p
    }

    /// File `file` of directory `/dir/` (subtrees: root, `/dir/`, the file).
    fn file(dir: u64, file: u64) -> Target {
        let key = TargetKey(dir * 1000 + file);
        let mut subtrees = TreePath::single(TargetKey(1));
        subtrees.push(TargetKey(dir));
        subtrees.push(key);
        Target { key, tree: TargetKey(dir), subtrees, class: ClassId::DEFAULT }
    }

    /// `rounds` passes over directories 10.. (each `files` files), 1 ms a request; the
    /// requests each node took.
    fn run(p: &mut Hacc, dirs: u64, files: u64, rounds: u64, start: Nanos) -> (Vec<u64>, Nanos) {
        let v = LoadView::new(p.nodes.len());
        let mut per_node = vec![0u64; p.nodes.len()];
        let mut now = start;
        for r in 0..rounds {
            for d in 0..dirs {
                let node = p.pick(&file(10 + d, r % files), &v, now).unwrap();
                per_node[node.index()] += 1;
                now += MS;
            }
        }
        (per_node, now)
    }

    fn imbalance(per_node: &[u64]) -> f64 {
        let max = *per_node.iter().max().unwrap() as f64;
        max / (per_node.iter().sum::<u64>() as f64 / per_node.len() as f64)
    }

    #[test]
    fn the_root_splits_and_its_directories_spread_evenly() {
        for placement in [PlacementMode::Shared, PlacementMode::PerRouter] {
            let mut p = hacc_with(4, placement);
            let (_, now) = run(&mut p, 24, 10, 500, 0);
            let (per_node, _) = run(&mut p, 24, 10, 500, now);
            assert!(imbalance(&per_node) <= 1.3, "{placement:?}: {per_node:?}");
            assert!(p.splits >= 1 && p.merges == 0, "{placement:?}: {} {}", p.splits, p.merges);
            // Directories are cold enough not to split: a directory's files share a node.
            let on = |f| p.placement(&file(10, f));
            assert_eq!(on(0).len(), 1);
            assert!((1..10).all(|f| on(f) == on(0)), "{placement:?}");
        }
    }

    #[test]
    fn a_fixed_subtree_never_splits() {
        let mut p = hacc_with(4, PlacementMode::Shared);
        let v = LoadView::new(4);
        let one = |k| Target::new(TargetKey(k), TargetKey(7), ClassId::DEFAULT);
        let first = p.pick(&one(1), &v, 0);
        for k in 0..2000 {
            assert_eq!(p.pick(&one(k), &v, k * MS), first);
        }
        assert_eq!((p.splits, p.reassignments), (0, 0));
    }

    #[test]
    fn a_hot_directory_splits_into_its_files_and_merges_back_when_cold() {
        let mut p = hacc_with(4, PlacementMode::PerRouter);
        let v = LoadView::new(4);
        // One directory takes everything: root and directory split, its files spread.
        let mut now = 0;
        let mut per_node = [0u64; 4];
        for i in 0..4000 {
            let n = p.pick(&file(10, i % 40), &v, now).unwrap();
            if i >= 2000 {
                per_node[n.index()] += 1;
            }
            now += MS;
        }
        assert!(imbalance(&per_node) <= 1.3, "{per_node:?}");
        let splits = p.splits;
        assert!(splits >= 2, "{splits}");
        // Then the traffic moves to many other directories: directory 10 goes cold and,
        // when next requested, merges back into one subtree on one node.
        let v2 = v.clone();
        let mut now = now + SECOND;
        for i in 0..16_000 {
            p.pick(&file(100 + i % 40, i % 5), &v2, now);
            now += MS;
        }
        assert_eq!(p.merges, 0, "not requested yet, so not merged yet");
        p.pick(&file(10, 0), &v, now);
        assert_eq!(p.merges, 1);
        let on = p.placement(&file(10, 0));
        assert!((1..40).all(|f| p.placement(&file(10, f)) == on));
    }

    #[test]
    fn an_overloaded_node_sheds_what_fits_elsewhere_and_no_more() {
        let mut p = hacc_with(2, PlacementMode::PerRouter);
        let v = LoadView::new(2);
        // Eight fixed subtrees, placed alternately.
        let tree = |t: u64| Target::new(TargetKey(t), TargetKey(t), ClassId::DEFAULT);
        let mut now = 0;
        for i in 0..800 {
            p.pick(&tree(i % 8), &v, now);
            now += MS;
        }
        assert_eq!(p.reassignments, 0, "balanced as placed");
        let on_0: Vec<u64> = (0..8).filter(|&t| p.placement(&tree(t)) == vec![NodeId(0)]).collect();
        assert_eq!(on_0.len(), 4);
        // Then only node 0's subtrees are requested: it sheds them until both nodes are
        // within the balance, and then it stops.
        let mut per_node = [0u64; 2];
        for i in 0..8000 {
            let n = p.pick(&tree(on_0[i % 4]), &v, now).unwrap();
            if i >= 4000 {
                per_node[n.index()] += 1;
            }
            now += MS;
        }
        assert!(imbalance(&per_node) <= 1.25, "{per_node:?}");
        assert!((1..=3).contains(&p.reassignments), "{}", p.reassignments);
    }

    #[test]
    fn a_down_node_loses_its_subtrees_and_they_find_another() {
        let mut p = hacc_with(2, PlacementMode::Shared);
        let v = LoadView::new(2);
        let (_, now) = run(&mut p, 8, 4, 200, 0);
        let mut nodes = NodeState::uniform(2);
        nodes[0].up = false;
        p.membership(&nodes, now);
        for d in 0..8 {
            assert_eq!(p.pick(&file(10 + d, 0), &v, now), Some(NodeId(1)));
        }
        p.membership(&[], now);
        assert_eq!(p.pick(&file(10, 0), &v, now), None);
    }

    #[test]
    fn the_table_stays_within_its_cap() {
        let mut spec = PolicySpec::new(PolicyKind::Hacc);
        spec.table_cap = 5;
        let mut p = Hacc::from_spec(&spec);
        p.membership(&NodeState::uniform(2), 0);
        let v = LoadView::new(2);
        for k in 0..300 {
            assert!(p.pick(&file(10 + k % 30, k), &v, k * MS).is_some());
        }
        let s = p.stats();
        assert_eq!(s.table_entries, 5);
        assert!(s.evictions > 0);
    }
}

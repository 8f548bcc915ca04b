//! Membership as the placement policies keep it, and least-loaded selection over it.
//!
//! The placement policies drop every placement on a node the moment it stops being
//! eligible (down, left, weight 0), so a node that comes back starts empty and takes new
//! targets like any other. [`Roster::update`] says when that is needed, so a caller that
//! repeats an unchanged node list does not pay a walk over its table.
//!
//! It also answers where a target goes that the policy has not placed
//! ([`Roster::place`]) and where an overloaded one spills ([`Roster::spill`]): alike on
//! every router ([`PlacementMode::Shared`], by [`crate::home`]) or by this router's own
//! view of the load ([`PlacementMode::PerRouter`]).
//!
//! **A router alone.** Shared placement exists so that many routers agree. When the nodes
//! report that exactly one router polls them ([`LoadView::routers`]), there are no more
//! eligible nodes than a target has candidates ([`CANDIDATES`]) and they all weigh the same
//! (equal configured weights and reported caches, none warming up), there is no one to
//! agree with and the power of d choices would sample the whole cluster anyway: the pick
//! follows [`PlacementMode::PerRouter`], LARD's own rule on this router's exact counts,
//! decision for decision ([`Roster::mode`], set by [`Roster::sync`] at the start of every
//! pick). Shared rules driven by reports and ring order are not LARD's rule even then (they
//! read reports, break ties by ring order, count bytes of misses), and on heavy-tailed logs
//! any rule that is not LARD's own moves a single point by several percent either way.
//! Above [`CANDIDATES`] nodes nothing changes: the per-router rule scans every node
//! (O(nodes)) and must not run at scale. Nodes of unequal weight keep the shared rule,
//! which gives each new targets in proportion to its cache where LARD spreads them evenly.
//! This holds for [`PlacementMode::SharedEqual`] too, whose weights leave capacities out.
//! With 0 routers reported (nodes that do not say, or no report yet) or 2 and more, shared
//! placement stays. A second router appearing reshuffles nothing: what this router placed
//! alone stays where it is, and the shared rule's holders-first step finds those copies for
//! new choices.

use crate::candidate_memo::CandidateMemo;
use crate::home::{Candidates, Capacity, Homes, CANDIDATES};
use crate::{LoadView, NodeId, NodeState, PlacementMode, TargetKey};

/// The eligible nodes.
#[derive(Clone, Debug, Default)]
pub struct Roster {
    /// Eligible nodes in id order: the scan order of least-loaded selection.
    eligible: Vec<NodeId>,
    /// Indexed by node id.
    live: Vec<bool>,
    /// Where the next least-loaded scan starts, so ties rotate over the nodes instead of
    /// piling every new target of a cold cluster onto the first node.
    cursor: usize,
    /// The placement configured.
    configured: PlacementMode,
    /// The placement this pick follows ([`Roster::sync`]): `configured`, or
    /// [`PlacementMode::PerRouter`] for a shared placement whose router is alone.
    mode: PlacementMode,
    /// The shared first choices (kept when placement is shared only).
    homes: Homes,
    /// Bumped whenever the shared first choices' membership changes.
    generation: u64,
    /// Candidates of the targets that spill and of hot targets, per ring.
    memo: CandidateMemo,
}

impl Roster {
    pub fn new(mode: PlacementMode) -> Roster {
        let capacity = match mode {
            PlacementMode::SharedEqual => Capacity::Ignored,
            PlacementMode::Shared | PlacementMode::PerRouter => Capacity::Weighed,
        };
        Roster { configured: mode, mode, homes: Homes::new(capacity), ..Roster::default() }
    }

    /// The placement the current pick follows: the configured one, but
    /// [`PlacementMode::PerRouter`] for a shared one while this router is alone in front of
    /// at most [`CANDIDATES`] nodes (see the module's doc).
    pub fn mode(&self) -> PlacementMode {
        self.mode
    }

    /// Whether a router that places shared with `view` is alone in front of few enough
    /// nodes that LARD's own rule is the shared rule's ideal: the nodes report exactly one
    /// router, every eligible node is a candidate of every target, and they all weigh the
    /// same (LARD knows no weights). O(1), after the candidates' sync.
    fn alone(&self, view: &LoadView) -> bool {
        view.routers() == 1 && self.eligible.len() <= CANDIDATES && self.homes.even()
    }

    /// Where a target this policy has not placed goes: in [`PlacementMode::Shared`] its
    /// first candidate that holds it and that LARD would not call overloaded against the
    /// least loaded candidate, else the least loaded candidate ([`Homes::choose`]: the
    /// power of d choices); per router, the least loaded node.
    ///
    /// A holder is tested with LARD's own overload rule, not a plain bound: routers see
    /// loads at different moments, and a bound that the cluster's ordinary load crosses
    /// now and then would send one target to different nodes from different routers.
    /// LARD's rule fires only on real imbalance (a candidate below T_low) or real overload
    /// (2·T_high).
    pub fn place(
        &mut self,
        key: TargetKey,
        view: &LoadView,
        t_low: f64,
        t_high: f64,
    ) -> Option<(NodeId, f64)> {
        match self.mode {
            PlacementMode::Shared | PlacementMode::SharedEqual => {
                let room = |load: f64, least: f64| !overloaded(load, least, t_low, t_high);
                self.homes.choose(key, view, room, |_| false)
            }
            PlacementMode::PerRouter => self.least_loaded(view),
        }
    }

    /// Where `key` belongs now when placement is shared: its first candidate that LARD
    /// would not call overloaded against the least loaded candidate, whatever holds a copy
    /// (`None` per router, or with no eligible node). A placement made before the
    /// candidates changed (a node joined or came back, a capacity or warmth changed:
    /// [`Roster::epoch`]) moves there, so a node that joins takes its share of the targets
    /// already placed, not only of new ones.
    pub fn home(&self, key: TargetKey, view: &LoadView, t_low: f64, t_high: f64) -> Option<NodeId> {
        if !self.mode.is_shared() {
            return None;
        }
        let room = |load: f64, least: f64| !overloaded(load, least, t_low, t_high);
        self.homes.first_fit(key, view, room)
    }

    /// `key`'s candidates in the order every router computes ([`Homes::candidates`]),
    /// best first; `None` per router, where no such order is kept.
    pub fn candidates(&self, key: TargetKey) -> Option<Candidates> {
        self.mode.is_shared().then(|| self.homes.candidates(key))
    }

    /// Settle the rule this pick follows ([`Roster::mode`]) and bring the shared
    /// candidates up to date with the capacities and warmths `view` reports (O(1) unless
    /// they changed): the first step of every pick. The candidates are kept while a
    /// router is alone, so they are ready the moment a second router appears.
    pub fn sync(&mut self, view: &LoadView) {
        if self.configured.is_shared() {
            self.homes.sync(view);
            self.mode = match self.alone(view) {
                true => PlacementMode::PerRouter,
                false => self.configured,
            };
        }
    }

    /// The least loaded node to compare a node's load with (LARD's "∃ node: load <
    /// T_low"): the least loaded of `key`'s candidates when placement is shared (a sample
    /// of d, O(d)), the least loaded eligible node per router (O(nodes), the paper's rule).
    pub fn least_for(&mut self, key: TargetKey, view: &LoadView) -> Option<(NodeId, f64)> {
        match self.mode.is_shared() {
            true => least_of(self.remembered(key).as_slice().iter().copied(), view),
            false => self.least_loaded(view),
        }
    }

    /// `key`'s candidates ([`Homes::candidates`]), from the memo when this ring has
    /// answered for it before: for targets asked about on many requests.
    fn remembered(&mut self, key: TargetKey) -> Candidates {
        let homes = &self.homes;
        self.memo.get(key, homes.ring_version(), || homes.candidates(key))
    }

    /// Changes so far to what shared first choices depend on (membership and weights
    /// here, capacities and warmths in the view): a placement made at another epoch is
    /// checked against [`Roster::home`] again.
    pub fn epoch(&self, view: &LoadView) -> u64 {
        self.generation.wrapping_add(view.shares_epoch())
    }

    /// Where load of an overloaded target goes, never to a node `skip` names: in
    /// [`PlacementMode::Shared`] the first candidate below `holder_below` that already
    /// holds a copy, else the least loaded candidate; per router the least loaded node, as
    /// LARD does.
    pub fn spill(
        &mut self,
        key: TargetKey,
        view: &LoadView,
        holder_below: f64,
        skip: impl Fn(NodeId) -> bool,
    ) -> Option<(NodeId, f64)> {
        match self.mode {
            PlacementMode::Shared | PlacementMode::SharedEqual => {
                let room = |load: f64, _least: f64| load < holder_below;
                let candidates = self.remembered(key);
                self.homes.choose_among(&candidates, key, view, room, skip)
            }
            PlacementMode::PerRouter => self.least_loaded(view),
        }
    }

    /// Take the current node list. Returns true when some node stopped being eligible,
    /// i.e. when placements on it must be dropped.
    pub fn update(&mut self, nodes: &[NodeState]) -> bool {
        let len = nodes.iter().map(|n| n.id.index() + 1).max().unwrap_or(0).max(self.live.len());
        let mut live = vec![false; len];
        for n in nodes.iter().filter(|n| n.eligible()) {
            live[n.id.index()] = true;
        }
        let lost = self.live.iter().zip(&live).any(|(was, is)| *was && !*is);
        if self.configured.is_shared() && self.homes.rebuild(nodes) {
            self.generation += 1;
        }
        self.live = live;
        self.eligible = (0..len).filter(|&i| self.live[i]).map(|i| NodeId(i as u32)).collect();
        lost
    }

    /// `node`'s fair share of the load: with shared placement its share of the weights the
    /// first choices follow ([`Homes::share`]), per router an equal share; 0 when it is
    /// not eligible.
    pub fn share(&self, node: NodeId) -> f64 {
        match self.mode {
            _ if !self.is_eligible(node) => 0.0,
            PlacementMode::Shared | PlacementMode::SharedEqual => self.homes.share(node),
            PlacementMode::PerRouter => 1.0 / self.eligible.len() as f64,
        }
    }

    /// Eligible nodes in id order.
    pub fn eligible(&self) -> &[NodeId] {
        &self.eligible
    }

    pub fn is_eligible(&self, node: NodeId) -> bool {
        self.live.get(node.index()).copied().unwrap_or(false)
    }

    /// The least-loaded eligible node and its load, or `None` when no node is eligible.
    /// Ties go to the first node at or after a cursor that advances on every call.
    pub fn least_loaded(&mut self, view: &LoadView) -> Option<(NodeId, f64)> {
        if self.eligible.is_empty() {
            return None;
        }
        let start = self.cursor % self.eligible.len();
        self.cursor = start + 1;
        let (tail, head) = (&self.eligible[start..], &self.eligible[..start]);
        least_of(tail.iter().chain(head).copied(), view)
    }

    /// The most and the least loaded eligible nodes with their loads (ties: lowest id).
    pub fn extremes(&self, view: &LoadView) -> Option<((NodeId, f64), (NodeId, f64))> {
        let least = least_of(self.eligible.iter().copied(), view)?;
        let most = most_of(self.eligible.iter().copied(), view)?;
        Some((most, least))
    }
}

/// The first node of least load among `nodes`.
pub fn least_of(nodes: impl Iterator<Item = NodeId>, view: &LoadView) -> Option<(NodeId, f64)> {
    extreme_of(nodes, view, |load, best| load < best)
}

/// The first node of greatest load among `nodes`.
pub fn most_of(nodes: impl Iterator<Item = NodeId>, view: &LoadView) -> Option<(NodeId, f64)> {
    extreme_of(nodes, view, |load, best| load > best)
}

fn extreme_of(
    nodes: impl Iterator<Item = NodeId>,
    view: &LoadView,
    better: impl Fn(f64, f64) -> bool,
) -> Option<(NodeId, f64)> {
    let mut best: Option<(NodeId, f64)> = None;
    for node in nodes {
        let load = view.load(node);
        match best {
            Some((_, b)) if !better(load, b) => {}
            _ => best = Some((node, load)),
        }
    }
    best
}

/// LARD's test for moving work off a node of load `load` when the least-loaded node has
/// `least`: it is above T_high while some node is below T_low, or it is at 2·T_high.
pub fn overloaded(load: f64, least: f64, t_low: f64, t_high: f64) -> bool {
    (load > t_high && least < t_low) || load >= 2.0 * t_high
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_rotate_and_the_least_loaded_wins() {
        let mut r = Roster::default();
        r.update(&NodeState::uniform(3));
        let mut v = LoadView::new(3);
        let firsts: Vec<u32> = (0..4).map(|_| r.least_loaded(&v).unwrap().0 .0).collect();
        assert_eq!(firsts, vec![0, 1, 2, 0]);
        v.started(NodeId(0));
        v.started(NodeId(2));
        for _ in 0..3 {
            assert_eq!(r.least_loaded(&v).unwrap().0, NodeId(1));
        }
        assert_eq!(r.extremes(&v).unwrap(), ((NodeId(0), 1.0), (NodeId(1), 0.0)));
    }

    #[test]
    fn update_reports_lost_nodes_only() {
        let mut r = Roster::default();
        let mut nodes = NodeState::uniform(2);
        assert!(!r.update(&nodes));
        assert!(!r.update(&nodes), "an unchanged list loses nothing");
        nodes[1].up = false;
        assert!(r.update(&nodes));
        assert_eq!(r.eligible(), &[NodeId(0)]);
        nodes[1].up = true;
        assert!(!r.update(&nodes), "a node coming back loses nothing");
        assert!(r.is_eligible(NodeId(1)));
        assert!(r.update(&nodes[..1]), "left");
        assert!(!r.is_eligible(NodeId(1)));
        nodes[0].weight = 0;
        assert!(r.update(&nodes[..1]), "drained");
        assert_eq!(r.least_loaded(&LoadView::new(2)), None);
    }

    #[test]
    fn overload_has_both_lard_conditions() {
        assert!(!overloaded(60.0, 10.0, 25.0, 65.0));
        assert!(overloaded(66.0, 10.0, 25.0, 65.0));
        assert!(!overloaded(66.0, 30.0, 25.0, 65.0));
        assert!(overloaded(130.0, 30.0, 25.0, 65.0));
    }
}

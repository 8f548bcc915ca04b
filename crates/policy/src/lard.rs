//! `lard`: Locality-Aware Request Distribution (Pai et al., ASPLOS 1998).
//!
//! Each target is served by one node, so its data is cached in one memory only and the
//! cluster's memories add up. A target moves only when its node is overloaded: above
//! T_high while some node is below T_low (an imbalance worth a cold cache), or at
//! 2·T_high whatever the others (the node is past its useful load):
//!
//! ```text
//! if server[target] is null (or left): server[target] ← least loaded node
//! elif (server.load > T_high and ∃ node: load < T_low) or server.load ≥ 2·T_high:
//!     server[target] ← least loaded node
//! ```
//!
//! "Least loaded node" is LARD's single front-end. With [`crate::PlacementMode::Shared`] (the
//! default) it is the least loaded of the target's d candidates on a ring of node names,
//! unless one of them reports holding it ([`crate::home`]), for a new target and for an
//! overloaded one alike, so many routers keep one placement;
//! [`crate::PlacementMode::PerRouter`] keeps the paper's rule, for comparison. A router
//! alone in front of at most [`crate::home::CANDIDATES`] nodes follows the paper's rule
//! with shared placement too: there is no one to agree with ([`crate::roster`]).
//!
//! A known target below T_high costs one table lookup; new targets and targets on a node
//! above T_high cost O(d) when placement is shared, an O(n) scan per router.

use crate::roster::{overloaded, Roster};
use crate::table::TargetTable;
use crate::{
    LoadView, Nanos, NodeId, NodeState, PlacementMode, Policy, PolicySpec, PolicyStats, Target,
};

/// Where a target is served and the shared-choice epoch it was last checked at.
struct Placed {
    node: NodeId,
    epoch: u64,
}

pub struct Lard {
    t_low: f64,
    t_high: f64,
    roster: Roster,
    table: TargetTable<Placed>,
    reassignments: u64,
}

impl Lard {
    pub fn from_spec(spec: &PolicySpec) -> Self {
        Lard {
            t_low: spec.t_low,
            t_high: spec.t_high,
            roster: Roster::new(spec.placement),
            table: TargetTable::new(spec.table_cap),
            reassignments: 0,
        }
    }
}

impl Policy for Lard {
    fn name(&self) -> &'static str {
        "lard"
    }

    fn pick(&mut self, target: &Target, view: &LoadView, _now: Nanos) -> Option<NodeId> {
        self.roster.sync(view);
        let epoch = self.roster.epoch(view);
        let Some(placed) = self.table.get_mut(target.key) else {
            let (node, _) = self.roster.place(target.key, view, self.t_low, self.t_high)?;
            self.table.insert(target.key, Placed { node, epoch });
            return Some(node);
        };
        if placed.epoch != epoch {
            // The shared first choices changed since (a node joined or came back, or a
            // capacity or warmth changed): the target goes where it now belongs.
            placed.epoch = epoch;
            let home = self.roster.home(target.key, view, self.t_low, self.t_high);
            if let Some(home) = home.filter(|&h| h != placed.node) {
                placed.node = home;
                self.reassignments += 1;
            }
        }
        let server = &mut placed.node;
        let load = view.load(*server);
        // Overload needs load > T_high (2·T_high > T_high as T_high > T_low ≥ 0).
        if load <= self.t_high {
            return Some(*server);
        }
        // Where it would go: a candidate below T_low holding a copy, else the least
        // loaded candidate, when placement is shared; the least loaded node per router.
        let current = *server;
        let Some((next, next_load)) =
            self.roster.spill(target.key, view, self.t_low, |n| n == current)
        else {
            return Some(current);
        };
        if next != current && overloaded(load, next_load, self.t_low, self.t_high) {
            *server = next;
            self.reassignments += 1;
        }
        Some(*server)
    }

    fn upcoming(&self, target: &Target, touch: &mut dyn FnMut(*const u8, usize)) {
        self.table.upcoming(target.key, touch);
    }

    fn membership(&mut self, nodes: &[NodeState], _now: Nanos) {
        if self.roster.update(nodes) {
            let roster = &self.roster;
            self.table.retain(|_, placed| roster.is_eligible(placed.node));
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
        self.table.peek(target.key).map(|p| p.node).into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PlacementMode;
    use crate::PolicyKind;

    /// The paper's LARD (one front-end, least loaded first choices).
    fn lard(n: usize) -> Lard {
        let spec =
            PolicySpec { placement: PlacementMode::PerRouter, ..PolicySpec::new(PolicyKind::Lard) };
        let mut p = Lard::from_spec(&spec);
        p.membership(&NodeState::uniform(n), 0);
        p
    }

    fn load(view: &mut LoadView, node: u32, requests: u32) {
        for _ in 0..requests {
            view.started(NodeId(node));
        }
    }

    #[test]
    fn new_targets_spread_over_a_cold_cluster() {
        let mut p = lard(4);
        let v = LoadView::new(4);
        let mut nodes: Vec<u32> =
            (0..4).map(|k| p.pick(&Target::from_key(k), &v, 0).unwrap().0).collect();
        nodes.sort();
        assert_eq!(nodes, vec![0, 1, 2, 3]);
    }

    #[test]
    fn a_target_stays_below_the_thresholds() {
        let mut p = lard(2);
        let mut v = LoadView::new(2);
        let t = Target::from_key(7);
        let home = p.pick(&t, &v, 0).unwrap();
        load(&mut v, home.0, 65);
        assert_eq!(p.pick(&t, &v, 0), Some(home), "at T_high, not above");
        load(&mut v, 1 - home.0, 30);
        load(&mut v, home.0, 1);
        assert_eq!(p.pick(&t, &v, 0), Some(home), "above T_high but nobody below T_low");
        assert_eq!(p.stats().reassignments, 0);
        assert_eq!(p.placement(&t), vec![home]);
    }

    #[test]
    fn moves_above_t_high_when_a_node_is_below_t_low() {
        let mut p = lard(2);
        let mut v = LoadView::new(2);
        let t = Target::from_key(7);
        let home = p.pick(&t, &v, 0).unwrap();
        load(&mut v, home.0, 66);
        load(&mut v, 1 - home.0, 24);
        let other = NodeId(1 - home.0);
        assert_eq!(p.pick(&t, &v, 0), Some(other));
        assert_eq!(p.pick(&t, &v, 0), Some(other), "and stays there");
        assert_eq!(p.stats().reassignments, 1);
        assert_eq!(p.placement(&t), vec![other]);
    }

    #[test]
    fn moves_at_twice_t_high_whatever_the_others() {
        let mut p = lard(2);
        let mut v = LoadView::new(2);
        let t = Target::from_key(7);
        let home = p.pick(&t, &v, 0).unwrap();
        load(&mut v, home.0, 130);
        load(&mut v, 1 - home.0, 100);
        assert_eq!(p.pick(&t, &v, 0), Some(NodeId(1 - home.0)));
        assert_eq!(p.stats().reassignments, 1);
    }

    #[test]
    fn a_down_node_sheds_its_targets_and_can_take_new_ones_back() {
        let mut p = lard(2);
        let v = LoadView::new(2);
        let targets: Vec<Target> = (0..6).map(Target::from_key).collect();
        for t in &targets {
            p.pick(t, &v, 0);
        }
        let mut nodes = NodeState::uniform(2);
        nodes[0].up = false;
        p.membership(&nodes, 1);
        assert_eq!(p.stats().table_entries, 3, "node 0's targets are dropped");
        for t in &targets {
            assert_eq!(p.pick(t, &v, 1), Some(NodeId(1)));
        }
        nodes[0].up = true;
        p.membership(&nodes, 2);
        let back = (100..102).filter(|&k| p.pick(&Target::from_key(k), &v, 2) == Some(NodeId(0)));
        assert_eq!(back.count(), 1, "new targets go to the returning node too");
        p.membership(&[], 3);
        assert_eq!(p.pick(&targets[0], &v, 3), None);
        assert_eq!(p.stats().table_entries, 0);
    }

    #[test]
    fn the_table_stays_within_its_cap() {
        let mut spec = PolicySpec::new(PolicyKind::Lard);
        spec.placement = PlacementMode::PerRouter;
        spec.table_cap = 8;
        let mut p = Lard::from_spec(&spec);
        p.membership(&NodeState::uniform(3), 0);
        let v = LoadView::new(3);
        for k in 0..100 {
            p.pick(&Target::from_key(k), &v, 0);
        }
        let s = p.stats();
        assert_eq!((s.table_entries, s.evictions), (8, 92));
    }
}

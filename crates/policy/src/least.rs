//! `least`: the least-loaded eligible node by [`crate::LoadView::load`].
//!
//! Ties rotate as in [`Roster::least_loaded`]: a cold cluster (all loads 0) or one whose
//! load is only reported every 200 ms (equal readings between polls) is spread round
//! robin instead of piling onto node 0. A pick is O(log nodes) plus the loads that changed
//! since the last ([`LeastIndex`]), and allocation-free.

use crate::least_index::LeastIndex;
use crate::roster::Roster;
use crate::{LoadView, Nanos, NodeId, NodeState, Policy, PolicySpec, Target};

#[derive(Clone, Debug, Default)]
pub struct LeastLoaded {
    roster: Roster,
    index: LeastIndex,
    /// The position in the eligible nodes where the next tie-break starts.
    cursor: usize,
}

impl LeastLoaded {
    pub fn from_spec(_spec: &PolicySpec) -> Self {
        LeastLoaded::default()
    }
}

impl Policy for LeastLoaded {
    fn name(&self) -> &'static str {
        "least"
    }

    fn pick(&mut self, _target: &Target, view: &LoadView, _now: Nanos) -> Option<NodeId> {
        let eligible = self.roster.eligible();
        if eligible.is_empty() {
            return None;
        }
        let start = self.cursor % eligible.len();
        self.cursor = start + 1;
        self.index.least(view, eligible[start]).map(|(node, _)| node)
    }

    fn membership(&mut self, nodes: &[NodeState], _now: Nanos) {
        self.roster.update(nodes);
        self.index.set_eligible(self.roster.eligible());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PolicyKind;

    fn policy(nodes: &[NodeState]) -> LeastLoaded {
        let mut p = LeastLoaded::from_spec(&PolicySpec::new(PolicyKind::Least));
        p.membership(nodes, 0);
        p
    }

    #[test]
    fn picks_the_minimum() {
        let mut p = policy(&NodeState::uniform(3));
        let mut v = LoadView::new(3);
        for (node, load) in [(0, 3), (1, 1), (2, 2)] {
            (0..load).for_each(|_| v.started(NodeId(node)));
        }
        let t = Target::from_key(0);
        for _ in 0..5 {
            assert_eq!(p.pick(&t, &v, 0), Some(NodeId(1)));
        }
    }

    #[test]
    fn ties_rotate_on_a_cold_cluster() {
        let mut p = policy(&NodeState::uniform(4));
        let v = LoadView::new(4);
        let t = Target::from_key(0);
        let picks: Vec<u32> = (0..8).map(|_| p.pick(&t, &v, 0).unwrap().0).collect();
        assert_eq!(picks, [0, 1, 2, 3, 0, 1, 2, 3]);
    }

    #[test]
    fn never_picks_down_or_weightless_nodes() {
        let mut nodes = NodeState::uniform(3);
        nodes[0].up = false;
        nodes[1].weight = 0;
        let mut p = policy(&nodes);
        let mut v = LoadView::new(3);
        (0..9).for_each(|_| v.started(NodeId(2)));
        assert_eq!(p.pick(&Target::from_key(0), &v, 0), Some(NodeId(2)));
        p.membership(&[], 0);
        assert_eq!(p.pick(&Target::from_key(0), &v, 0), None);
    }
}

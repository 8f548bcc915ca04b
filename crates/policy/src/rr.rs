//! `rr`: round robin over the eligible nodes, the "IP sprayer" baseline every paper beats.

use crate::{LoadView, Nanos, NodeId, NodeState, Policy, PolicySpec, Target};

#[derive(Debug, Default)]
pub struct RoundRobin {
    eligible: Vec<NodeId>,
    next: usize,
}

impl RoundRobin {
    pub fn from_spec(_spec: &PolicySpec) -> Self {
        RoundRobin::default()
    }
}

impl Policy for RoundRobin {
    fn name(&self) -> &'static str {
        "rr"
    }

    fn pick(&mut self, _target: &Target, _view: &LoadView, _now: Nanos) -> Option<NodeId> {
        if self.eligible.is_empty() {
            return None;
        }
        let node = self.eligible[self.next % self.eligible.len()];
        self.next = (self.next + 1) % self.eligible.len();
        Some(node)
    }

    fn membership(&mut self, nodes: &[NodeState], _now: Nanos) {
        self.eligible = nodes.iter().filter(|n| n.eligible()).map(|n| n.id).collect();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PolicyKind;

    #[test]
    fn cycles_over_up_nodes_only() {
        let mut p = RoundRobin::from_spec(&PolicySpec::new(PolicyKind::Rr));
        let mut nodes = NodeState::uniform(3);
        nodes[1].up = false;
        p.membership(&nodes, 0);
        let v = LoadView::new(3);
        let t = Target::from_key(1);
        let picks: Vec<_> = (0..4).map(|_| p.pick(&t, &v, 0).unwrap().0).collect();
        assert_eq!(picks, vec![0, 2, 0, 2]);
        p.membership(&[], 0);
        assert_eq!(p.pick(&t, &v, 0), None);
    }
}

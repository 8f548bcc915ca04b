//! `hash`: consistent hashing on a ring with virtual nodes, the stateless locality
//! baseline. Every router computes the same placement with no shared state, and a node
//! joining or leaving moves only its share of targets; load is ignored entirely (that is
//! what `bounded` adds).

use crate::ring::{HashRing, RingConfig};
use crate::{LoadView, Nanos, NodeId, NodeState, Policy, PolicySpec, Target};

#[derive(Clone, Debug)]
pub struct ConsistentHash {
    ring: HashRing,
}

impl ConsistentHash {
    pub fn from_spec(_spec: &PolicySpec) -> Self {
        ConsistentHash::new(RingConfig::default())
    }

    pub fn new(ring: RingConfig) -> Self {
        ConsistentHash { ring: HashRing::new(ring) }
    }
}

impl Policy for ConsistentHash {
    fn name(&self) -> &'static str {
        "hash"
    }

    fn pick(&mut self, target: &Target, _view: &LoadView, _now: Nanos) -> Option<NodeId> {
        self.ring.primary(target.key)
    }

    fn membership(&mut self, nodes: &[NodeState], _now: Nanos) {
        self.ring.rebuild(nodes);
    }

    fn placement(&self, target: &Target) -> Vec<NodeId> {
        self.ring.primary(target.key).into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PolicyKind;

    #[test]
    fn same_target_same_node_until_that_node_goes_down() {
        let mut p = ConsistentHash::from_spec(&PolicySpec::new(PolicyKind::Hash));
        let mut nodes = NodeState::uniform(8);
        p.membership(&nodes, 0);
        let mut view = LoadView::new(8);
        let t = Target::from_key(42);
        let home = p.pick(&t, &view, 0).unwrap();
        for _ in 0..10 {
            view.started(home);
            assert_eq!(p.pick(&t, &view, 0), Some(home), "load does not matter to `hash`");
        }
        assert_eq!(p.placement(&t), vec![home]);
        nodes[home.index()].up = false;
        p.membership(&nodes, 0);
        let next = p.pick(&t, &view, 0).unwrap();
        assert_ne!(next, home);
        nodes[home.index()].up = true;
        p.membership(&nodes, 0);
        assert_eq!(p.pick(&t, &view, 0), Some(home), "it comes back home");
        p.membership(&[], 0);
        assert_eq!(p.pick(&t, &view, 0), None);
    }
}

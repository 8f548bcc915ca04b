//! `bounded`: consistent hashing with bounded loads (Mirrokni, Thorup, Zadimoghaddam
//! 2016), as HAProxy's `hash-balance-factor` and Envoy ship it.
//!
//! A target goes to the first node clockwise from its point on the ring (shared with
//! `hash`) whose requests in flight, counting this one, stay within
//! `ceil(c · (total in flight + 1) / eligible nodes)`. Popular targets thus spill to
//! their ring neighbours instead of swamping one node, while cold targets keep their
//! `hash` home and its cache. A node under the bound always exists: if all `n` eligible
//! nodes were at it, they would hold at least `n · ceil((T + 1)/n) > T` requests.

use crate::ring::{HashRing, RingConfig};
use crate::{LoadView, Nanos, NodeId, NodeState, Policy, PolicySpec, Target};

/// Most requests one node may hold once the next request is placed:
/// `ceil(c · (total_in_flight + 1) / eligible)`, 0 when no node is eligible.
pub fn load_bound(balance_factor: f64, total_in_flight: u64, eligible: usize) -> u64 {
    if eligible == 0 {
        return 0;
    }
    ceil((balance_factor * (total_in_flight + 1) as f64 / eligible as f64).max(0.0))
}

/// `x.ceil() as u64` for `x ≥ 0`, without the call to libm's `ceil` that the target's
/// baseline instruction set makes of it (a tenth of a pick's time).
fn ceil(x: f64) -> u64 {
    let whole = x as u64;
    if (whole as f64) < x {
        whole.saturating_add(1)
    } else {
        whole
    }
}

#[derive(Clone, Debug)]
pub struct BoundedLoadHash {
    ring: HashRing,
    balance_factor: f64,
}

impl BoundedLoadHash {
    pub fn from_spec(spec: &PolicySpec) -> Self {
        BoundedLoadHash::new(spec.balance_factor, RingConfig::default())
    }

    /// `balance_factor` is c (≥ 1; the spec validates it): 1.25 lets a node carry 25% more
    /// than an even share.
    pub fn new(balance_factor: f64, ring: RingConfig) -> Self {
        BoundedLoadHash { ring: HashRing::new(ring), balance_factor }
    }
}

impl Policy for BoundedLoadHash {
    fn name(&self) -> &'static str {
        "bounded"
    }

    /// `None` only on an empty ring: by the argument in the module docs some eligible node
    /// is always under the bound when the view counts the in-flight requests.
    fn pick(&mut self, target: &Target, view: &LoadView, _now: Nanos) -> Option<NodeId> {
        let bound = load_bound(self.balance_factor, view.total_in_flight(), self.ring.node_count());
        let under = |node: NodeId| u64::from(view.in_flight(node)) < bound;
        // Most targets stay home, and most that spill stop at a neighbour the home's
        // bucket names: one bucket's read either way, the sorted points only beyond.
        self.ring.first_accepted(target.key, under)
    }

    fn membership(&mut self, nodes: &[NodeState], _now: Nanos) {
        self.ring.rebuild(nodes);
    }

    /// The target's home on the ring; under load it may also be served by the nodes after.
    fn placement(&self, target: &Target) -> Vec<NodeId> {
        self.ring.primary(target.key).into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PolicyKind;

    #[test]
    fn bound_is_the_ceiling_of_the_fair_share_times_c() {
        assert_eq!(load_bound(1.25, 0, 4), 1);
        assert_eq!(load_bound(1.25, 7, 4), 3, "1.25 · 8 / 4 = 2.5 → 3");
        assert_eq!(load_bound(1.0, 7, 4), 2);
        assert_eq!(load_bound(2.0, 99, 10), 20);
        assert_eq!(load_bound(1.25, 5, 0), 0);
        for x in [0.0, 0.5, 1.0, 2.5, 37.0, 37.000_001, 1e15 + 0.5, 1e300] {
            assert_eq!(ceil(x), x.ceil() as u64, "{x}");
        }
    }

    #[test]
    fn a_hot_target_spills_over_but_never_past_the_bound() {
        let spec = PolicySpec { balance_factor: 1.25, ..PolicySpec::new(PolicyKind::Bounded) };
        let mut p = BoundedLoadHash::from_spec(&spec);
        p.membership(&NodeState::uniform(4), 0);
        let mut view = LoadView::new(4);
        let t = Target::from_key(7);
        let home = p.pick(&t, &view, 0).unwrap();
        assert_eq!(p.placement(&t), vec![home]);
        for _ in 0..40 {
            let bound = load_bound(1.25, view.total_in_flight(), 4);
            let node = p.pick(&t, &view, 0).unwrap();
            assert!(u64::from(view.in_flight(node)) < bound);
            view.started(node);
        }
        // 40 requests of one target over 4 nodes: each holds at most ceil(1.25·40/4) = 13.
        assert!((0..4).all(|i| view.in_flight(NodeId(i)) <= 13));
        assert!(view.in_flight(home) >= 10, "the home node takes its full share first");
        assert!((0..4).filter(|&i| view.in_flight(NodeId(i)) > 0).count() >= 3);
    }

    #[test]
    fn an_idle_cluster_behaves_like_hash() {
        let mut p = BoundedLoadHash::from_spec(&PolicySpec::new(PolicyKind::Bounded));
        let mut h = crate::hash::ConsistentHash::from_spec(&PolicySpec::new(PolicyKind::Hash));
        let nodes = NodeState::uniform(16);
        p.membership(&nodes, 0);
        h.membership(&nodes, 0);
        let view = LoadView::new(16);
        for k in 0..500 {
            let t = Target::from_key(k);
            assert_eq!(p.pick(&t, &view, 0), h.pick(&t, &view, 0));
        }
    }
}

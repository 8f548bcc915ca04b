//! Where a target goes that this router has not placed yet, computed alike on every
//! router: the heart of one placement across many routers.
//!
//! LARD sends a new target to the least loaded node *now*, and "now" differs per router,
//! so four routers place one target on up to four nodes and the caches fill with copies.
//! Here the choice depends only on what every router shares:
//!
//! 1. the target's **candidates**: the first [`CANDIDATES`] distinct eligible nodes on
//!    its walk round a consistent-hash ring built on the nodes' *names* ([`HashRing`]);
//! 2. the nodes' own reports of what they hold ([`LoadView::holds`]): the first candidate
//!    that holds the target and has room (by the caller's test) wins, so a target an
//!    overloaded node shed, or one placed before a membership change, stays where its
//!    copy is, and a router started late agrees from its first request;
//! 3. otherwise the first candidate with room (plain consistent hashing while the
//!    cluster is not overloaded), and only if none has room, the least loaded of them.
//!
//! Loads differ a little per router (each counts its own requests in flight), so routers
//! can disagree only while some candidate sits at the edge of having room; holders-first
//! then pulls them back to the same copy. The test for room is LARD's overload rule for
//! new targets and "below T_low" for spilling ([`crate::roster::Roster`]).

use crate::ring::{HashRing, RingConfig};
use crate::{LoadView, NodeId, NodeState, TargetKey};

/// Candidates per target: enough to spill past several overloaded nodes, few enough that
/// checking the holders of each costs little.
pub const CANDIDATES: usize = 8;

/// The name ring and the choice on it.
#[derive(Clone, Debug, Default)]
pub struct Homes {
    ring: HashRing,
}

/// A target's candidates in ring order, without allocating.
#[derive(Copy, Clone, Debug, Default)]
pub struct Candidates {
    nodes: [NodeId; CANDIDATES],
    len: usize,
}

impl Candidates {
    pub fn as_slice(&self) -> &[NodeId] {
        &self.nodes[..self.len]
    }
}

impl Homes {
    pub fn new() -> Self {
        Homes { ring: HashRing::new(RingConfig::default()) }
    }

    /// Take the current membership (only eligible nodes are candidates).
    pub fn rebuild(&mut self, nodes: &[NodeState]) {
        self.ring.rebuild(nodes);
    }

    /// The first [`CANDIDATES`] distinct nodes on `key`'s walk round the ring.
    pub fn candidates(&self, key: TargetKey) -> Candidates {
        let mut c = Candidates::default();
        let want = CANDIDATES.min(self.ring.node_count());
        for node in self.ring.walk(key) {
            if c.len == want {
                break;
            }
            if !c.as_slice().contains(&node) {
                c.nodes[c.len] = node;
                c.len += 1;
            }
        }
        c
    }

    /// The node for `key` other than those `skip` names: the first candidate holding it
    /// by its own report whose load `room` accepts, else the first candidate whose load
    /// it accepts, else the least loaded candidate. `None` when no candidate is left.
    pub fn choose(
        &self,
        key: TargetKey,
        view: &LoadView,
        room: impl Fn(f64) -> bool,
        skip: impl Fn(NodeId) -> bool,
    ) -> Option<(NodeId, f64)> {
        let candidates = self.candidates(key);
        let open = || candidates.as_slice().iter().copied().filter(|&n| !skip(n));
        let fits = |n: &NodeId| room(view.load(*n));
        let with_load = |n: NodeId| (n, view.load(n));
        if let Some(holder) = open().filter(fits).find(|&n| view.holds(n, key) == Some(true)) {
            return Some(with_load(holder));
        }
        if let Some(first) = open().find(fits) {
            return Some(with_load(first));
        }
        open().map(with_load).min_by(|a, b| a.1.total_cmp(&b.1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Holdings;
    use std::sync::Arc;

    #[derive(Debug)]
    struct Holds(TargetKey);
    impl Holdings for Holds {
        fn holds(&self, key: TargetKey) -> bool {
            key == self.0
        }
    }

    fn homes(nodes: &[NodeState]) -> Homes {
        let mut h = Homes::new();
        h.rebuild(nodes);
        h
    }

    #[test]
    fn candidates_are_distinct_and_follow_names_not_ids() {
        let nodes = NodeState::uniform(12);
        let h = homes(&nodes);
        let c = h.candidates(TargetKey(77));
        assert_eq!(c.as_slice().len(), CANDIDATES);
        let mut sorted = c.as_slice().to_vec();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), CANDIDATES);
        // The same nodes listed in reverse order (other ids, same names) give the same
        // candidates, by name.
        let reversed: Vec<NodeState> = nodes
            .iter()
            .rev()
            .enumerate()
            .map(|(i, n)| NodeState { id: NodeId(i as u32), ..*n })
            .collect();
        let name_of = |ns: &[NodeState], id: NodeId| ns.iter().find(|n| n.id == id).unwrap().name;
        let r = homes(&reversed);
        for k in 0..200 {
            let a: Vec<u64> =
                h.candidates(TargetKey(k)).as_slice().iter().map(|&n| name_of(&nodes, n)).collect();
            let b: Vec<u64> = r
                .candidates(TargetKey(k))
                .as_slice()
                .iter()
                .map(|&n| name_of(&reversed, n))
                .collect();
            assert_eq!(a, b);
        }
        let room = |load: f64| load <= 65.0;
        assert!(homes(&[]).choose(TargetKey(1), &LoadView::new(0), room, |_| false).is_none());
    }

    #[test]
    fn holders_first_then_the_first_that_fits_then_the_least_loaded() {
        let h = homes(&NodeState::uniform(4));
        let key = TargetKey(5);
        let order = h.candidates(key);
        let [first, second, third, fourth] = order.as_slice() else { panic!("4 candidates") };
        let mut v = LoadView::new(4);
        let room = |load: f64| load <= 65.0;
        assert_eq!(h.choose(key, &v, room, |_| false), Some((*first, 0.0)));
        v.set_holdings(*third, Some(Arc::new(Holds(key))));
        assert_eq!(h.choose(key, &v, room, |_| false).unwrap().0, *third, "the holder");
        for _ in 0..70 {
            v.started(*third);
        }
        assert_eq!(h.choose(key, &v, room, |_| false).unwrap().0, *first, "holder too busy");
        for _ in 0..70 {
            v.started(*first);
            v.started(*second);
        }
        assert_eq!(h.choose(key, &v, room, |_| false).unwrap().0, *fourth);
        assert_eq!(h.choose(key, &v, room, |n| n == *fourth).unwrap().0, *first, "least loaded");
    }
}

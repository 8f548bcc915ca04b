//! Node identity and membership as the policy hears of it.

/// A back-end node, named by its dense index in the router's node list (and in the
/// [`crate::LoadView`]). Ids are stable while a node stays configured.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u32);

impl NodeId {
    /// The index of this node in per-node vectors.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// What the policy knows of one configured node. The full list is passed to
/// [`crate::Policy::membership`] on every change; a node missing from it has left.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct NodeState {
    pub id: NodeId,
    /// Relative capacity (for `wrr`, `class` pools and slow start); 0 means take no new work.
    pub weight: u32,
    /// False while the node is down (failed health checks, ejected); a policy never picks it.
    pub up: bool,
    /// A stable hash of the node's name ([`NodeState::name_hash`]): the same on every
    /// router that lists the node, whatever its position or address there, so choices
    /// hashed on names agree between routers.
    pub name: u64,
}

impl NodeState {
    /// `n` equal nodes, all up, with ids `0..n`.
    pub fn uniform(n: usize) -> Vec<NodeState> {
        (0..n)
            .map(|i| NodeState {
                id: NodeId(i as u32),
                weight: 1,
                up: true,
                name: NodeState::name_hash(&format!("n{}", i + 1)),
            })
            .collect()
    }

    /// The hash of a node's name that [`NodeState::name`] holds.
    pub fn name_hash(name: &str) -> u64 {
        crate::stable_hash::fnv1a64(name.as_bytes())
    }

    /// True when the policy may send new work here.
    pub fn eligible(&self) -> bool {
        self.up && self.weight > 0
    }
}

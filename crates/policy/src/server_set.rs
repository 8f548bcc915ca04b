//! A LARD/R server set: the nodes one target is replicated on, never empty.
//!
//! Most targets live on one node, so the first member is held inline and only replicas
//! go to the heap: picking an unreplicated target reads nothing beyond its table entry,
//! which matters when the table holds a million of them.

use crate::NodeId;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerSet {
    first: NodeId,
    rest: Vec<NodeId>,
}

impl ServerSet {
    pub fn new(node: NodeId) -> Self {
        ServerSet { first: node, rest: Vec::new() }
    }

    /// The set of `nodes` in order (`None` when `nodes` is empty).
    pub fn of(nodes: &[NodeId]) -> Option<Self> {
        let (&first, rest) = nodes.split_first()?;
        let mut set = ServerSet::new(first);
        for &node in rest {
            set.insert(node);
        }
        Some(set)
    }

    /// The member the set started from (or the oldest left).
    pub fn first(&self) -> NodeId {
        self.first
    }

    pub fn len(&self) -> usize {
        1 + self.rest.len()
    }

    /// Always false: a set has at least one member (for clippy's `len` rule).
    pub fn is_empty(&self) -> bool {
        false
    }

    pub fn iter(&self) -> impl Iterator<Item = NodeId> + '_ {
        std::iter::once(self.first).chain(self.rest.iter().copied())
    }

    pub fn contains(&self, node: NodeId) -> bool {
        self.iter().any(|m| m == node)
    }

    /// Add `node` unless it is a member already.
    pub fn insert(&mut self, node: NodeId) {
        if !self.contains(node) {
            self.rest.push(node);
        }
    }

    /// Keep the members `keep` accepts. Returns false when none is left: the set is then
    /// meaningless and the caller must drop it.
    #[must_use]
    pub fn retain(&mut self, keep: impl Fn(NodeId) -> bool) -> bool {
        self.rest.retain(|&m| keep(m));
        if keep(self.first) {
            return true;
        }
        if self.rest.is_empty() {
            return false;
        }
        self.first = self.rest.swap_remove(0);
        true
    }

    pub fn to_vec(&self) -> Vec<NodeId> {
        self.iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_come_and_go_and_an_emptied_set_says_so() {
        let mut s = ServerSet::new(NodeId(3));
        s.insert(NodeId(5));
        s.insert(NodeId(3));
        s.insert(NodeId(7));
        assert_eq!(s.to_vec(), vec![NodeId(3), NodeId(5), NodeId(7)]);
        assert!(s.retain(|m| m != NodeId(3)));
        assert_eq!(s.len(), 2);
        assert!(s.contains(NodeId(5)) && s.contains(NodeId(7)) && !s.contains(NodeId(3)));
        assert!(s.retain(|m| m == NodeId(7)));
        assert_eq!(s.to_vec(), vec![NodeId(7)]);
        assert!(!s.retain(|_| false));
    }
}

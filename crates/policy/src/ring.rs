//! The consistent-hash ring shared by `hash` and `bounded`.
//!
//! Each eligible node owns points on a 64-bit circle, as many as its weight asks
//! (weight × [`RingConfig::points_per_weight`]; when that passes the cap, every node's
//! count shrinks by the same factor, so shares keep the weights' proportions), and a target belongs to the
//! first point at or after its own position. Points sit in a sorted array with a bucket
//! index on the top bits of the position, so a lookup reads the index and binary-searches
//! one bucket of about two points, and walking on is a step through the array: this keeps
//! 10 million lookups over 1,000 nodes (100,000 points) cheap.
//!
//! Only eligible nodes (up, weight > 0) are on the ring. A target whose node goes down
//! therefore lands on the next distinct node clockwise, exactly as if the walk skipped the
//! down node, and every other target stays put: a join or leave moves about 1/n of the
//! targets. Point positions come from [`mix64`] of the node's name hash and the replica
//! number, so they are the same in every router that knows the node by that name
//! (positions of distinct points collide with odds of 2⁻⁶⁴; ties go to the lower id).

use crate::stable_hash::mix64;
use crate::{NodeId, NodeState, TargetKey};

/// Salts keep a target's position apart from the points: small integer keys (as the
/// simulator uses) must not sit exactly on node 0's points.
const POINT_SALT: u64 = 0x5851_f42d_4c95_7f2d;
const KEY_SALT: u64 = 0x1405_7b7e_f767_814f;

/// How many points a node gets on the ring.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RingConfig {
    /// Points per unit of weight: more points spread targets more evenly (the spread of a
    /// node's share shrinks like 1/√points) at the cost of memory and rebuild time.
    pub points_per_weight: u32,
    /// Upper bound on one node's points, so a huge weight cannot blow up the ring.
    pub max_points_per_node: u32,
}

impl Default for RingConfig {
    /// 100 points per weight (about ±10% share spread), at most 1,600 per node: 1,000
    /// nodes of weight 1 make a 100,000-point ring (1.2 MB).
    fn default() -> Self {
        RingConfig { points_per_weight: 100, max_points_per_node: 1600 }
    }
}

/// A sorted ring of points over the eligible nodes.
#[derive(Clone, Debug, Default)]
pub struct HashRing {
    config: RingConfig,
    /// Points by position, ascending, each with its owner beside it: a lookup then reads
    /// one cache line of points, not one of positions and another of owners (at 10,000
    /// nodes the ring is far larger than the CPU's caches).
    points: Vec<Point>,
    /// `index[b]` is the first point whose top `bits` bits are `b` or more; one entry
    /// per bucket plus the end.
    index: Vec<u32>,
    bits: u32,
    /// Distinct nodes on the ring.
    nodes: usize,
}

/// A point on the ring and the node that owns it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Point {
    position: u64,
    owner: NodeId,
}

/// At most 2^20 buckets (4 MiB of index), however many points.
const MAX_INDEX_BITS: u32 = 20;

impl HashRing {
    pub fn new(config: RingConfig) -> Self {
        HashRing { config, ..HashRing::default() }
    }

    /// Rebuild from the whole membership list; only eligible nodes get points.
    pub fn rebuild(&mut self, nodes: &[NodeState]) {
        let mut eligible: Vec<NodeState> = nodes.iter().filter(|n| n.eligible()).copied().collect();
        // A node listed twice keeps its first entry (the sort is stable).
        eligible.sort_by_key(|n| n.id);
        eligible.dedup_by_key(|n| n.id);
        let ppw = f64::from(self.config.points_per_weight);
        let heaviest = eligible.iter().map(|n| f64::from(n.weight)).fold(0.0, f64::max);
        // When the cap binds, every node's points shrink by the same factor: capping each
        // node alone would give weights 2 and 1 (200 and 100 in the router's units) the
        // same 1,600 points, i.e. equal shares whatever the weights say.
        let scale = (f64::from(self.config.max_points_per_node) / (heaviest * ppw)).min(1.0);
        let cap = u64::from(self.config.max_points_per_node);
        let counted = eligible.iter().map(|n| {
            let count = ((f64::from(n.weight) * ppw * scale).round() as u64).min(cap).max(1);
            (n.id, n.name, count)
        });
        self.place_points(counted.collect::<Vec<_>>().into_iter());
    }

    /// Rebuild from nodes given as (id, name hash, number of points), each listed once:
    /// for callers that weigh nodes by more than their configured weight ([`crate::home`]).
    pub fn place_points(&mut self, nodes: impl Iterator<Item = (NodeId, u64, u64)>) {
        self.points.clear();
        self.nodes = 0;
        for (owner, name, count) in nodes {
            self.nodes += 1;
            // On the node's name, not its id: routers that list the nodes in another
            // order, or know them by other addresses, build the same ring.
            let points = (0..count).map(|r| mix64(name ^ mix64(r ^ POINT_SALT)));
            self.points.extend(points.map(|position| Point { position, owner }));
        }
        // By position, ties to the lower id.
        self.points.sort_unstable();
        // About two points per bucket; at least one bit so the shift below stays < 64.
        self.bits = (usize::BITS - self.points.len().leading_zeros()).saturating_sub(2);
        self.bits = self.bits.clamp(1, MAX_INDEX_BITS);
        let buckets = 1usize << self.bits;
        self.index.clear();
        let mut first = 0;
        for bucket in 0..buckets as u64 {
            while first < self.points.len() && self.bucket_of(self.points[first].position) < bucket
            {
                first += 1;
            }
            self.index.push(first as u32);
        }
        self.index.push(self.points.len() as u32);
    }

    fn bucket_of(&self, position: u64) -> u64 {
        position >> (64 - self.bits)
    }

    /// Distinct nodes on the ring (the eligible nodes).
    pub fn node_count(&self) -> usize {
        self.nodes
    }

    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// The node owning `key`, or `None` on an empty ring.
    pub fn primary(&self, key: TargetKey) -> Option<NodeId> {
        self.walk(key).next()
    }

    /// Owners of the points from `key`'s position clockwise, once round the ring. A node
    /// appears once per point it owns; allocation-free.
    pub fn walk(&self, key: TargetKey) -> impl Iterator<Item = NodeId> + '_ {
        let position = mix64(key.0 ^ KEY_SALT);
        let len = self.points.len();
        let start = if len == 0 {
            0
        } else {
            let bucket = self.bucket_of(position) as usize;
            let (lo, hi) = (self.index[bucket] as usize, self.index[bucket + 1] as usize);
            lo + self.points[lo..hi].partition_point(|p| p.position < position)
        };
        let (before, after) = self.points.split_at(start.min(len));
        after.iter().chain(before).map(|p| p.owner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring(nodes: &[NodeState]) -> HashRing {
        let mut r = HashRing::new(RingConfig::default());
        r.rebuild(nodes);
        r
    }

    fn owners(r: &HashRing, keys: u64) -> Vec<Option<NodeId>> {
        (0..keys).map(|k| r.primary(TargetKey(k))).collect()
    }

    #[test]
    fn a_join_moves_about_one_nth_and_only_to_the_newcomer() {
        let keys = 20_000;
        let before = owners(&ring(&NodeState::uniform(50)), keys);
        let after = owners(&ring(&NodeState::uniform(51)), keys);
        let moved: Vec<_> = before.iter().zip(&after).filter(|(b, a)| b != a).collect();
        assert!(moved.iter().all(|(_, a)| **a == Some(NodeId(50))));
        let share = moved.len() as f64 / keys as f64;
        assert!(share > 0.5 / 51.0 && share < 2.0 / 51.0, "moved {share}");
    }

    #[test]
    fn a_leave_or_down_moves_only_that_nodes_targets() {
        let keys = 20_000;
        let mut nodes = NodeState::uniform(20);
        let before = owners(&ring(&nodes), keys);
        nodes[7].up = false;
        let down = owners(&ring(&nodes), keys);
        nodes.remove(7);
        let left = owners(&ring(&nodes), keys);
        assert_eq!(down, left, "down and gone are the same to the ring");
        for (b, a) in before.iter().zip(&down) {
            if *b != Some(NodeId(7)) {
                assert_eq!(b, a);
            } else {
                assert_ne!(*a, Some(NodeId(7)));
            }
        }
    }

    #[test]
    fn weight_scales_the_share_and_zero_weight_has_none() {
        let mut nodes = NodeState::uniform(4);
        nodes[0].weight = 3;
        nodes[3].weight = 0;
        let r = ring(&nodes);
        assert_eq!(r.node_count(), 3);
        let got = owners(&r, 50_000);
        let count = |id| got.iter().filter(|o| **o == Some(NodeId(id))).count() as f64;
        assert_eq!(count(3), 0.0);
        let ratio = count(0) / count(1);
        assert!(ratio > 2.2 && ratio < 4.0, "ratio {ratio}");
    }

    #[test]
    fn weights_past_the_cap_keep_their_proportions() {
        // The router passes weights in hundredths (weight 2 is 200): every node would ask
        // for more than the cap, and the ring must still give 2/2/1/1.
        let mut nodes = NodeState::uniform(4);
        for (n, w) in nodes.iter_mut().zip([200, 200, 100, 100]) {
            n.weight = w;
        }
        let r = ring(&nodes);
        let points = |id| r.points.iter().filter(|p| p.owner == NodeId(id)).count();
        assert_eq!([points(0), points(1), points(2), points(3)], [1600, 1600, 800, 800]);
        let got = owners(&r, 60_000);
        let count = |id| got.iter().filter(|o| **o == Some(NodeId(id))).count() as f64;
        let ratio = (count(0) + count(1)) / (count(2) + count(3));
        assert!(ratio > 1.6 && ratio < 2.5, "ratio {ratio}");
    }

    #[test]
    fn the_bucket_index_agrees_with_a_full_binary_search() {
        for n in [1, 2, 3, 50] {
            let r = ring(&NodeState::uniform(n));
            for k in 0..2_000u64 {
                let position = mix64(k ^ KEY_SALT);
                let start = r.points.partition_point(|p| p.position < position) % r.points.len();
                assert_eq!(r.primary(TargetKey(k)), Some(r.points[start].owner));
            }
        }
    }

    #[test]
    fn walk_visits_every_point_once_and_empty_rings_are_empty() {
        let r = ring(&NodeState::uniform(3));
        assert_eq!(r.walk(TargetKey(9)).count(), 300);
        let empty = ring(&[]);
        assert!(empty.is_empty());
        assert_eq!(empty.primary(TargetKey(1)), None);
        let huge = ring(&[NodeState { id: NodeId(0), weight: u32::MAX, up: true, name: 0 }]);
        assert_eq!(huge.walk(TargetKey(0)).count(), 1600, "points are capped");
    }
}

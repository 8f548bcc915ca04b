//! The consistent-hash ring shared by `hash` and `bounded`.
//!
//! Each eligible node owns points on a 64-bit circle, as many as its weight asks
//! (weight × [`RingConfig::points_per_weight`]; when that passes the cap, every node's
//! count shrinks by the same factor, so shares keep the weights' proportions), and a target belongs to the
//! first point at or after its own position. Points sit in a sorted array, and a table of
//! buckets on the top bits of the position (one to two points a bucket) keeps beside each
//! bucket its first few points (their next 32 bits and owners) and the owner of the first
//! point after it: a lookup reads one bucket, half a cache line, where an index and then
//! the array would cost two misses once the ring outgrows the CPU's caches (1 million
//! points at 10,000 nodes). A crowded bucket, or a target whose 32 bits equal a point's,
//! is resolved in the sorted array; walking on is a step through the array.
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
    /// One per value of the top `bits` bits of a position, plus one past the end (whose
    /// `first` is the number of points).
    buckets: Vec<Bucket>,
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

/// Points a bucket keeps inline.
const INLINE: usize = 3;

/// An inline slot with no point.
const NO_OWNER: NodeId = NodeId(u32::MAX);

/// The points of one bucket as a lookup needs them, in half a cache line.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(C, align(32))]
struct Bucket {
    /// The index in `points` of the bucket's first point (or where it would be).
    first: u32,
    /// The owner of the first point after this bucket, clockwise (wrapping round).
    next: NodeId,
    /// The 32 bits below the bucket's bits of each of the first [`INLINE`] points.
    low: [u32; INLINE],
    /// Their owners; [`NO_OWNER`] in unused slots. All [`NO_OWNER`] with `first` past…
    /// see [`Bucket::crowded`].
    owner: [NodeId; INLINE],
}

impl Bucket {
    const EMPTY: Bucket =
        Bucket { first: 0, next: NO_OWNER, low: [0; INLINE], owner: [NO_OWNER; INLINE] };

    /// A bucket of more than [`INLINE`] points keeps none inline and says so here (its
    /// `low` is `[1, 0, 0]` with no owners, which no bucket of fewer points has).
    fn crowded(&self) -> bool {
        self.owner[0] == NO_OWNER && self.low[0] == 1
    }
}

/// At most 2^20 buckets (32 MiB), however many points.
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
        // One to two points per bucket (more past 2^20 buckets); at least one bit so the
        // shifts below stay < 64.
        let len = self.points.len();
        self.bits = (usize::BITS - len.saturating_sub(1).leading_zeros()).saturating_sub(1);
        self.bits = self.bits.clamp(1, MAX_INDEX_BITS);
        let buckets = 1usize << self.bits;
        self.buckets.clear();
        self.buckets.reserve(buckets + 1);
        let mut first = 0;
        for bucket in 0..buckets as u64 {
            let start = first;
            while first < len && self.bucket_of(self.points[first].position) == bucket {
                first += 1;
            }
            let inside = &self.points[start..first];
            let mut b = Bucket { first: start as u32, ..Bucket::EMPTY };
            if inside.len() > INLINE {
                b.low[0] = 1;
            } else {
                for (i, p) in inside.iter().enumerate() {
                    b.low[i] = self.low_of(p.position);
                    b.owner[i] = p.owner;
                }
            }
            // The first point after the bucket, wrapping round to the ring's first point.
            b.next = self.points.get(first).or(self.points.first()).map_or(NO_OWNER, |p| p.owner);
            self.buckets.push(b);
        }
        self.buckets.push(Bucket { first: len as u32, ..Bucket::EMPTY });
    }

    fn bucket_of(&self, position: u64) -> u64 {
        position >> (64 - self.bits)
    }

    /// The 32 bits of `position` below its bucket's bits.
    fn low_of(&self, position: u64) -> u32 {
        (position << self.bits >> 32) as u32
    }

    /// The index in `points` of the first point at or after `position` (`points.len()`
    /// when past the last).
    fn start_of(&self, position: u64) -> usize {
        let bucket = self.bucket_of(position) as usize;
        let (lo, hi) =
            (self.buckets[bucket].first as usize, self.buckets[bucket + 1].first as usize);
        lo + self.points[lo..hi].partition_point(|p| p.position < position)
    }

    /// Distinct nodes on the ring (the eligible nodes).
    pub fn node_count(&self) -> usize {
        self.nodes
    }

    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// The node owning `key`, or `None` on an empty ring: the first of [`HashRing::walk`],
    /// mostly from one bucket.
    pub fn primary(&self, key: TargetKey) -> Option<NodeId> {
        self.owner_at(mix64(key.0 ^ KEY_SALT))
    }

    /// The owner of the first point at or after `position`, wrapping round.
    fn owner_at(&self, position: u64) -> Option<NodeId> {
        if self.points.is_empty() {
            return None;
        }
        let b = &self.buckets[self.bucket_of(position) as usize];
        if !b.crowded() {
            let low = self.low_of(position);
            for (&point, &owner) in b.low.iter().zip(&b.owner) {
                if owner == NO_OWNER {
                    return Some(b.next);
                }
                if point > low {
                    return Some(owner);
                }
                if point == low {
                    break;
                }
            }
            if b.owner[INLINE - 1] != NO_OWNER && b.low[INLINE - 1] < low {
                return Some(b.next);
            }
        }
        let start = self.start_of(position);
        Some(self.points.get(start).unwrap_or(&self.points[0]).owner)
    }

    /// The first owner [`HashRing::walk`] yields that `accept` takes, or `None`: the walk's
    /// first steps read only the bucket `key` falls in (its inline points after the
    /// position, then the owner of the first point after it), so a target whose home is
    /// refused usually finds its node without a read of the sorted points.
    pub fn first_accepted(
        &self,
        key: TargetKey,
        mut accept: impl FnMut(NodeId) -> bool,
    ) -> Option<NodeId> {
        let len = self.points.len();
        if len == 0 {
            return None;
        }
        let position = mix64(key.0 ^ KEY_SALT);
        let b = &self.buckets[self.bucket_of(position) as usize];
        let low = self.low_of(position);
        let held = b.owner.iter().take_while(|&&o| o != NO_OWNER).count();
        // Inline points order exactly against the position unless one has its 32 bits.
        if b.crowded() || b.low[..held].contains(&low) {
            return self.walk(key).find(|&n| accept(n));
        }
        let before = b.low[..held].iter().filter(|&&p| p < low).count();
        for &owner in &b.owner[before..held] {
            if accept(owner) {
                return Some(owner);
            }
        }
        // The walk's next point is the first after the bucket (index `first + held`,
        // wrapping round), unless the walk has been round the whole ring already.
        let visited = held - before;
        if visited == len {
            return None;
        }
        if accept(b.next) {
            return Some(b.next);
        }
        let after = (b.first as usize + held + 1) % len;
        let (head, tail) = self.points.split_at(after);
        tail.iter().chain(head).take(len - visited - 1).map(|p| p.owner).find(|&n| accept(n))
    }

    /// Owners of the points from `key`'s position clockwise, once round the ring. A node
    /// appears once per point it owns; allocation-free.
    pub fn walk(&self, key: TargetKey) -> impl Iterator<Item = NodeId> + '_ {
        let position = mix64(key.0 ^ KEY_SALT);
        let len = self.points.len();
        let start = if len == 0 { 0 } else { self.start_of(position) };
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
    fn bucket_lookups_agree_with_the_sorted_points_at_and_beside_every_point() {
        // 5 and 50 nodes of 100 points, and 40 of 1,600 (crowded buckets), probed at each
        // point, one either side, and where only the bits below the inline 32 differ.
        for (n, weight) in [(5, 1), (50, 1), (40, 16)] {
            let mut nodes = NodeState::uniform(n);
            nodes.iter_mut().for_each(|node| node.weight = weight);
            let r = ring(&nodes);
            assert!(r.buckets.iter().any(Bucket::crowded) || weight == 1);
            let exact = |position: u64| {
                let start = r.points.partition_point(|p| p.position < position) % r.points.len();
                Some(r.points[start].owner)
            };
            for p in &r.points {
                for probe in [
                    p.position,
                    p.position.wrapping_sub(1),
                    p.position.wrapping_add(1),
                    p.position ^ 0xff,
                ] {
                    assert_eq!(r.owner_at(probe), exact(probe), "at {probe:#x}");
                }
            }
            for probe in [0, u64::MAX] {
                assert_eq!(r.owner_at(probe), exact(probe));
            }
        }
    }

    #[test]
    fn first_accepted_is_the_walks_first_accepted_node() {
        // Rings with empty, sparse and crowded buckets; acceptance by a few rules, so
        // the answer comes from the bucket's inline points, the next bucket's owner, the
        // sorted points, or nowhere.
        for (n, weight) in [(1, 1), (2, 1), (7, 1), (40, 16)] {
            let mut nodes = NodeState::uniform(n);
            nodes.iter_mut().for_each(|node| node.weight = weight);
            let r = ring(&nodes);
            for k in 0..3_000u64 {
                let key = TargetKey(k);
                for refuse in [0u32, 1, 2, 5, u32::MAX] {
                    let accept =
                        |node: NodeId| node.0 % 7 >= refuse.min(7) && node.0 != k as u32 % 3;
                    let want = r.walk(key).find(|&node| accept(node));
                    assert_eq!(
                        r.first_accepted(key, accept),
                        want,
                        "n {n} key {k} refuse {refuse}"
                    );
                }
            }
        }
        assert_eq!(ring(&[]).first_accepted(TargetKey(1), |_| true), None);
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

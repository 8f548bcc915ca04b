//! The consistent-hash ring shared by `hash` and `bounded`.
//!
//! Each eligible node owns points on a 64-bit circle, as many as its weight asks
//! (weight × [`RingConfig::points_per_weight`]; when that passes a node's cap or the whole
//! ring's, every node's count shrinks by the same factor, so shares keep the weights'
//! proportions), and a target belongs to the
//! first point at or after its own position. Points sit in a sorted array, and a table of
//! buckets on the top bits of the position (up to 8 points a bucket on average) keeps in
//! each bucket's cache line its points (their next 16 bits and owners, up to 14) and the
//! owner of the first point after it: a lookup reads one cache line, where an index and
//! then the array would cost two misses once the ring outgrows the CPU's caches. The
//! table is 8 bytes a point, and the whole ring's bound on points
//! ([`RingConfig::max_points`]) keeps a ring built from weights ([`HashRing::rebuild`])
//! within a 2 MiB table up to 262,144 nodes. A crowded bucket, a target whose 16 bits equal a point's, or an owner past
//! `u16` is resolved in the sorted array; walking on is a step through the array.
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
    /// Upper bound on the whole ring's points (each node keeps at least one): a lookup
    /// reads the ring at a random place, so once the ring outgrows the CPU's caches every
    /// pick waits for memory. Past the bound each node's points shrink by the same factor,
    /// which widens the spread of the nodes' shares (about 1/√points a node).
    pub max_points: u32,
}

impl Default for RingConfig {
    /// 100 points per weight (about ±10% share spread), at most 1,600 per node and
    /// 2¹⁸ (262,144) in all: 1,000 nodes of weight 1 make a 100,000-point ring (a 1 MiB
    /// bucket table), 10,000 nodes get 26 points each (about ±20% spread, the largest
    /// share twice the mean) in a 2 MiB table instead of 100 each in 16 MiB, and a pick
    /// at 10,000 nodes costs about 2× one at 8 instead of 3–4×.
    fn default() -> Self {
        RingConfig { points_per_weight: 100, max_points_per_node: 1600, max_points: 1 << 18 }
    }
}

/// A sorted ring of points over the eligible nodes.
#[derive(Clone, Debug, Default)]
pub struct HashRing {
    config: RingConfig,
    /// Points by position, ascending, each with its owner beside it: for the walk past a
    /// bucket and for lookups a bucket cannot answer.
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

/// Points a bucket keeps inline: with [`AVERAGE_POINTS`] a bucket, all but a few
/// buckets in a hundred keep every point inline.
const INLINE: usize = 14;

/// Points a bucket holds on average, at most (the table has a power of two buckets).
const AVERAGE_POINTS: usize = 8;

/// `held` of a bucket whose points are looked up in the sorted array: more than
/// [`INLINE`], or owners past [`u16::MAX`].
const CROWDED: u8 = u8::MAX;

/// An inline slot with no point: its bits sort after every position's, and a position
/// whose bits equal them is looked up in the sorted array.
const NO_POINT: u16 = u16::MAX;

/// The points of one bucket as a lookup needs them, in one cache line.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(C, align(64))]
struct Bucket {
    /// The index in `points` of the bucket's first point (or where it would be).
    first: u32,
    /// The owner of the first point after this bucket, clockwise (wrapping round).
    next: u16,
    /// How many points the bucket keeps inline, or [`CROWDED`].
    held: u8,
    /// The 16 bits below the bucket's bits of each inline point, ascending;
    /// [`NO_POINT`] in unused slots.
    low: [u16; INLINE],
    /// Their owners.
    owner: [u16; INLINE],
}

impl Bucket {
    const EMPTY: Bucket =
        Bucket { first: 0, next: 0, held: 0, low: [NO_POINT; INLINE], owner: [0; INLINE] };

    fn crowded(&self) -> bool {
        self.held == CROWDED
    }

    /// How many inline points lie before the 16 bits `low`, or `None` when one of them
    /// has those bits (only the sorted array orders the two). A binary search of the
    /// held slots (they are sorted): about four steps where a scan of every slot took
    /// fourteen.
    fn before(&self, low: u16) -> Option<usize> {
        let held = &self.low[..usize::from(self.held).min(INLINE)];
        let before = held.partition_point(|&point| point < low);
        (held.get(before) != Some(&low)).then_some(before)
    }
}

/// At most 2^20 buckets (64 MiB), however many points.
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
        let mut scale = (f64::from(self.config.max_points_per_node) / (heaviest * ppw)).min(1.0);
        let asked: f64 = eligible.iter().map(|n| f64::from(n.weight) * ppw * scale).sum();
        if asked > f64::from(self.config.max_points) {
            scale *= f64::from(self.config.max_points) / asked;
        }
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
        // About AVERAGE_POINTS a bucket (more past 2^20 buckets); at least one bit so the
        // shifts below stay < 64.
        let len = self.points.len();
        let wanted = len.div_ceil(AVERAGE_POINTS).max(2);
        self.bits = (usize::BITS - (wanted - 1).leading_zeros()).clamp(1, MAX_INDEX_BITS);
        // Owners past u16 are looked up in the sorted array.
        let narrow = self.points.iter().all(|p| p.owner.0 < u32::from(u16::MAX));
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
            if inside.len() > INLINE || !narrow {
                b.held = CROWDED;
            } else {
                b.held = inside.len() as u8;
                for (i, p) in inside.iter().enumerate() {
                    b.low[i] = self.low_of(p.position);
                    b.owner[i] = p.owner.0 as u16;
                }
            }
            // The first point after the bucket, wrapping round to the ring's first point.
            b.next = self.points.get(first).or(self.points.first()).map_or(0, |p| p.owner.0 as u16);
            self.buckets.push(b);
        }
        self.buckets.push(Bucket { first: len as u32, ..Bucket::EMPTY });
    }

    fn bucket_of(&self, position: u64) -> u64 {
        position >> (64 - self.bits)
    }

    /// The 16 bits of `position` below its bucket's bits.
    fn low_of(&self, position: u64) -> u16 {
        (position << self.bits >> 48) as u16
    }

    /// The index in `points` of the first point at or after `position` (`points.len()`
    /// when past the last).
    fn start_of(&self, position: u64) -> usize {
        let bucket = self.bucket_of(position) as usize;
        // From the bucket's own line when it orders the position exactly.
        let b = &self.buckets[bucket];
        if !b.crowded() {
            if let Some(before) = b.before(self.low_of(position)) {
                return b.first as usize + before;
            }
        }
        let (lo, hi) =
            (self.buckets[bucket].first as usize, self.buckets[bucket + 1].first as usize);
        lo + self.points[lo..hi].partition_point(|p| p.position < position)
    }

    /// The share of the circle each node owns (the arcs ending at its points), by node
    /// id; nodes not on the ring own 0. What `hash` gives each node of many targets.
    pub fn shares(&self) -> Vec<f64> {
        let mut shares =
            vec![0.0; self.points.iter().map(|p| p.owner.index() + 1).max().unwrap_or(0)];
        let mut previous = self.points.last().map_or(0, |p| p.position);
        for p in &self.points {
            shares[p.owner.index()] += p.position.wrapping_sub(previous) as f64 / 2f64.powi(64);
            previous = p.position;
        }
        if let [only] = &self.points[..] {
            shares[only.owner.index()] = 1.0;
        }
        shares
    }

    /// Distinct nodes on the ring (the eligible nodes).
    /// Points on the ring, over all nodes.
    pub fn point_count(&self) -> usize {
        self.points.len()
    }

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
            if let Some(before) = b.before(self.low_of(position)) {
                let held = usize::from(b.held);
                let owner = if before < held { b.owner[before] } else { b.next };
                return Some(NodeId(u32::from(owner)));
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
        // Inline points order exactly against the position unless one has its 16 bits.
        let before = match b.crowded() {
            false => b.before(self.low_of(position)),
            true => None,
        };
        let Some(before) = before else {
            return self.walk(key).find(|&n| accept(n));
        };
        let held = usize::from(b.held);
        for &owner in &b.owner[before..held] {
            let owner = NodeId(u32::from(owner));
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
        let next = NodeId(u32::from(b.next));
        if accept(next) {
            return Some(next);
        }
        // On through the buckets after, a bucket's owners at a time (the longest walks,
        // past runs of full nodes, are most of what `bounded` adds to `hash`), past the
        // point `next` named, until once round the ring.
        let (mut left, mut skip) = (len - visited - 1, 1);
        let mut bucket = self.bucket_of(position) as usize;
        let last = self.buckets.len() - 2;
        while left > 0 {
            bucket = if bucket == last { 0 } else { bucket + 1 };
            let b = &self.buckets[bucket];
            if b.crowded() {
                let from = (b.first as usize + skip) % len;
                let (head, tail) = self.points.split_at(from);
                let mut rest = tail.iter().chain(head).take(left).map(|p| p.owner);
                return rest.find(|&n| accept(n));
            }
            let owners = &b.owner[..usize::from(b.held)];
            let owners = &owners[skip.min(owners.len())..];
            skip -= skip.min(usize::from(b.held));
            let owners = &owners[..owners.len().min(left)];
            left -= owners.len();
            if let Some(&owner) = owners.iter().find(|&&o| accept(NodeId(u32::from(o)))) {
                return Some(NodeId(u32::from(owner)));
            }
        }
        None
    }

    /// Owners of the points from `key`'s position clockwise, once round the ring. A node
    /// appears once per point it owns; allocation-free.
    pub fn walk(&self, key: TargetKey) -> Walk<'_> {
        let position = mix64(key.0 ^ KEY_SALT);
        let len = self.points.len();
        let mut walk = Walk { ring: self, bucket: 0, slot: 0, sorted: None, left: len };
        if len == 0 {
            return walk;
        }
        walk.bucket = self.bucket_of(position) as usize;
        let b = &self.buckets[walk.bucket];
        match b.crowded() {
            false => match b.before(self.low_of(position)) {
                Some(before) => walk.slot = before,
                None => walk.sorted = Some(self.start_of(position) % len),
            },
            true => walk.sorted = Some(self.start_of(position) % len),
        }
        walk
    }
}

/// [`HashRing::walk`]: the owners of the points clockwise from a position, read from the
/// buckets' inline points (each bucket's line follows the last one's in memory, where
/// the sorted points are elsewhere: on a ring past the CPU's caches, a walk of a few
/// points costs one wait for memory instead of two), and from the sorted points once a
/// bucket keeps its points there only.
#[derive(Clone, Debug)]
pub struct Walk<'a> {
    ring: &'a HashRing,
    /// The bucket whose inline points come next, and the next of them.
    bucket: usize,
    slot: usize,
    /// The index in the sorted points of the next point, once the walk reads them.
    sorted: Option<usize>,
    /// Points left before the walk is once round the ring.
    left: usize,
}

impl Iterator for Walk<'_> {
    type Item = NodeId;

    fn next(&mut self) -> Option<NodeId> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let points = &self.ring.points;
        if let Some(i) = self.sorted {
            self.sorted = Some((i + 1) % points.len());
            return Some(points[i].owner);
        }
        // A point lies ahead (`left` counted it), so this ends within one round of the
        // buckets.
        let last = self.ring.buckets.len() - 2;
        loop {
            let b = &self.ring.buckets[self.bucket];
            if b.crowded() {
                let i = (b.first as usize + self.slot) % points.len();
                self.sorted = Some((i + 1) % points.len());
                return Some(points[i].owner);
            }
            if self.slot < usize::from(b.held) {
                self.slot += 1;
                return Some(NodeId(u32::from(b.owner[self.slot - 1])));
            }
            self.bucket = if self.bucket == last { 0 } else { self.bucket + 1 };
            self.slot = 0;
        }
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
    fn past_the_whole_rings_bound_every_node_shrinks_alike() {
        let config = RingConfig { max_points: 1_000, ..RingConfig::default() };
        let mut nodes = NodeState::uniform(30);
        nodes.iter_mut().take(10).for_each(|n| n.weight = 2);
        let mut r = HashRing::new(config);
        r.rebuild(&nodes[..4]);
        assert_eq!(r.points.len(), 4 * 200, "below the bound, as asked");
        r.rebuild(&nodes);
        let points = |id| r.points.iter().filter(|p| p.owner == NodeId(id)).count();
        assert_eq!((points(0), points(29)), (50, 25), "4,000 asked, 1,000 allowed");
        assert_eq!(r.points.len(), 1_000);
        let shares = r.shares();
        assert!((shares.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        let heavy: f64 = shares[..10].iter().sum::<f64>() / 10.0;
        let light: f64 = shares[10..].iter().sum::<f64>() / 20.0;
        assert!(heavy / light > 1.5 && heavy / light < 2.7, "{}", heavy / light);
        // Many nodes keep one point each; below the bound nothing changes.
        r.rebuild(&NodeState::uniform(1_500));
        assert_eq!(r.points.len(), 1_500);
        let below = ring(&NodeState::uniform(2_000));
        assert_eq!(below.points.len(), 200_000);
        assert_eq!(ring(&NodeState::uniform(10_000)).points.len(), 260_000);
        let one = RingConfig { points_per_weight: 1, ..RingConfig::default() };
        let mut single = HashRing::new(one);
        single.rebuild(&NodeState::uniform(1));
        assert_eq!(single.shares(), vec![1.0], "one point owns the whole circle");
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
                    let start = r.points.partition_point(|p| p.position < probe);
                    assert_eq!(r.start_of(probe), start, "at {probe:#x}");
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
    fn owners_past_u16_are_found_in_the_sorted_points() {
        let nodes: Vec<NodeState> = [3, 70_000, 65_535, 12]
            .iter()
            .map(|&id| NodeState { id: NodeId(id), weight: 1, up: true, name: u64::from(id) })
            .collect();
        let r = ring(&nodes);
        let table = &r.buckets[..r.buckets.len() - 1];
        assert!(table.iter().all(Bucket::crowded), "no owner above u16 in a bucket");
        let narrow = ring(&[nodes[0], nodes[3]]);
        assert!(!narrow.buckets.iter().all(Bucket::crowded));
        for k in 0..2_000u64 {
            let position = mix64(k ^ KEY_SALT);
            let start = r.points.partition_point(|p| p.position < position) % r.points.len();
            assert_eq!(r.primary(TargetKey(k)), Some(r.points[start].owner));
            let not_first = |n: NodeId| n != r.points[start].owner;
            assert_eq!(
                r.first_accepted(TargetKey(k), not_first),
                r.walk(TargetKey(k)).find(|&n| not_first(n))
            );
        }
    }

    #[test]
    fn the_walk_through_the_buckets_is_the_sorted_points_in_order() {
        // Empty, sparse and crowded buckets, and owners past u16 (every bucket crowded).
        let wide: Vec<NodeState> = [3, 70_000, 12]
            .iter()
            .map(|&id| NodeState { id: NodeId(id), weight: 1, up: true, name: u64::from(id) })
            .collect();
        let mut heavy = NodeState::uniform(40);
        heavy.iter_mut().for_each(|node| node.weight = 16);
        for nodes in [NodeState::uniform(1), NodeState::uniform(7), heavy, wide] {
            let r = ring(&nodes);
            for k in 0..500u64 {
                let start = r.points.partition_point(|p| p.position < mix64(k ^ KEY_SALT));
                let (head, tail) = r.points.split_at(start);
                let want: Vec<NodeId> = tail.iter().chain(head).map(|p| p.owner).collect();
                assert_eq!(r.walk(TargetKey(k)).collect::<Vec<_>>(), want, "key {k}");
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

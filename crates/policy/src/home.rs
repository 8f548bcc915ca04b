//! Where a target goes that this router has not placed yet, computed alike on every
//! router: the heart of one placement across many routers.
//!
//! LARD sends a new target to the least loaded node *now*, and "now" differs per router,
//! so four routers place one target on up to four nodes and the caches fill with copies.
//! Here the choice is made among what every router shares:
//!
//! 1. the target's **candidates**: the first [`CANDIDATES`] distinct nodes clockwise from
//!    the target's position on a consistent-hash ring ([`Homes::candidates`]) whose
//!    points come from the nodes' *names*, as many per node as its configured weight
//!    times the cache capacity it reports (times its warmth) ask, so a node with twice the
//!    cache is a candidate for about twice the targets;
//! 2. the nodes' own reports of what they hold ([`LoadView::holds`]): the first candidate
//!    that holds the target and has room (by the caller's test) wins, so a target an
//!    overloaded node shed, or one placed before a membership change, stays where its
//!    copy is, and a router started late agrees from its first request;
//! 3. otherwise the **least loaded candidate** for its weight (load over weight ×
//!    capacity × warmth, so equal nodes compare by load and a node with twice the cache
//!    takes twice the load; loads within [`SAME_LOAD`] of the least count as equal, and
//!    of equals the earlier in the ring's order wins), the power of d choices with
//!    d = [`CANDIDATES`].
//!
//! Every load in these steps is what the nodes *report* ([`LoadView::reported_load`]:
//! the requests each node answers for all routers, its CPU and disk, plus the bytes of
//! misses it is reading in, [`MISS_BYTES_PER_REQUEST`] to a request), never a router's
//! own count of requests in flight. Every router polls the same reports, so the choice
//! is a function of what they all know: two routers whose last polls read the same
//! figures place a new target on the same node, whatever each has in flight itself.
//! A router's own count still drives LARD's overload rule for targets it has placed
//! (that decision is its own); only where a target goes must agree.
//!
//! Why the least loaded of d and not the first candidate with room: with one router the
//! first-with-room rule gave back 5–10% of LARD's throughput on real logs, because a
//! node that hashing makes first choice for a few hot targets stays busier than the rest
//! until LARD's overload rule fires. The least loaded of d is LARD's own rule on a sample:
//! with one router, exact reports and d ≥ nodes it *is* LARD's rule, and with thousands of
//! nodes a sample of 8 balances load within a small factor of the ideal (Mitzenmacher's
//! power of d choices), at O(d) per new target instead of O(nodes). Routers whose last
//! polls read different figures (a poll period apart at most) may choose different
//! candidates of one target for its first requests; the first node to report holding it
//! wins every later choice (step 2), so they agree again within one report period, and
//! only among d nodes, never across the cluster.
//!
//! Why the bytes of misses being read count: a request in flight is a poor measure of a
//! node whose disk is busy with one read of tens of MiB (a file larger than any cache,
//! read again on every request): it counts one request, yet every miss placed there
//! waits seconds behind it. Counting those bytes as load keeps new targets, and the load
//! an overloaded node sheds, off a node stalled behind a long read; every router reads the
//! same reports, so they still agree. On logs with such files shared placement, measured
//! with one router before a router alone took LARD's own rule ([`crate::roster`]), went
//! from 0.94× per-router LARD's throughput (geometric mean over logs, cache sizes and
//! thresholds) to 1.12×, while EPA, whose largest file is 4.6 MiB, stayed at 0.98–1.04× in
//! every cell (docs/results/placement-at-scale.md).
//!
//! A ring rather than rendezvous hashing, because a pick must not cost O(nodes): the ring
//! finds a target's candidates by one bucket-index lookup and a short walk, O(1) expected
//! (rendezvous scored every node for every new target, 80% of a 1,000-node simulation).
//! Like rendezvous, a node's points depend on that node alone (its name, weight, capacity
//! and warmth, over a unit shared by all), so a node that joins, leaves or changes weight
//! moves only the targets it gains or loses, and a removed node's targets go to their next
//! candidate. The unit is the largest weight rounded up to a power of two, so only a
//! change of the largest weight past a power of two re-spreads every target.

use crate::ring::HashRing;
use crate::{LoadView, NodeId, NodeState, TargetKey};

/// Candidates per target: the d of the power of d choices, enough to spill past several
/// overloaded nodes, few enough that checking the load and holdings of each costs little.
pub const CANDIDATES: usize = 8;

/// Reported loads closer than this (in requests on a node of average weight) count as
/// the same load, and the earlier candidate in the ring's order wins. Two routers poll a
/// node at different moments, so its reports to them differ by what came and went in
/// between: a request being answered, another router's poll (a report counts the request
/// that asks for it), a response written but not yet closed, so by up to three requests
/// under light traffic. A difference that small says nothing every router knows; and it
/// costs LARD nothing: on the EPA log (8 nodes, 11 MiB caches, one router) lard places
/// as well with it as by exact loads.
pub const SAME_LOAD: f64 = 4.0;

/// Bytes of misses a node reports reading in that count as one request in flight in its
/// load for placement. Large enough that the reads of ordinary misses (a few dozen of
/// tens of KiB) weigh less than [`SAME_LOAD`] and change nothing, small enough that a node
/// reading a file of tens of MiB counts as overloaded. Measured over 64 KiB–16 MiB on
/// real and resampled logs: 1–4 MiB all do better than leaving the bytes out, 2 MiB best.
pub const MISS_BYTES_PER_REQUEST: f64 = (2 << 20) as f64;

/// What a choice every router makes alike reads of `node`'s load: its own report of the
/// requests it is answering, CPU and disk ([`LoadView::reported_load`]), plus the misses it
/// says it is reading in, [`MISS_BYTES_PER_REQUEST`] to a request.
pub fn placement_load(view: &LoadView, node: NodeId) -> f64 {
    view.reported_load(node) + view.miss_bytes(node) as f64 / MISS_BYTES_PER_REQUEST
}

/// Ring points of the heaviest node (the rest in proportion, at least one): about ±10%
/// spread in a node's share of targets, 1.5 MiB of ring per 1,000 nodes.
const POINTS: f64 = 128.0;

/// Points on the whole ring at most: past this every node's points halve, as often as it
/// takes, so the ring stays within a 2 MiB bucket table and a 4 MiB array of points (up
/// to 2,048 nodes of equal weight nothing is halved). A new or overloaded target reads
/// the ring at a random place, and a ring larger than the CPU's caches makes that read a
/// wait for memory: at 10,000 nodes 128 points each were 20 MiB of points and a pick cost
/// 2.5–3× one at 8 nodes. Halving rather than scaling to the bound keeps every count the
/// same while the cluster stays within one power of two, as the weights' unit does: only
/// a membership that crosses a power of two re-spreads the targets (each node then keeps
/// the first half of its points, so a target moves only off a point that went). Fewer
/// points widen the spread of first choices (±25% at 16 points a node); the least loaded
/// of [`CANDIDATES`] evens out the load they bring.
const MAX_POINTS: f64 = (1 << 18) as f64;

/// What a node that reports no cache capacity (nginx, Apache, a node not heard from yet)
/// counts as: larder node's default cache, 64 MiB.
pub const UNREPORTED_CAPACITY: u64 = 64 << 20;

/// Whether a node's reported cache capacity weighs in its share of targets.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Capacity {
    /// Share ∝ configured weight × reported cache capacity.
    #[default]
    Weighed,
    /// Share ∝ configured weight only (every cache counted alike; for comparison).
    Ignored,
}

/// One eligible node as the choice sees it.
#[derive(Copy, Clone, Debug, PartialEq)]
struct Member {
    id: NodeId,
    name: u64,
    weight: f64,
}

/// The eligible nodes and the choice among them.
#[derive(Clone, Debug, Default)]
pub struct Homes {
    members: Vec<Member>,
    capacity: Capacity,
    /// The ring over `members`, as weighed at the view's shares epoch `synced`.
    ring: HashRing,
    /// The view's [`LoadView::shares_epoch`] the ring was built at; `None`: not built for
    /// the current members.
    synced: Option<u64>,
    /// Each member's weight as the ring was built (by node id), and their sum.
    weights: Vec<f64>,
    total: f64,
    /// Whether every member weighs the same (configured weight × capacity × warmth).
    even: bool,
    /// Rings built so far: what a remembered answer was computed on
    /// ([`crate::candidate_memo`]).
    ring_version: u64,
}

/// A target's candidates, best first, without allocating.
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
    pub fn new(capacity: Capacity) -> Self {
        Homes { capacity, ..Homes::default() }
    }

    /// Take the current membership (only eligible nodes are candidates; a node listed
    /// twice keeps its first entry). True when it differs from the last one. The ring is
    /// rebuilt at the next [`Homes::sync`].
    pub fn rebuild(&mut self, nodes: &[NodeState]) -> bool {
        let mut members: Vec<Member> = nodes
            .iter()
            .filter(|n| n.eligible())
            .map(|n| Member { id: n.id, name: n.name, weight: f64::from(n.weight) })
            .collect();
        // Stable: a node listed twice keeps its first entry.
        members.sort_by_key(|m| m.id);
        members.dedup_by_key(|m| m.id);
        let changed = members != self.members;
        if changed {
            self.synced = None;
        }
        self.members = members;
        changed
    }

    /// Weigh the members by what `view` reports (capacities and warmths) and rebuild the
    /// ring if that changed since the last call (by [`LoadView::shares_epoch`]): O(1) when
    /// nothing changed, so callers make it the first step of a pick.
    pub fn sync(&mut self, view: &LoadView) {
        if self.synced == Some(view.shares_epoch()) {
            return;
        }
        self.synced = Some(view.shares_epoch());
        // Each member's weight (configured weight × reported capacity) and warmth.
        let weighed: Vec<(Member, f64, f64)> = self
            .members
            .iter()
            .map(|m| {
                let size = match self.capacity {
                    Capacity::Weighed => view.capacity(m.id).unwrap_or(UNREPORTED_CAPACITY) as f64,
                    Capacity::Ignored => UNREPORTED_CAPACITY as f64,
                };
                (*m, m.weight * size, view.warmth(m.id))
            })
            .collect();
        let heaviest = weighed.iter().map(|w| w.1).fold(0.0, f64::max);
        // A unit that one node's change rarely moves: the heaviest weight rounded up to a
        // power of two (warmth left out, so nodes warming up move nothing but their own).
        let unit = if heaviest > 0.0 { heaviest.log2().ceil().exp2() } else { 1.0 };
        let asked = |m: &(Member, f64, f64)| POINTS * m.1 * m.2 / unit;
        let halvings = halvings(weighed.iter().map(asked).sum());
        let points = weighed.iter().map(|w| {
            let count = (asked(w) / halvings).round().max(1.0) as u64;
            (w.0.id, w.0.name, count)
        });
        self.ring.place_points(points);
        self.ring_version += 1;
        let len = self.members.last().map_or(0, |m| m.id.index() + 1);
        self.weights = vec![0.0; len];
        self.total = 0.0;
        let mut each = weighed.iter().map(|(_, weight, warmth)| weight * warmth);
        let first = each.next();
        self.even = each.all(|w| Some(w) == first);
        for (m, weight, warmth) in &weighed {
            self.weights[m.id.index()] = weight * warmth;
            self.total += weight * warmth;
        }
    }

    /// `node`'s share of all members' weights as of the last [`Homes::sync`] (0 for a
    /// non-member): the part of the targets it is first choice for (within the ring's
    /// spread), so its fair share of the load. O(1).
    pub fn share(&self, node: NodeId) -> f64 {
        let mine = self.weights.get(node.index()).copied().unwrap_or(0.0);
        if self.total > 0.0 {
            mine / self.total
        } else {
            0.0
        }
    }

    /// Rings built so far: candidates computed at one version are valid while it lasts.
    pub fn ring_version(&self) -> u64 {
        self.ring_version
    }

    /// Whether every member weighs the same as of the last [`Homes::sync`] (configured
    /// weight × reported capacity × warmth; capacities left out when they are ignored):
    /// then the fair share of every node is the same, as LARD assumes. O(1).
    pub fn even(&self) -> bool {
        self.even
    }

    /// `load` on `node` for each unit of its weight, in requests of a node of average
    /// weight, so a node with twice the cache takes twice the load before it counts as
    /// more loaded (equal nodes compare by load itself).
    fn relative(&self, node: NodeId, load: f64) -> f64 {
        match self.weights.get(node.index()) {
            Some(&w) if w > 0.0 => load * self.total / (self.members.len() as f64 * w),
            _ => f64::INFINITY,
        }
    }

    /// The first [`CANDIDATES`] distinct members clockwise from `key` on the ring (all of
    /// them when there are fewer), best first. O(1) expected: a bucket lookup and a walk
    /// of about `CANDIDATES` points (a few more on a small cluster).
    pub fn candidates(&self, key: TargetKey) -> Candidates {
        let mut c = Candidates::default();
        let want = self.ring.node_count().min(CANDIDATES);
        if want == 0 {
            return c;
        }
        // The walk as `bounded` takes it, a bucket's owners at a time.
        self.ring.first_accepted(key, |node| {
            if !c.as_slice().contains(&node) {
                c.nodes[c.len] = node;
                c.len += 1;
            }
            c.len == want
        });
        c
    }

    /// The first candidate for `key` whose reported load `room` accepts, whatever holds a
    /// copy: where the target belongs while that node has room. `room` is handed the
    /// reported load of the least loaded candidate as well. Reported loads only
    /// ([`placement_load`]), so every router that polled the same reports agrees.
    pub fn first_fit(
        &self,
        key: TargetKey,
        view: &LoadView,
        room: impl Fn(f64, f64) -> bool,
    ) -> Option<NodeId> {
        let candidates = self.candidates(key);
        let open = candidates.as_slice().iter().map(|&n| (n, placement_load(view, n)));
        let (_, least) = open.clone().min_by(|a, b| a.1.total_cmp(&b.1))?;
        open.into_iter().find(|&(_, load)| room(load, least)).map(|(n, _)| n)
    }

    /// The node for `key` other than those `skip` names, with its load as this router
    /// counts it ([`LoadView::load`], for the caller's overload rule): the first candidate
    /// holding it by its own report whose reported load `room` accepts (given the least
    /// reported candidate load too), else the candidate of least reported load for its
    /// weight (ties: the earlier in the ring's order). `None` when no candidate is left.
    ///
    /// The choice reads reports only ([`placement_load`]: requests, CPU, disk and the
    /// misses being read in), never this router's own requests in flight: two routers that
    /// polled the same reports choose the same node for a target neither has placed,
    /// whatever each has in flight.
    pub fn choose(
        &self,
        key: TargetKey,
        view: &LoadView,
        room: impl Fn(f64, f64) -> bool,
        skip: impl Fn(NodeId) -> bool,
    ) -> Option<(NodeId, f64)> {
        self.choose_among(&self.candidates(key), key, view, room, skip)
    }

    /// [`Homes::choose`] over `key`'s `candidates` computed before (on the current ring).
    pub fn choose_among(
        &self,
        candidates: &Candidates,
        key: TargetKey,
        view: &LoadView,
        room: impl Fn(f64, f64) -> bool,
        skip: impl Fn(NodeId) -> bool,
    ) -> Option<(NodeId, f64)> {
        let open = || {
            let open = candidates.as_slice().iter().copied().filter(|&n| !skip(n));
            open.map(|n| (n, placement_load(view, n)))
        };
        // The least load for its weight, and the first candidate with room within
        // [`SAME_LOAD`] of it.
        let relative = |&(n, load): &(NodeId, f64)| self.relative(n, load);
        let least = open().min_by(|a, b| relative(a).total_cmp(&relative(b)))?;
        let bar = relative(&least) + SAME_LOAD;
        let fits = |&(_, load): &(NodeId, f64)| room(load, least.1);
        // Room first: it reads loads already at hand, and a digest is read only for a
        // candidate that could take the target (the same first holder with room).
        let holder = open().filter(fits).find(|&(n, _)| view.holds(n, key) == Some(true));
        let first = || open().find(|c| relative(c) <= bar && fits(c));
        let (node, _) = holder.or_else(first).unwrap_or(least);
        Some((node, view.load(node)))
    }
}

/// The power of two the points asked for (`asked` in all) are divided by to stay within
/// [`MAX_POINTS`]: 1 while they fit.
fn halvings(asked: f64) -> f64 {
    if asked > MAX_POINTS {
        (asked / MAX_POINTS).log2().ceil().exp2()
    } else {
        1.0
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
        synced(nodes, &LoadView::new(nodes.len()))
    }

    fn synced(nodes: &[NodeState], view: &LoadView) -> Homes {
        let mut h = Homes::new(Capacity::Weighed);
        h.rebuild(nodes);
        h.sync(view);
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
        let names = |homes: &Homes, ns: &[NodeState], k: u64| -> Vec<u64> {
            let order = homes.candidates(TargetKey(k));
            order.as_slice().iter().map(|&n| name_of(ns, n)).collect()
        };
        for k in 0..200 {
            assert_eq!(names(&h, &nodes, k), names(&r, &reversed, k));
        }
        let room = |load: f64, _least: f64| load <= 65.0;
        assert!(homes(&[]).choose(TargetKey(1), &LoadView::new(0), room, |_| false).is_none());
    }

    #[test]
    fn holders_first_then_the_least_loaded_candidate() {
        let h = homes(&NodeState::uniform(4));
        let key = TargetKey(5);
        let mut v = LoadView::new(4);
        let order = h.candidates(key);
        let [first, second, third, fourth] = order.as_slice() else { panic!("4 candidates") };
        let room = |load: f64, _least: f64| load <= 65.0;
        assert_eq!(h.choose(key, &v, room, |_| false), Some((*first, 0.0)), "ties: the first");
        v.set_holdings(*third, Some(Arc::new(Holds(key))));
        assert_eq!(h.choose(key, &v, room, |_| false).unwrap().0, *third, "the holder");
        v.report_in_flight(*third, 70);
        assert_eq!(h.choose(key, &v, room, |_| false).unwrap().0, *first, "holder too busy");
        v.report_in_flight(*first, 30);
        v.report_in_flight(*second, 10);
        assert_eq!(h.choose(key, &v, room, |_| false).unwrap().0, *fourth, "least loaded");
        v.report_in_flight(*fourth, 20);
        assert_eq!(h.choose(key, &v, room, |_| false).unwrap().0, *second);
        assert_eq!(h.choose(key, &v, room, |n| n == *second).unwrap().0, *fourth, "skipped");
        v.report_in_flight(*second, 13);
        v.report_in_flight(*fourth, 10);
        assert_eq!(h.choose(key, &v, room, |_| false).unwrap().0, *second, "the same load");
        // This router's own requests in flight are not common knowledge: they change
        // nothing, however many, and are what the caller gets to compare.
        for _ in 0..40 {
            v.started(*second);
        }
        assert_eq!(h.choose(key, &v, room, |_| false), Some((*second, 40.0)), "own load");
        assert_eq!(h.first_fit(key, &v, |load, _| load < 14.0), Some(*second));
    }

    #[test]
    fn a_node_reading_a_large_miss_counts_as_loaded() {
        let h = homes(&NodeState::uniform(4));
        let key = TargetKey(5);
        let mut v = LoadView::new(4);
        let order = h.candidates(key);
        let [first, second, third, _] = order.as_slice() else { panic!("4 candidates") };
        let room = |load: f64, least: f64| !crate::roster::overloaded(load, least, 25.0, 65.0);
        // The reads of a few ordinary misses are within the same load: ring order decides.
        v.report_miss_bytes(*first, 3 << 20);
        assert_eq!(h.choose(key, &v, room, |_| false).unwrap().0, *first);
        // A node reading a file of tens of MiB is loaded though it answers few requests.
        v.report_miss_bytes(*first, 48 << 20);
        v.report_in_flight(*second, 3);
        assert_eq!(h.choose(key, &v, room, |_| false).unwrap().0, *second);
        // It stays loaded for a target it holds: LARD's overload rule against the least.
        v.set_holdings(*first, Some(Arc::new(Holds(key))));
        v.report_miss_bytes(*first, 200 << 20);
        assert_eq!(h.choose(key, &v, room, |_| false).unwrap().0, *second, "holder stalled");
        assert_eq!(h.first_fit(key, &v, room), Some(*second));
        // The caller's overload rule still reads this router's own count.
        v.started(*third);
        assert_eq!(h.choose(key, &v, room, |n| n == *second), Some((*third, 1.0)));
        assert_eq!(placement_load(&v, *first), 100.0, "200 MiB at 2 MiB a request");
    }

    /// Targets 0..n by their first candidate, counted per node.
    fn firsts(h: &Homes, nodes: usize, targets: u64) -> Vec<f64> {
        let mut count = vec![0.0; nodes];
        for k in 0..targets {
            count[h.candidates(TargetKey(k)).as_slice()[0].index()] += 1.0;
        }
        count
    }

    #[test]
    fn shares_follow_reported_capacity_times_weight_unless_ignored() {
        let mut nodes = NodeState::uniform(4);
        let mut v = LoadView::new(4);
        for (i, mib) in [16u64, 16, 8, 8].into_iter().enumerate() {
            v.set_capacity(NodeId(i as u32), mib << 20);
        }
        let shares = firsts(&synced(&nodes, &v), 4, 30_000);
        for (i, want) in [1.0 / 3.0, 1.0 / 3.0, 1.0 / 6.0, 1.0 / 6.0].into_iter().enumerate() {
            let got = shares[i] / 30_000.0;
            // A ring of 128 points a node spreads shares by about ±1/√128 ≈ 9%.
            assert!((got / want - 1.0).abs() < 0.15, "node {i}: {got} of the targets, not {want}");
        }
        nodes[3].weight = 2;
        let shares = firsts(&synced(&nodes, &v), 4, 30_000);
        assert!((shares[3] / shares[2] - 2.0).abs() < 0.3, "weight on top: {shares:?}");
        let mut equal = Homes::new(Capacity::Ignored);
        equal.rebuild(&NodeState::uniform(4));
        equal.sync(&v);
        let shares = firsts(&equal, 4, 30_000);
        assert!(shares.iter().all(|s| (s / 7_500.0 - 1.0).abs() < 0.15), "{shares:?}");
        // A node that reports nothing counts as larder node's default cache.
        v.set_capacity(NodeId(0), 0);
        let shares = firsts(&synced(&NodeState::uniform(4), &v), 4, 30_000);
        assert!((shares[0] / shares[1] - 4.0).abs() < 0.8, "{shares:?}");
    }

    #[test]
    fn past_its_bound_the_ring_halves_every_node_alike() {
        let points = |n: usize| homes(&NodeState::uniform(n)).ring.point_count();
        assert_eq!(points(2_048), 2_048 * 128, "within the bound nothing is halved");
        assert_eq!(points(2_049), 2_049 * 64);
        assert_eq!(points(10_000), 10_000 * 16);
        // Within one power of two a node that joins moves only the targets it takes:
        // every other target keeps its candidates in order, the newcomer slotted in.
        let before = homes(&NodeState::uniform(3_000));
        let after = homes(&NodeState::uniform(3_001));
        let newcomer = NodeId(3_000);
        let mut moved = 0;
        for k in 0..5_000 {
            let old = before.candidates(TargetKey(k));
            let new = after.candidates(TargetKey(k));
            let kept: Vec<NodeId> =
                new.as_slice().iter().copied().filter(|&n| n != newcomer).collect();
            assert_eq!(kept, old.as_slice()[..kept.len()], "target {k}");
            moved += usize::from(new.as_slice()[0] == newcomer);
        }
        assert!(moved < 20, "{moved} of 5,000 first choices went to one newcomer of 3,001");
    }

    #[test]
    fn a_warming_node_takes_a_part_of_its_share() {
        let mut v = LoadView::new(4);
        v.set_warmth(NodeId(2), 0.25);
        let shares = firsts(&synced(&NodeState::uniform(4), &v), 4, 30_000);
        let want = 0.25 / 3.25;
        assert!((shares[2] / 30_000.0 / want - 1.0).abs() < 0.3, "{shares:?}");
    }
}

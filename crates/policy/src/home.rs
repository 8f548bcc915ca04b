//! Where a target goes that this router has not placed yet, computed alike on every
//! router: the heart of one placement across many routers.
//!
//! LARD sends a new target to the least loaded node *now*, and "now" differs per router,
//! so four routers place one target on up to four nodes and the caches fill with copies.
//! Here the choice depends only on what every router shares:
//!
//! 1. the target's **candidates**: the [`CANDIDATES`] eligible nodes of highest weighted
//!    rendezvous score for it ([`Homes::candidates`]), computed from the nodes' *names*,
//!    their configured weights and the cache capacity each reports, so a node with twice
//!    the cache is first choice for about twice the targets;
//! 2. the nodes' own reports of what they hold ([`LoadView::holds`]): the first candidate
//!    that holds the target and has room (by the caller's test) wins, so a target an
//!    overloaded node shed, or one placed before a membership change, stays where its
//!    copy is, and a router started late agrees from its first request;
//! 3. otherwise the first candidate with room (plain weighted hashing while the cluster
//!    is not overloaded), and only if none has room, the least loaded of them.
//!
//! Rendezvous hashing rather than a ring, because a node's score for a target depends on
//! that node alone: a node that joins, leaves or changes weight moves only the targets it
//! gains or loses, every other target keeps its order of candidates, and a removed node's
//! targets go to their next candidate. Weights need no common unit either, so capacities
//! in bytes weigh as they are.
//!
//! Loads differ a little per router (each counts its own requests in flight), so routers
//! can disagree only while some candidate sits at the edge of having room; holders-first
//! then pulls them back to the same copy. The test for room is LARD's overload rule for
//! new targets and "below T_low" for spilling ([`crate::roster::Roster`]).

use crate::stable_hash::mix64;
use crate::{LoadView, NodeId, NodeState, TargetKey};

/// Candidates per target: enough to spill past several overloaded nodes, few enough that
/// checking the holders of each costs little.
pub const CANDIDATES: usize = 8;

/// Keeps a target's hash apart from node names (small integer keys, as the simulator
/// uses, must not correlate with names).
const KEY_SALT: u64 = 0x1405_7b7e_f767_814f;

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
        Homes { members: Vec::new(), capacity }
    }

    /// Take the current membership (only eligible nodes are candidates; a node listed
    /// twice keeps its first entry). True when it differs from the last one.
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
        self.members = members;
        changed
    }

    /// How much each member counts for: its configured weight times its reported cache
    /// capacity (a node that reports none counts as [`UNREPORTED_CAPACITY`]) times how
    /// warm it is ([`LoadView::warmth`]). Each depends on that node alone, so one node's
    /// change moves no target between two others.
    fn weights<'a>(&'a self, view: &'a LoadView) -> impl Iterator<Item = (Member, f64)> + 'a {
        self.members.iter().map(move |m| {
            let size = match self.capacity {
                Capacity::Weighed => view.capacity(m.id).unwrap_or(UNREPORTED_CAPACITY) as f64,
                Capacity::Ignored => UNREPORTED_CAPACITY as f64,
            };
            (*m, m.weight * size * view.warmth(m.id))
        })
    }

    /// `node`'s share of all members' weights (0 for a non-member): the part of the
    /// targets it is first choice for, so its fair share of the load.
    pub fn share(&self, node: NodeId, view: &LoadView) -> f64 {
        let (mut mine, mut all) = (0.0, 0.0);
        for (m, weight) in self.weights(view) {
            all += weight;
            if m.id == node {
                mine = weight;
            }
        }
        if all > 0.0 {
            mine / all
        } else {
            0.0
        }
    }

    /// The [`CANDIDATES`] members of highest weighted rendezvous score for `key`
    /// (`weight / −ln u`, `u` uniform in (0, 1) from the target and the node's name), best
    /// first. A node's chance to be first is its share of the weights.
    pub fn candidates(&self, key: TargetKey, view: &LoadView) -> Candidates {
        let mut c = Candidates::default();
        let mut scores = [0.0f64; CANDIDATES];
        let position = mix64(key.0 ^ KEY_SALT);
        for (m, weight) in self.weights(view) {
            let score = score(position, m.name, weight);
            // Insertion into the short sorted list (ties: the lower id first).
            let at = (0..c.len)
                .find(|&i| score > scores[i] || (score == scores[i] && m.id < c.nodes[i]))
                .unwrap_or(c.len);
            if at == CANDIDATES {
                continue;
            }
            let end = c.len.min(CANDIDATES - 1);
            for i in (at..end).rev() {
                scores[i + 1] = scores[i];
                c.nodes[i + 1] = c.nodes[i];
            }
            scores[at] = score;
            c.nodes[at] = m.id;
            c.len = (c.len + 1).min(CANDIDATES);
        }
        c
    }

    /// The first candidate for `key` whose load `room` accepts, whatever holds a copy:
    /// where the target belongs while that node has room.
    pub fn first_fit(
        &self,
        key: TargetKey,
        view: &LoadView,
        room: impl Fn(f64) -> bool,
    ) -> Option<NodeId> {
        self.candidates(key, view).as_slice().iter().copied().find(|&n| room(view.load(n)))
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
        let candidates = self.candidates(key, view);
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

/// A node's weighted rendezvous score for a target at `position`: `weight / −ln u` with
/// `u` in (0, 1) from the position and the node's name. Zero weight scores 0.
fn score(position: u64, name: u64, weight: f64) -> f64 {
    if weight <= 0.0 || !weight.is_finite() {
        return 0.0;
    }
    let h = mix64(position ^ mix64(name));
    // 53 bits, offset by half a step so u is never 0 or 1.
    let u = ((h >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
    weight / -u.ln()
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
        let mut h = Homes::new(Capacity::Weighed);
        h.rebuild(nodes);
        h
    }

    #[test]
    fn candidates_are_distinct_and_follow_names_not_ids() {
        let nodes = NodeState::uniform(12);
        let h = homes(&nodes);
        let v = LoadView::new(12);
        let c = h.candidates(TargetKey(77), &v);
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
            let order = homes.candidates(TargetKey(k), &v);
            order.as_slice().iter().map(|&n| name_of(ns, n)).collect()
        };
        for k in 0..200 {
            assert_eq!(names(&h, &nodes, k), names(&r, &reversed, k));
        }
        let room = |load: f64| load <= 65.0;
        assert!(homes(&[]).choose(TargetKey(1), &LoadView::new(0), room, |_| false).is_none());
    }

    #[test]
    fn holders_first_then_the_first_that_fits_then_the_least_loaded() {
        let h = homes(&NodeState::uniform(4));
        let key = TargetKey(5);
        let mut v = LoadView::new(4);
        let order = h.candidates(key, &v);
        let [first, second, third, fourth] = order.as_slice() else { panic!("4 candidates") };
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

    /// Targets 0..n by their first candidate, counted per node.
    fn firsts(h: &Homes, v: &LoadView, nodes: usize, targets: u64) -> Vec<f64> {
        let mut count = vec![0.0; nodes];
        for k in 0..targets {
            count[h.candidates(TargetKey(k), v).as_slice()[0].index()] += 1.0;
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
        let shares = firsts(&homes(&nodes), &v, 4, 30_000);
        for (i, want) in [1.0 / 3.0, 1.0 / 3.0, 1.0 / 6.0, 1.0 / 6.0].into_iter().enumerate() {
            let got = shares[i] / 30_000.0;
            assert!((got / want - 1.0).abs() < 0.05, "node {i}: {got} of the targets, not {want}");
        }
        nodes[3].weight = 2;
        let shares = firsts(&homes(&nodes), &v, 4, 30_000);
        assert!((shares[3] / shares[2] - 2.0).abs() < 0.15, "weight on top: {shares:?}");
        let mut equal = Homes::new(Capacity::Ignored);
        equal.rebuild(&NodeState::uniform(4));
        let shares = firsts(&equal, &v, 4, 30_000);
        assert!(shares.iter().all(|s| (s / 7_500.0 - 1.0).abs() < 0.05), "{shares:?}");
        // A node that reports nothing counts as larder node's default cache.
        v.set_capacity(NodeId(0), 0);
        let shares = firsts(&homes(&NodeState::uniform(4)), &v, 4, 30_000);
        assert!((shares[0] / shares[1] - 4.0).abs() < 0.4, "{shares:?}");
    }

    #[test]
    fn a_warming_node_takes_a_part_of_its_share() {
        let h = homes(&NodeState::uniform(4));
        let mut v = LoadView::new(4);
        v.set_warmth(NodeId(2), 0.25);
        let shares = firsts(&h, &v, 4, 30_000);
        let want = 0.25 / 3.25;
        assert!((shares[2] / 30_000.0 / want - 1.0).abs() < 0.08, "{shares:?}");
    }
}

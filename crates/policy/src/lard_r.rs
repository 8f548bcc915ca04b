//! `lard-r`: LARD with replication (Pai et al., ASPLOS 1998, "LARD/R").
//!
//! A target maps to a server set. A hot target whose least-loaded server is overloaded
//! gains the least-loaded node of the cluster; a set left unchanged for K
//! (`spec.shrink_after`) loses its most loaded member, so replicas fade once the heat is
//! gone:
//!
//! ```text
//! if serverSet[target] = ∅: n ← least loaded node; add n to serverSet
//! else: n ← least loaded node in serverSet
//!     if (n.load > T_high and ∃ node: load < T_low) or n.load ≥ 2·T_high:
//!         p ← least loaded node; add p to serverSet; n ← p
//!     if |serverSet| > 1 and time() − serverSet.lastMod > K:
//!         remove the most loaded node from serverSet
//! if serverSet changed: serverSet.lastMod ← time()
//! send to n
//! ```
//!
//! With [`crate::PlacementMode::Shared`] (the default) the first node of a set and each node
//! added come from the target's candidates by name ([`crate::home`]), a node
//! that reports holding a copy first, so every router grows the same set;
//! [`crate::PlacementMode::PerRouter`] keeps the paper's "least loaded node", for comparison,
//! and shared placement follows it while its router is alone ([`crate::roster`]).
//!
//! The member removed is never the one the request is sent to. Nodes that go down or
//! leave are taken out of every set at once (a set left empty is dropped).
//!
//! **Flash crowds.** Waiting for T_high lets a crowd overload one node first. With shared
//! placement a target that takes a large share of this router's requests
//! ([`crate::heat`]) is served at once from its first few candidates in the order every
//! router computes ([`Roster::candidates`]), as many as its share calls for; load only
//! chooses among them, and adds the next candidate when even the least loaded of them is
//! overloaded. Every router seeing the same crowd therefore serves it from the same nodes.
//! When the heat is gone the set goes back to its first member and LARD/R's rule above.
//! A router alone in front of a few nodes ([`crate::roster`]) has no one to agree with
//! and follows LARD/R's rule for hot targets too.
//!
//! **On a peer** (a distributor in a node: [`LoadView::local`]) a request served by a
//! node other than the peer's own crosses two nodes' links, the owner's and this peer's.
//! So the peer's own node serves whatever it can without a miss: among a target's servers
//! it comes first while within T_high, and the hottest targets get a copy there
//! ([`crate::local_copies`], up to `spec.local_copies` of its cache), filled from the
//! target's first server. A router has no node of its own; none of this applies to it.

use crate::decayed::Decayed;
use crate::heat::{HeatConfig, HeatMeter, TargetHeat};
use crate::home::CANDIDATES;
use crate::local_copies::{self, LocalCopies};
use crate::roster::{least_of, most_of, overloaded, Roster};
use crate::server_set::ServerSet;
use crate::table::TargetTable;
use crate::{
    LoadView, Nanos, NodeId, NodeState, PlacementMode, Policy, PolicySpec, PolicyStats, Target,
    TargetKey,
};

/// One target's servers and when the set last changed.
struct Entry {
    servers: ServerSet,
    changed_at: Nanos,
    /// The shared-choice epoch the set was last checked at ([`Roster::epoch`]).
    epoch: u64,
    heat: TargetHeat,
    /// While the set is a hot target's replicas: how many it was built with (0: it is not).
    hot_set: usize,
    /// Its recent requests, on a peer that keeps local copies ([`local_copies::HALF_LIFE`]).
    recent: Decayed,
}

pub struct LardR {
    t_low: f64,
    t_high: f64,
    shrink_after: Nanos,
    roster: Roster,
    table: TargetTable<Entry>,
    meter: HeatMeter,
    replications: u64,
    /// The share of the peer's own node's cache local copies may take (0: none).
    local_share: f64,
    copies: LocalCopies,
}

impl LardR {
    pub fn from_spec(spec: &PolicySpec) -> Self {
        // Heat replicas need an order of candidates every router shares; a shared
        // placement keeps its meter running while its router is alone (and LARD/R's own
        // rule decides, [`Roster::mode`]), so a crowd is known when a second router comes.
        let heat = match spec.placement.is_shared() {
            true => spec.heat,
            false => HeatConfig { share: 0.0, ..spec.heat },
        };
        LardR {
            t_low: spec.t_low,
            t_high: spec.t_high,
            shrink_after: spec.shrink_after,
            roster: Roster::new(spec.placement),
            table: TargetTable::new(spec.table_cap),
            meter: HeatMeter::new(heat),
            replications: 0,
            local_share: spec.local_copies,
            copies: LocalCopies::default(),
        }
    }

    /// The peer's own node when it may take local copies now: known, eligible, and
    /// copies turned on.
    fn copying_node(&self, view: &LoadView) -> Option<NodeId> {
        let local = view.local()?;
        (self.local_share > 0.0 && self.roster.is_eligible(local)).then_some(local)
    }

    /// Where a hot target's request goes: the least loaded of its first `heat.replicas()`
    /// candidates, the set rebuilt from them when their number or the candidates changed,
    /// and grown by the next candidate when even the least loaded is overloaded. The
    /// candidates are computed only on a rebuild, so a hot target's request costs about
    /// what any other's does.
    fn pick_hot(&mut self, key: TargetKey, view: &LoadView, now: Nanos) -> Option<NodeId> {
        let epoch = self.roster.epoch(view);
        let cap = self.roster.eligible().len().min(CANDIDATES);
        let (_, least) = self.roster.least_for(key, view)?;
        let set = self.table.get_mut(key)?;
        for _ in 0..2 {
            let want = set.heat.replicas().min(cap);
            if set.hot_set != want || set.epoch != epoch || set.servers.len() != want {
                let candidates = self.roster.candidates(key)?;
                let servers = ServerSet::of(candidates.as_slice().get(..want)?)?;
                let added = servers.iter().filter(|&n| !set.servers.contains(n)).count();
                self.replications += added as u64;
                set.servers = servers;
                set.hot_set = want;
                set.epoch = epoch;
                set.changed_at = now;
            }
            let least_member = least_of(set.servers.iter(), view)?;
            let (node, load) = own_first(least_member, &set.servers, view, self.t_high);
            // Overload needs load > T_high (2·T_high > T_high as T_high > T_low ≥ 0).
            if load <= self.t_high || want == cap {
                return Some(node);
            }
            if !overloaded(load, least, self.t_low, self.t_high) {
                return Some(node);
            }
            set.heat.grow(cap);
        }
        least_of(set.servers.iter(), view).map(|(node, _)| node)
    }
}

impl Policy for LardR {
    fn name(&self) -> &'static str {
        "lard-r"
    }

    fn pick(&mut self, target: &Target, view: &LoadView, now: Nanos) -> Option<NodeId> {
        self.roster.sync(view);
        let epoch = self.roster.epoch(view);
        let live = self.roster.eligible().len();
        let copying = self.copying_node(view);
        let Some(set) = self.table.get_mut(target.key) else {
            let (node, _) = self.roster.place(target.key, view, self.t_low, self.t_high)?;
            let servers = ServerSet::new(node);
            let mut heat = TargetHeat::default();
            self.meter.record(&mut heat, now, live, live.min(CANDIDATES));
            let mut recent = Decayed::default();
            if copying.is_some() {
                recent.add(1.0, now, local_copies::HALF_LIFE);
            }
            let entry = Entry { servers, changed_at: now, epoch, heat, hot_set: 0, recent };
            self.table.insert(target.key, entry);
            return Some(node);
        };
        self.meter.record(&mut set.heat, now, live, live.min(CANDIDATES));
        if let Some(local) = copying {
            set.recent.add(1.0, now, local_copies::HALF_LIFE);
            let (capacity, mean) = (view.capacity(local), view.mean_object(local));
            let budget = local_copies::budget(self.local_share, capacity, mean);
            let room = local_copies::room(capacity, view.free_bytes(local), mean);
            let copied = self.copies.offer(target.key, &set.recent, now, budget, room);
            if copied && view.load(local) <= self.t_high {
                return Some(local);
            }
        }
        if set.heat.is_hot() && self.roster.mode().is_shared() {
            return self.pick_hot(target.key, view, now);
        }
        if set.hot_set > 0 {
            // The heat is gone: back to the first replica, LARD/R's rule from here.
            set.servers = ServerSet::new(set.servers.first());
            set.hot_set = 0;
            set.changed_at = now;
        }
        if set.epoch != epoch {
            // The shared first choices changed since (a node joined or came back, or a
            // capacity or warmth changed): a target on one node goes where it now
            // belongs; a replicated one gains its home and sheds the rest as usual.
            set.epoch = epoch;
            let home = self.roster.home(target.key, view, self.t_low, self.t_high);
            if let Some(home) = home.filter(|&h| !set.servers.contains(h)) {
                if set.servers.len() == 1 {
                    set.servers = ServerSet::new(home);
                } else {
                    set.servers.insert(home);
                }
                set.changed_at = now;
            }
        }
        let least_member = least_of(set.servers.iter(), view)?;
        let (mut node, load) = own_first(least_member, &set.servers, view, self.t_high);
        // Overload needs load > T_high (2·T_high > T_high as T_high > T_low ≥ 0).
        if load > self.t_high {
            // The node to add, when placement is shared: a candidate within T_high that
            // reports holding a copy (a replica another router made, or one this router
            // dropped), which joins whenever it is less loaded, as serving there costs no
            // miss; else the least loaded candidate, by LARD/R's overload rule. So replicas
            // add up across routers: what one router replicated, every router that finds
            // the target's node busy uses. Per router (and for a router alone): the least
            // loaded node, by LARD/R's overload rule whatever it holds, as in the paper.
            let shared = self.roster.mode().is_shared();
            let members = &set.servers;
            let spill = self.roster.spill(target.key, view, self.t_high, |n| members.contains(n));
            if let Some((add, add_load)) = spill {
                let held = shared && view.holds(add, target.key) == Some(true);
                let worth = match held {
                    true => add_load < load,
                    false => overloaded(load, add_load, self.t_low, self.t_high),
                };
                if worth && !members.contains(add) {
                    set.servers.insert(add);
                    set.changed_at = now;
                    self.replications += 1;
                    node = add;
                }
            }
        }
        if set.servers.len() > 1 && now.saturating_sub(set.changed_at) > self.shrink_after {
            let others = set.servers.iter().filter(|&m| m != node);
            if let Some((most, _)) = most_of(others, view) {
                // `node` stays, so the set is not emptied.
                let _ = set.servers.retain(|m| m != most);
                set.changed_at = now;
            }
        }
        Some(node)
    }

    fn upcoming(&self, target: &Target, touch: &mut dyn FnMut(*const u8, usize)) {
        self.table.upcoming(target.key, touch);
    }

    fn membership(&mut self, nodes: &[NodeState], now: Nanos) {
        if self.roster.update(nodes) {
            let roster = &self.roster;
            self.table.retain(|_, set| {
                let before = set.servers.len();
                let kept = set.servers.retain(|m| roster.is_eligible(m));
                if set.servers.len() != before {
                    set.changed_at = now;
                }
                kept
            });
        }
    }

    fn placement_followed(&self) -> Option<PlacementMode> {
        Some(self.roster.mode())
    }

    fn stats(&self) -> PolicyStats {
        PolicyStats {
            table_entries: self.table.len() as u64,
            reassignments: 0,
            replications: self.replications,
            evictions: self.table.evictions(),
        }
    }

    fn placement(&self, target: &Target) -> Vec<NodeId> {
        self.table.peek(target.key).map_or_else(Vec::new, |set| set.servers.to_vec())
    }
}

/// Of a set whose least loaded member is `least`, the member to serve from: on a peer its
/// own node, when a member within `t_high` (a hop saved), else `least`; with its load.
#[inline]
fn own_first(
    least: (NodeId, f64),
    servers: &ServerSet,
    view: &LoadView,
    t_high: f64,
) -> (NodeId, f64) {
    match view.local() {
        Some(own) if own != least.0 && servers.contains(own) => {
            let load = view.load(own);
            if load <= t_high {
                (own, load)
            } else {
                least
            }
        }
        _ => least,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PlacementMode;
    use crate::{PolicyKind, SECOND};

    /// The paper's LARD/R (one front-end, least loaded choices).
    fn lard_r(n: usize) -> LardR {
        let spec = PolicySpec {
            placement: PlacementMode::PerRouter,
            ..PolicySpec::new(PolicyKind::LardR)
        };
        let mut p = LardR::from_spec(&spec);
        p.membership(&NodeState::uniform(n), 0);
        p
    }

    fn load(view: &mut LoadView, node: NodeId, requests: u32) {
        for _ in 0..requests {
            view.started(node);
        }
    }

    #[test]
    fn a_hot_target_grows_its_set_and_it_shrinks_after_k() {
        let mut p = lard_r(3);
        let mut v = LoadView::new(3);
        let t = Target::from_key(1);
        let first = p.pick(&t, &v, 0).unwrap();
        load(&mut v, first, 60);
        assert_eq!(p.pick(&t, &v, SECOND), Some(first), "below T_high: no replica");
        load(&mut v, first, 10);
        let second = p.pick(&t, &v, 2 * SECOND).unwrap();
        assert_ne!(second, first, "above T_high with idle nodes: a replica");
        assert_eq!(p.stats().replications, 1);
        assert_eq!(p.placement(&t).len(), 2);
        // The new replica is idle, so it serves while the set is unchanged.
        assert_eq!(p.pick(&t, &v, 3 * SECOND), Some(second));
        assert_eq!(p.placement(&t).len(), 2);
        // K = 20 s without change: the most loaded member (the first) leaves.
        assert_eq!(p.pick(&t, &v, 23 * SECOND), Some(second));
        assert_eq!(p.placement(&t), vec![second]);
        assert_eq!(p.stats().replications, 1);
    }

    #[test]
    fn grows_at_twice_t_high_even_with_no_idle_node() {
        let mut p = lard_r(2);
        let mut v = LoadView::new(2);
        let t = Target::from_key(1);
        let first = p.pick(&t, &v, 0).unwrap();
        let other = NodeId(1 - first.0);
        load(&mut v, first, 130);
        load(&mut v, other, 100);
        assert_eq!(p.pick(&t, &v, 0), Some(other));
        assert_eq!(p.placement(&t).len(), 2);
        assert_eq!(p.pick(&t, &v, 0), Some(other), "no duplicate members");
        assert_eq!(p.placement(&t).len(), 2);
    }

    #[test]
    fn down_nodes_leave_every_set_and_come_back_empty() {
        let mut p = lard_r(2);
        let mut v = LoadView::new(2);
        let t = Target::from_key(1);
        let first = p.pick(&t, &v, 0).unwrap();
        load(&mut v, first, 70);
        let second = p.pick(&t, &v, 0).unwrap();
        assert_eq!(p.placement(&t).len(), 2);
        let mut nodes = NodeState::uniform(2);
        nodes[first.index()].up = false;
        p.membership(&nodes, 1);
        assert_eq!(p.placement(&t), vec![second]);
        nodes[second.index()].up = false;
        p.membership(&nodes, 2);
        assert_eq!(p.stats().table_entries, 0, "an emptied set is dropped");
        assert_eq!(p.pick(&t, &v, 2), None);
        nodes[first.index()].up = true;
        p.membership(&nodes, 3);
        assert_eq!(p.pick(&t, &v, 3), Some(first), "the target returns to a node that is back");
    }

    #[test]
    fn a_hot_target_takes_its_next_candidate_when_its_replicas_are_overloaded() {
        let mut p = LardR::from_spec(&PolicySpec::new(PolicyKind::LardR));
        p.membership(&NodeState::uniform(4), 0);
        let mut v = LoadView::new(4);
        let hot = Target::from_key(1);
        // A third of 400 requests a second on one target: hot, on 3 of the 4 nodes (each
        // replica at most half a node's fair share).
        for i in 0..400u64 {
            let t = if i % 3 == 0 { hot } else { Target::from_key(100 + i % 50) };
            p.pick(&t, &v, i * SECOND / 400);
        }
        let order = p.roster.candidates(hot.key).unwrap();
        let order = order.as_slice();
        assert_eq!(p.placement(&hot), order[..3].to_vec());
        let replications = p.stats().replications;
        for &node in &order[..3] {
            load(&mut v, node, 70);
        }
        assert_eq!(p.pick(&hot, &v, SECOND), Some(order[3]), "all overloaded, a node idle");
        assert_eq!(p.placement(&hot), order.to_vec());
        assert_eq!(p.stats().replications, replications + 1);
    }

    #[test]
    fn a_peer_serves_from_its_own_node_among_a_targets_servers() {
        let mut p = lard_r(3);
        let mut v = LoadView::new(3);
        let t = Target::from_key(1);
        let first = p.pick(&t, &v, 0).unwrap();
        load(&mut v, first, 70);
        let second = p.pick(&t, &v, SECOND).unwrap();
        assert_ne!(second, first);
        for _ in 0..40 {
            v.finished(first);
        }
        // `first` carries 30, `second` 1: a router takes the least loaded.
        assert_eq!(p.pick(&t, &v, 2 * SECOND), Some(second));
        // On the peer whose own node is `first`, within T_high: its own node.
        v.set_local(Some(first));
        assert_eq!(p.pick(&t, &v, 3 * SECOND), Some(first));
        // Its own node past T_high: the least loaded again.
        load(&mut v, first, 40);
        assert_eq!(p.pick(&t, &v, 4 * SECOND), Some(second));
    }

    /// A view of 4 nodes with caches of 1 MiB holding 64 KiB objects, half full, so
    /// local copies of an eighth of a cache are 2 and there is room for them.
    fn peers_view(local: Option<NodeId>) -> LoadView {
        let mut v = LoadView::new(4);
        for i in 0..4 {
            v.set_capacity(NodeId(i), 1 << 20);
            v.set_cached(NodeId(i), 1 << 19, 8);
        }
        v.set_local(local);
        v
    }

    /// Targets whose first choice is not `node`, `count` of them.
    fn owned_elsewhere(p: &mut LardR, v: &LoadView, node: NodeId, count: usize) -> Vec<Target> {
        p.roster.sync(v);
        let targets: Vec<Target> = (1..1000u64)
            .map(Target::from_key)
            .filter(|t| p.roster.candidates(t.key).unwrap().as_slice()[0] != node)
            .take(count)
            .collect();
        assert_eq!(targets.len(), count);
        targets
    }

    #[test]
    fn a_peer_serves_its_hottest_targets_from_copies_on_its_own_node() {
        let own = NodeId(0);
        let mut p = LardR::from_spec(&PolicySpec::new(PolicyKind::LardR));
        p.membership(&NodeState::uniform(4), 0);
        let v = peers_view(Some(own));
        let t = owned_elsewhere(&mut p, &v, own, 4);
        let (hot, warm, cold) = (t[0], t[1], t[2]);
        let owner = |p: &LardR, t: &Target| p.placement(t)[0];
        // First requests: each target goes to its owner.
        for (i, target) in [hot, warm, cold].iter().enumerate() {
            assert_ne!(p.pick(target, &v, i as Nanos * SECOND / 10), Some(own));
        }
        // The second request for `hot` makes it a copy: served by the peer's own node,
        // while its placement still names its owner (which the copy is filled from).
        let mut now = SECOND;
        assert_eq!(p.pick(&hot, &v, now), Some(own));
        assert_ne!(owner(&p, &hot), own);
        for _ in 0..5 {
            now += SECOND / 10;
            assert_eq!(p.pick(&hot, &v, now), Some(own));
            assert_eq!(p.pick(&warm, &v, now), Some(own), "room for a second copy");
        }
        // No room for a third: `cold`, twice as often now as before, stays on its owner.
        for _ in 0..3 {
            now += SECOND / 10;
            assert_eq!(p.pick(&cold, &v, now), Some(owner(&p, &cold)));
        }
        // A fourth target far hotter than `warm` takes its place.
        let rising = t[3];
        for _ in 0..30 {
            now += SECOND / 40;
            p.pick(&rising, &v, now);
        }
        assert_eq!(p.pick(&rising, &v, now), Some(own));
        assert_eq!(p.pick(&warm, &v, now), Some(owner(&p, &warm)), "its copy went");
        assert_eq!(p.pick(&hot, &v, now), Some(own));
    }

    #[test]
    fn a_router_and_a_peer_without_copies_keep_every_target_on_its_owner() {
        let mut spec = PolicySpec::new(PolicyKind::LardR);
        spec.local_copies = 0.0;
        for (spec, local) in [(PolicySpec::new(PolicyKind::LardR), None), (spec, Some(NodeId(0)))] {
            let mut p = LardR::from_spec(&spec);
            p.membership(&NodeState::uniform(4), 0);
            let v = peers_view(local);
            let hot = owned_elsewhere(&mut p, &v, NodeId(0), 1)[0];
            let first = p.pick(&hot, &v, 0).unwrap();
            // 20 a second: not a flash crowd (at least 50 a second).
            for i in 1..50 {
                assert_eq!(p.pick(&hot, &v, i * SECOND / 20), Some(first));
            }
        }
    }

    #[test]
    fn the_table_stays_within_its_cap() {
        let mut spec = PolicySpec::new(PolicyKind::LardR);
        spec.table_cap = 5;
        let mut p = LardR::from_spec(&spec);
        p.membership(&NodeState::uniform(2), 0);
        let v = LoadView::new(2);
        for k in 0..50 {
            p.pick(&Target::from_key(k), &v, k);
        }
        let s = p.stats();
        assert_eq!((s.table_entries, s.evictions), (5, 45));
    }
}

//! The cluster as the router knows it: membership (nodes by address, their weights and
//! health) and the one placement (the policy and its load view), each behind its lock,
//! and the steps that take those locks in order. The parts, as pingora's load-balancing
//! crate splits them:
//! - `settings`: the config compiled for the request path, swapped whole on reload;
//! - `node`: what is known of one node slot;
//! - `placement`: the policy, the load view and the node slots behind one mutex: pick,
//!   finish, load reports;
//! - `membership`: the config and discovery's nodes reconciled into node slots, and told
//!   to the policy;
//! - `clock`: the time placement counts in.
//!
//! The placement's mutex is taken twice per request, to pick and when done. The
//! hot-target counter has a lock of its own, and upstream connection pools one small lock
//! per node, so neither lengthens the placement's critical section.
//!
//! What each node's health is lives in [`crate::health`] (a pure state machine); this
//! file applies its flips to the membership. Counting lives in [`crate::stats`].

mod clock;
mod membership;
mod node;
mod placement;
mod settings;

use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::{Duration, Instant};

use policy::{NodeId, Outcome, Target};

pub(crate) use membership::Change;
use membership::Sources;
pub(crate) use node::NodeStatus;
pub(crate) use placement::{Finished, Placement};
pub(crate) use settings::Settings;

use crate::config::{NodeConfig, RouterConfig};
use crate::discovery::Discovered;
use crate::error::RouterError;
use crate::handoff::HandoffCounts;
use crate::health::{self, Failure, Flip, Health};
use crate::hot::HotTargets;
use crate::http2::calm_down::CalmDown;
use crate::http2::counts::Http2Counts;
use crate::log::event;
use crate::monitor::NodeReport;
use crate::poison::Recover;
use crate::upstream::Upstream;

/// Where a request goes.
pub(crate) struct Dispatch {
    pub node: NodeId,
    pub name: Arc<str>,
    pub upstream: Arc<Upstream>,
    /// Told to the node (`X-Larder-Target`), so its holdings digest names the target;
    /// only for policies that place targets.
    pub hint: Option<wire::TargetHint>,
    /// Told to the node (`X-Larder-Peer`): the node to fill a miss from (a pointer, so a
    /// dispatch naming none stays about as small as before).
    pub peer: Option<Arc<Upstream>>,
}

pub(crate) struct Cluster {
    settings: RwLock<Arc<Settings>>,
    upstreams: RwLock<Vec<Arc<Upstream>>>,
    placement: Mutex<Placement>,
    hot: Mutex<HotTargets>,
    sources: Mutex<Sources>,
    discovered: Mutex<Discovered>,
    http2: Arc<Http2Counts>,
    handoff: HandoffCounts,
    calm_down: CalmDown,
    /// This router's id on its polls of the nodes' load reports, random per start, so a
    /// node counts the routers polling it and a router alone learns it is.
    poller: wire::PollerId,
}

impl Cluster {
    pub(crate) fn new(config: RouterConfig) -> Result<Cluster, RouterError> {
        config.validate()?;
        let ids = config.config_order_ids();
        let placement = Placement::new(&config, config.policy_spec(&ids)?)?;
        let upstreams =
            config.nodes.iter().map(|n| Arc::new(Upstream::new(&n.address()))).collect();
        let hot = HotTargets::new(config.limits.hot_targets);
        let sources = Sources { given: config.clone(), found: Vec::new() };
        let settings = Settings::new(config)?;
        let rules = settings.health;
        let cluster = Cluster {
            settings: RwLock::new(Arc::new(settings)),
            upstreams: RwLock::new(upstreams),
            placement: Mutex::new(placement),
            hot: Mutex::new(hot),
            sources: Mutex::new(sources),
            discovered: Mutex::new(Discovered::default()),
            http2: Arc::default(),
            handoff: HandoffCounts::default(),
            calm_down: CalmDown::default(),
            poller: fresh_poller_id(),
        };
        cluster.placement().push_membership(&rules, Instant::now());
        Ok(cluster)
    }

    /// The id this router names on its polls of the nodes' load reports.
    pub(crate) fn poller(&self) -> wire::PollerId {
        self.poller
    }

    pub(crate) fn settings(&self) -> Arc<Settings> {
        self.settings.read().recover().clone()
    }

    pub(crate) fn placement(&self) -> MutexGuard<'_, Placement> {
        self.placement.lock().recover()
    }

    pub(crate) fn hot(&self) -> MutexGuard<'_, HotTargets> {
        self.hot.lock().recover()
    }

    /// Discovery's state (the loop's and `/stats`').
    pub(crate) fn discovered(&self) -> MutexGuard<'_, Discovered> {
        self.discovered.lock().recover()
    }

    /// What HTTP/2 connections count, for `/stats` and `/metrics`.
    pub(crate) fn http2_counts(&self) -> Arc<Http2Counts> {
        self.http2.clone()
    }

    /// What connection handoffs count, for `/stats` and `/metrics`.
    pub(crate) fn handoff_counts(&self) -> &HandoffCounts {
        &self.handoff
    }

    /// The client addresses cut off for abusing HTTP/2, refused for a while.
    pub(crate) fn calm_down(&self) -> &CalmDown {
        &self.calm_down
    }

    fn sources(&self) -> MutexGuard<'_, Sources> {
        self.sources.lock().recover()
    }

    /// How many nodes the given config lists itself.
    pub(crate) fn static_nodes(&self) -> usize {
        self.sources().given.nodes.len()
    }

    pub(crate) fn upstreams(&self) -> Vec<Arc<Upstream>> {
        self.upstreams.read().recover().clone()
    }

    fn upstream(&self, node: NodeId) -> Option<Arc<Upstream>> {
        self.upstreams.read().recover().get(node.index()).cloned()
    }

    /// Choose a node for `target`, never `exclude` (the node a retried request failed on);
    /// `at` is about now. `to_local`: the request already passed another peer's
    /// distributor, so this peer's own node (`local_node`) serves it.
    pub(crate) fn pick(
        &self,
        target: &Target,
        path: &str,
        exclude: Option<NodeId>,
        at: Instant,
        to_local: Option<std::net::SocketAddr>,
    ) -> Option<Dispatch> {
        self.hot().record(target, path);
        let picked = match to_local {
            None => self.placement().pick(target, exclude, at)?,
            Some(addr) => self.placement().pick_at(addr, target, exclude, at)?,
        };
        match self.upstream(picked.node) {
            Some(upstream) => {
                let peer = picked.peer.and_then(|n| self.upstream(n));
                let (node, name, hint) = (picked.node, picked.name, picked.hint);
                Some(Dispatch { node, name, upstream, hint, peer })
            }
            None => {
                let failed =
                    Finished { outcome: Outcome::Failed, upstream_time: None, answered: None, at };
                self.finish(picked.node, target, &failed);
                None
            }
        }
    }

    /// A request dispatched to `node` ended.
    pub(crate) fn finish(&self, node: NodeId, target: &Target, how: &Finished) {
        self.placement().finish(node, target, how);
    }

    /// A request failed on `node` (about `at`) in a way that says something about the node.
    pub(crate) fn failed(&self, node: NodeId, failure: Failure, at: Instant) {
        self.health_event(node, at, |h, rules| h.request_failed(failure, at, rules));
    }

    /// The result of one active check of `node`, finished at `now`.
    pub(crate) fn check_result(&self, node: NodeId, ok: bool, now: Instant) {
        self.health_event(node, now, |h, rules| h.observe(ok, now, rules));
    }

    /// Apply what `event` makes of `node`'s health (about `at`).
    fn health_event(
        &self,
        node: NodeId,
        at: Instant,
        event: impl FnOnce(&mut Health, &health::Rules) -> Option<Flip>,
    ) {
        let settings = self.settings();
        let mut p = self.placement();
        let Some(status) = p.nodes.get_mut(node.index()) else { return };
        if let Some(flip) = event(&mut status.health, &settings.health) {
            self.flipped(&mut p, node, flip, &settings.health, at);
        }
    }

    /// Periodic health upkeep at `now`: without active checks, let ejected nodes back when
    /// their time is up; while a node is in slow start, push its rising weight.
    pub(crate) fn tick(&self, now: Instant) {
        let settings = self.settings();
        let rules = &settings.health;
        let mut p = self.placement();
        if !rules.active_checks {
            for status in p.nodes.iter_mut().filter(|s| s.configured) {
                if let Some(flip) = status.health.ejection_over(now) {
                    announce(status, flip);
                }
            }
        }
        if p.nodes.iter().any(|n| n.health.ramping(now, rules)) {
            p.push_membership(rules, now);
        }
    }

    /// Apply a change of `node`'s health: say so, drop its pooled connections when it
    /// went down, and tell the policy.
    fn flipped(
        &self,
        p: &mut Placement,
        node: NodeId,
        flip: Flip,
        rules: &health::Rules,
        now: Instant,
    ) {
        announce(&p.nodes[node.index()], flip);
        if let (Flip::Down(_), Some(u)) = (flip, self.upstream(node)) {
            u.take_down();
        }
        p.push_membership(rules, now);
    }

    /// Fold a node's own load report, received at `at`, into the view.
    pub(crate) fn report_load(&self, node: NodeId, report: NodeReport, at: Instant) {
        let mut p = self.placement();
        if let Some(flip) = p.report_load(node, report, at) {
            let rules = self.settings().health;
            self.flipped(&mut p, node, flip, &rules, at);
        }
    }

    /// See [`Placement::forget_stale_reports`].
    pub(crate) fn forget_stale_reports(&self, now: Instant, max_age: Duration) {
        self.placement().forget_stale_reports(now, max_age);
    }

    /// The configured nodes `wanted` selects, with their upstreams (for background probes).
    pub(crate) fn probe_targets(
        &self,
        wanted: impl Fn(&NodeStatus) -> bool,
    ) -> Vec<(NodeId, Arc<Upstream>)> {
        let ids = self.placement().configured(wanted);
        ids.into_iter().filter_map(|id| Some((id, self.upstream(id)?))).collect()
    }

    /// Apply a new config (with the nodes discovery found): nodes by address, weights,
    /// policy parameters, limits. Checked once, as merged, in `apply`.
    pub(crate) fn reload(&self, config: RouterConfig) -> Result<(), RouterError> {
        let mut sources = self.sources();
        self.apply(Sources::merged(&config, &sources.found))?;
        sources.given = config;
        Ok(())
    }

    /// The nodes discovery found now, applied like a reload: a new node joins, a node no
    /// longer found leaves the membership (no new picks; requests in flight finish).
    /// `None` when nothing changed.
    pub(crate) fn set_discovered(
        &self,
        found: Vec<NodeConfig>,
    ) -> Result<Option<Change>, RouterError> {
        let mut sources = self.sources();
        if sources.found == found {
            return Ok(None);
        }
        self.apply(Sources::merged(&sources.given, &found))?;
        let change = sources.change(&found);
        sources.found = found;
        Ok(Some(change))
    }

    /// Make `config` the membership and the settings.
    fn apply(&self, config: RouterConfig) -> Result<(), RouterError> {
        config.validate()?;
        let settings = Arc::new(Settings::new(config)?);
        let mut p = self.placement();
        p.reconcile(&settings.config, &self.upstreams)?;
        let rules = settings.health;
        *self.settings.write().recover() = settings;
        p.push_membership(&rules, Instant::now());
        Ok(())
    }
}

/// The "node down" / "node up" event line.
fn announce(status: &NodeStatus, flip: Flip) {
    match flip {
        Flip::Down(reason) => {
            event("warn", "node down", &[("node", &status.name), ("reason", &reason)])
        }
        Flip::Up(reason) => {
            event("info", "node up", &[("node", &status.name), ("reason", &reason)])
        }
    }
}

/// A random id: the standard library's per-process random hash keys (a fresh pair for
/// every call), over the process id. Two routers, in one process or two, differ.
fn fresh_poller_id() -> wire::PollerId {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    wire::PollerId(h.finish())
}

#[cfg(test)]
pub(crate) mod tests {
    use std::net::SocketAddr;

    use super::*;
    use crate::health::WEIGHT_SCALE;

    pub(crate) fn config(n: u16) -> RouterConfig {
        RouterConfig {
            nodes: (0..n)
                .map(|i| NodeConfig::new(SocketAddr::from(([127, 0, 0, 1], 1000 + i))))
                .collect(),
            ..RouterConfig::default()
        }
    }

    fn ended(outcome: Outcome, at: Instant) -> Finished {
        Finished { outcome, upstream_time: None, answered: None, at }
    }

    #[test]
    fn a_connect_failure_ejects_and_a_retry_avoids_the_node() {
        let c = Cluster::new(config(2)).unwrap();
        let t = Target::from_key(7);
        let now = Instant::now();
        let first = c.pick(&t, "/", None, now, None).unwrap();
        c.finish(first.node, &t, &ended(Outcome::Failed, now));
        c.failed(first.node, Failure::Connect, now);
        for _ in 0..4 {
            let d = c.pick(&t, "/", Some(first.node), now, None).unwrap();
            assert_ne!(d.node, first.node);
            c.finish(d.node, &t, &ended(Outcome::Ok, now));
        }
        assert!(!c.placement().nodes[first.node.index()].health.is_up());
    }

    #[test]
    fn checks_bring_a_node_back_with_slow_start() {
        let c = Cluster::new(config(2)).unwrap();
        let now = Instant::now();
        c.failed(NodeId(1), Failure::Connect, now);
        c.check_result(NodeId(1), true, now);
        assert!(!c.placement().nodes[1].health.is_up(), "rise is 2");
        c.check_result(NodeId(1), true, now);
        let p = c.placement();
        assert!(p.nodes[1].health.is_up());
        let rules = c.settings().health;
        let w = p.nodes[1].health.weight(p.nodes[1].weight, Instant::now(), &rules);
        assert!(w < WEIGHT_SCALE, "ramping, got {w}");
    }

    #[test]
    fn a_node_that_refused_connects_is_back_when_its_load_report_answers() {
        let c = Cluster::new(config(2)).unwrap();
        let now = Instant::now();
        c.failed(NodeId(1), Failure::Connect, now);
        assert!(!c.placement().nodes[1].health.is_up());
        let report = crate::monitor::parse_report(br#"{"cpu_pct": 5}"#, 1e8).unwrap();
        c.report_load(NodeId(1), report, now);
        assert!(c.placement().nodes[1].health.is_up(), "listening again: back at once");
    }
}

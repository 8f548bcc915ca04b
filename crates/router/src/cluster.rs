//! The cluster as the router knows it: membership (nodes by address, their weights and
//! health) and the one placement (the policy and its load view).
//!
//! Policies are `Send` but not `Sync`, and a placement must be one placement, not one per
//! thread (two threads disagreeing on where `/a` lives would halve locality). So the
//! policy, the load view and per-node status sit behind one mutex ([`Placement`]), taken
//! twice per request — to pick and when done — for a few hundred nanoseconds each. The
//! hot-target counter has a lock of its own, and upstream connection pools one small lock
//! per node, so neither lengthens the placement's critical section.
//!
//! What each node's health is lives in [`crate::health`] (a pure state machine); this
//! file applies its flips to the membership. Counting lives in [`crate::stats`].
//!
//! Node ids are dense and follow addresses: a node keeps its id across reloads, a new
//! address gets the next id, a removed node keeps its slot but leaves the membership. A
//! removed node that comes back under its name on a new address (discovery's SRV
//! targets) takes its old slot again.
//!
//! The membership is the given config's nodes plus the nodes DNS discovery found
//! ([`Sources`]); a reload and a discovery change both apply their union the same way.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::{Duration, Instant};

use policy::warmup::{Warmup, WarmupConfig};
use policy::{
    LoadView, Nanos, NodeId, NodeState, Outcome, Policy, PolicySpec, Target, TargetMapper,
};

use crate::agreement::Agreement;
use crate::config::{NodeConfig, RouterConfig};
use crate::discovered::Discovered;
use crate::error::RouterError;
use crate::health::{self, Failure, Flip, Health};
use crate::hot::HotTargets;
use crate::log::event;
use crate::monitor::NodeReport;
use crate::stats::{Answered, NodeStats};
use crate::upstream::Upstream;

/// The parts of the config read on every request, swapped whole on reload.
pub(crate) struct Settings {
    pub config: RouterConfig,
    pub mapper: TargetMapper,
    pub head_limits: http1::Limits,
    pub health: health::Rules,
    /// `X-Larder-Router: <name>\r\n`, rendered once per config, when that header is on.
    pub router_field: Option<Box<[u8]>>,
    /// The TLS server configuration (certificates read from their files), when `[tls]`
    /// has certificates: each TLS handshake takes the one current then.
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// The TLS client configuration for `https://` nodes (their CA read from its file),
    /// when `[node_tls]` names one: each new connection to such a node takes it.
    pub node_tls: Option<Arc<rustls::ClientConfig>>,
}

impl Settings {
    fn new(config: RouterConfig) -> Result<Settings, RouterError> {
        let mapper = TargetMapper::new(config.mapper_config()?);
        let head_limits = http1::Limits {
            max_header_bytes: config.limits.max_header_bytes,
            max_headers: config.limits.max_headers,
            max_uri_len: config.limits.max_uri_bytes,
        };
        let health = health::Rules::new(&config.health);
        crate::buf::set_spare_limit(config.limits.spare_buffers);
        crate::splice::set_spare_limit(config.limits.spare_buffers);
        crate::splice::set_pipe_bytes(config.tuning.splice_pipe_bytes);
        let router_field = config
            .router_header
            .then(|| format!("X-Larder-Router: {}\r\n", config.router_name()).into_bytes().into());
        let tls = if config.tls.cert.is_empty() {
            None
        } else {
            Some(crate::tls::server_config(&config.tls)?)
        };
        let node_tls = match config.node_tls.ca.as_str() {
            "" => None,
            ca => Some(crate::node_tls::client_config(ca)?),
        };
        Ok(Settings { config, mapper, head_limits, health, router_field, tls, node_tls })
    }
}

/// Everything known about one node slot.
#[derive(Clone, Debug)]
pub(crate) struct NodeStatus {
    pub name: Arc<str>,
    pub addr: SocketAddr,
    /// False once a reload removed the node.
    pub configured: bool,
    pub weight: u32,
    pub load_report: bool,
    pub health: Health,
    pub stats: NodeStats,
    /// When the node's last load report arrived.
    pub reported_at: Option<Instant>,
    /// Version and keys of the holdings digest folded into the view, if the node sends one.
    pub holdings: Option<(u64, u64)>,
    /// The node's last load report, without its digest (for `/stats`).
    pub last_report: Option<wire::LoadReport>,
}

impl NodeStatus {
    fn new(n: &NodeConfig) -> NodeStatus {
        NodeStatus {
            name: n.display_name().into(),
            addr: n.addr,
            configured: true,
            weight: n.weight,
            load_report: n.load_report,
            health: Health::default(),
            stats: NodeStats::default(),
            reported_at: None,
            holdings: None,
            last_report: None,
        }
    }
}

/// The one placement: policy, load view, per-node status.
pub(crate) struct Placement {
    pub policy: Box<dyn Policy>,
    pub spec: PolicySpec,
    pub view: LoadView,
    pub nodes: Vec<NodeStatus>,
    /// How many recent picks fell on a node that reports holding the target.
    pub agreement: Agreement,
    /// Which nodes joined or restarted and how much of their share they take.
    pub warmup: Warmup,
}

/// Where a request goes.
pub(crate) struct Dispatch {
    pub node: NodeId,
    pub name: Arc<str>,
    pub upstream: Arc<Upstream>,
    /// Told to the node (`X-Larder-Target`), so its holdings digest names the target;
    /// only for policies that place targets.
    pub hint: Option<wire::TargetHint>,
}

pub(crate) struct Cluster {
    origin: Instant,
    settings: RwLock<Arc<Settings>>,
    upstreams: RwLock<Vec<Arc<Upstream>>>,
    placement: Mutex<Placement>,
    hot: Mutex<HotTargets>,
    sources: Mutex<Sources>,
    discovered: Mutex<Discovered>,
}

/// Where the membership comes from: the config as given (file and flags) and the nodes
/// discovery found. Held while a change applies, so reloads and discovery take turns.
struct Sources {
    given: RouterConfig,
    found: Vec<NodeConfig>,
}

impl Sources {
    /// `given` with the found nodes after its own; a found address the config already
    /// lists stays the config's.
    fn merged(given: &RouterConfig, found: &[NodeConfig]) -> RouterConfig {
        let mut c = given.clone();
        for n in found {
            if !c.nodes.iter().any(|m| m.addr == n.addr) {
                c.nodes.push(n.clone());
            }
        }
        c
    }
}

/// The nodes a discovery change brought in and took out, by name.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Change {
    pub joined: Vec<String>,
    pub left: Vec<String>,
}

impl Cluster {
    pub(crate) fn new(config: RouterConfig) -> Result<Cluster, RouterError> {
        config.validate()?;
        let ids = config.config_order_ids();
        let spec = config.policy_spec(&ids)?;
        let policy = policy::build(&spec).map_err(|e| RouterError::Config(e.to_string()))?;
        let upstreams =
            config.nodes.iter().map(|n| Arc::new(Upstream::new(&n.address()))).collect();
        let placement = Placement {
            policy,
            view: LoadView::with_weights(config.nodes.len(), config.load.weights()),
            nodes: config.nodes.iter().map(NodeStatus::new).collect(),
            agreement: Agreement::default(),
            warmup: Warmup::new(warmup_config(&spec)),
            spec,
        };
        let hot = HotTargets::new(config.limits.hot_targets);
        let sources = Sources { given: config.clone(), found: Vec::new() };
        let settings = Settings::new(config)?;
        let rules = settings.health;
        let cluster = Cluster {
            origin: Instant::now(),
            settings: RwLock::new(Arc::new(settings)),
            upstreams: RwLock::new(upstreams),
            placement: Mutex::new(placement),
            hot: Mutex::new(hot),
            sources: Mutex::new(sources),
            discovered: Mutex::new(Discovered::default()),
        };
        cluster.push_membership(&mut cluster.placement(), &rules, Instant::now());
        Ok(cluster)
    }

    pub(crate) fn settings(&self) -> Arc<Settings> {
        self.settings.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub(crate) fn placement(&self) -> MutexGuard<'_, Placement> {
        self.placement.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn hot(&self) -> MutexGuard<'_, HotTargets> {
        self.hot.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Discovery's state (the loop's and `/stats`').
    pub(crate) fn discovered(&self) -> MutexGuard<'_, Discovered> {
        self.discovered.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn sources(&self) -> MutexGuard<'_, Sources> {
        self.sources.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How many nodes the given config lists itself.
    pub(crate) fn static_nodes(&self) -> usize {
        self.sources().given.nodes.len()
    }

    pub(crate) fn upstreams(&self) -> Vec<Arc<Upstream>> {
        self.upstreams.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn upstream(&self, node: NodeId) -> Option<Arc<Upstream>> {
        self.upstreams.read().unwrap_or_else(|e| e.into_inner()).get(node.index()).cloned()
    }

    /// `at` on the policy's clock (nanoseconds since the router started). Requests pass
    /// the instant they already read, so the request path reads the clock once per step
    /// instead of once per call.
    fn nanos_at(&self, at: Instant) -> Nanos {
        at.saturating_duration_since(self.origin).as_nanos() as Nanos
    }

    /// Choose a node for `target`, never `exclude` (the node a retried request failed on);
    /// `at` is about now.
    pub(crate) fn pick(
        &self,
        target: &Target,
        path: &str,
        exclude: Option<NodeId>,
        at: Instant,
    ) -> Option<Dispatch> {
        self.hot().record(target, path);
        let now = self.nanos_at(at);
        let (node, name, hint) = {
            let mut guard = self.placement();
            let p = &mut *guard;
            let picked = p.policy.pick(target, &p.view, now);
            let node = match picked {
                Some(n) if Some(n) != exclude => n,
                // The policy insists on the failed node (it has not been ejected): take
                // the least loaded other eligible node for this one retry.
                Some(_) => p.least_loaded_except(exclude)?,
                None => return None,
            };
            p.view.started(node);
            let holds = p.view.holds(node, target.key);
            p.agreement.record(holds, now);
            let hint = p
                .spec
                .places_targets()
                .then_some(wire::TargetHint { key: target.key.0, tree: target.tree.0 });
            let status = &mut p.nodes[node.index()];
            status.stats.dispatched(exclude.is_some());
            (node, status.name.clone(), hint)
        };
        match self.upstream(node) {
            Some(upstream) => Some(Dispatch { node, name, upstream, hint }),
            None => {
                self.finish(node, target, Outcome::Failed, (None, None), at);
                None
            }
        }
    }

    /// A dispatched request ended (about `at`); `upstream_time` is known when a response
    /// came back whole, `answered` when one started.
    pub(crate) fn finish(
        &self,
        node: NodeId,
        target: &Target,
        outcome: Outcome,
        (upstream_time, answered): (Option<Duration>, Option<Answered>),
        at: Instant,
    ) {
        let now = self.nanos_at(at);
        let mut p = self.placement();
        p.view.finished(node);
        p.policy.done(node, target, outcome, now);
        let Some(status) = p.nodes.get_mut(node.index()) else { return };
        if outcome == Outcome::Ok {
            status.health.request_ok();
        }
        status.stats.finished(outcome, upstream_time, answered, at);
    }

    /// A request failed on `node` (about `at`) in a way that says something about the node.
    pub(crate) fn failed(&self, node: NodeId, failure: Failure, at: Instant) {
        let settings = self.settings();
        let mut p = self.placement();
        let Some(status) = p.nodes.get_mut(node.index()) else { return };
        if let Some(flip) = status.health.request_failed(failure, at, &settings.health) {
            self.flipped(&mut p, node, flip, &settings.health, at);
        }
    }

    /// The result of one active check of `node`, finished at `now`.
    pub(crate) fn check_result(&self, node: NodeId, ok: bool, now: Instant) {
        let settings = self.settings();
        let mut p = self.placement();
        let Some(status) = p.nodes.get_mut(node.index()) else { return };
        if let Some(flip) = status.health.observe(ok, now, &settings.health) {
            self.flipped(&mut p, node, flip, &settings.health, now);
        }
    }

    /// Periodic health upkeep at `now`: without active checks, let ejected nodes back when
    /// their time is up; while a node is in slow start, push its rising weight.
    pub(crate) fn tick(&self, now: Instant) {
        let settings = self.settings();
        let rules = &settings.health;
        let mut p = self.placement();
        if !rules.active_checks {
            for i in 0..p.nodes.len() {
                let status = &mut p.nodes[i];
                if !status.configured {
                    continue;
                }
                if let Some(flip) = status.health.ejection_over(now) {
                    announce(status, flip);
                }
            }
        }
        if p.nodes.iter().any(|n| n.health.ramping(now, rules)) {
            self.push_membership(&mut p, rules, now);
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
        self.push_membership(p, rules, now);
    }

    /// Tell the policy the current membership at `now` (weights include slow start).
    fn push_membership(&self, p: &mut Placement, rules: &health::Rules, now: Instant) {
        let warms_up = p.spec.warms_nodes_up();
        let states: Vec<NodeState> = p
            .nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.configured)
            .map(|(i, n)| NodeState {
                id: NodeId(i as u32),
                // Where the warm-up gives a node its share as its cache fills, a
                // timed slow start on top would only hold a warm node back.
                weight: if warms_up && n.reported_at.is_some() {
                    n.weight.saturating_mul(health::WEIGHT_SCALE)
                } else {
                    n.health.weight(n.weight, now, rules)
                },
                up: n.health.is_up(),
                name: NodeState::name_hash(&n.name),
            })
            .collect();
        p.policy.membership(&states, self.nanos_at(now));
    }

    /// Fold a node's own load report, received at `at`, into the view. A digest of the
    /// version already folded is not decoded again.
    pub(crate) fn report_load(&self, node: NodeId, report: NodeReport, at: Instant) {
        let mut guard = self.placement();
        let p = &mut *guard;
        p.view.report(node, report.cpu_pct, report.disk_pct);
        p.view.set_capacity(node, report.cache_capacity_bytes);
        if p.spec.placement.is_shared() {
            p.warmup.report(node, report.warmup);
            p.warmup.settle();
            for i in 0..p.nodes.len() {
                let id = NodeId(i as u32);
                let warmth = p.warmup.warmth(id);
                p.view.set_warmth(id, warmth);
            }
        }
        let Some(status) = p.nodes.get_mut(node.index()) else { return };
        let flip = status.health.answered(at);
        status.reported_at = Some(at);
        status.last_report = Some(report.figures);
        let seen = report.holdings.as_ref().map(|d| (d.version, d.entries));
        if seen != status.holdings {
            status.holdings = seen;
            let holdings = report.holdings.map(|d| Arc::new(d) as Arc<dyn policy::Holdings>);
            p.view.set_holdings(node, holdings);
        }
        if let Some(flip) = flip {
            let rules = self.settings().health;
            self.flipped(p, node, flip, &rules, at);
        }
    }

    /// Drop the holdings of nodes whose last report is older than `max_age` at `now`: a
    /// node that stopped reporting may have lost its cache, and stale digests would pull
    /// targets to it.
    pub(crate) fn forget_stale_reports(&self, now: Instant, max_age: Duration) {
        let mut guard = self.placement();
        let p = &mut *guard;
        for (i, status) in p.nodes.iter_mut().enumerate() {
            let stale =
                status.reported_at.is_none_or(|at| now.saturating_duration_since(at) > max_age);
            if stale && status.holdings.is_some() {
                status.holdings = None;
                p.view.set_holdings(NodeId(i as u32), None);
            }
        }
    }

    /// Nanoseconds on the policy's clock at `at` (for the admin's windows).
    pub(crate) fn clock(&self, at: Instant) -> Nanos {
        self.nanos_at(at)
    }

    /// The configured nodes `wanted` selects, with their upstreams (for background probes).
    pub(crate) fn probe_targets(
        &self,
        wanted: impl Fn(&NodeStatus) -> bool,
    ) -> Vec<(NodeId, Arc<Upstream>)> {
        let ids: Vec<NodeId> = {
            let p = self.placement();
            (0..p.nodes.len())
                .filter(|&i| p.nodes[i].configured && wanted(&p.nodes[i]))
                .map(|i| NodeId(i as u32))
                .collect()
        };
        ids.into_iter().filter_map(|id| Some((id, self.upstream(id)?))).collect()
    }

    /// Apply a new config (with the nodes discovery found): nodes by address, weights,
    /// policy parameters, limits.
    pub(crate) fn reload(&self, config: RouterConfig) -> Result<(), RouterError> {
        config.validate()?;
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
        let named = |list: &[NodeConfig], other: &[NodeConfig]| -> Vec<String> {
            list.iter().filter(|n| !other.contains(n)).map(|n| n.display_name()).collect()
        };
        let change =
            Change { joined: named(&found, &sources.found), left: named(&sources.found, &found) };
        sources.found = found;
        Ok(Some(change))
    }

    /// Make `config` the membership: nodes by address, weights, policy parameters,
    /// limits. A changed policy spec means a new policy (its placement starts afresh).
    fn apply(&self, config: RouterConfig) -> Result<(), RouterError> {
        config.validate()?;
        let settings = Arc::new(Settings::new(config)?);
        let config = &settings.config;
        let mut p = self.placement();
        let mut upstreams = self.upstreams.write().unwrap_or_else(|e| e.into_inner());
        let mut ids = Vec::with_capacity(config.nodes.len());
        for n in &config.nodes {
            let id = match p.nodes.iter().position(|s| s.addr == n.addr) {
                Some(i) => {
                    let s = &mut p.nodes[i];
                    s.configured = true;
                    s.weight = n.weight;
                    s.load_report = n.load_report;
                    s.name = n.display_name().into();
                    if !upstreams[i].is_for(&n.address()) {
                        // Same address, now spoken to otherwise (TLS on or off, another
                        // certificate name): connections afresh.
                        upstreams[i].clear();
                        upstreams[i] = Arc::new(Upstream::new(&n.address()));
                    }
                    NodeId(i as u32)
                }
                None => match p.returning(n) {
                    // The node is back under its name on a new address (an SRV target
                    // whose pod moved): its old slot, afresh.
                    Some(id) => {
                        p.nodes[id.index()] = NodeStatus::new(n);
                        p.view.report(id, 0.0, 0.0);
                        p.view.set_holdings(id, None);
                        p.warmup.forget(id);
                        upstreams[id.index()] = Arc::new(Upstream::new(&n.address()));
                        id
                    }
                    None => {
                        let id = NodeId(p.nodes.len() as u32);
                        p.nodes.push(NodeStatus::new(n));
                        upstreams.push(Arc::new(Upstream::new(&n.address())));
                        id
                    }
                },
            };
            ids.push(id);
        }
        for (i, s) in p.nodes.iter_mut().enumerate() {
            if !ids.contains(&NodeId(i as u32)) && s.configured {
                s.configured = false;
                upstreams[i].clear();
            }
        }
        drop(upstreams);
        let spec = config.policy_spec(&ids)?;
        if spec != p.spec {
            p.policy = policy::build(&spec).map_err(|e| RouterError::Config(e.to_string()))?;
            p.warmup.set_config(warmup_config(&spec));
            p.spec = spec;
        }
        let n = p.nodes.len();
        p.view.resize(n);
        p.view.set_weights(config.load.weights());
        let rules = settings.health;
        *self.settings.write().unwrap_or_else(|e| e.into_inner()) = settings;
        self.push_membership(&mut p, &rules, Instant::now());
        Ok(())
    }
}

/// How long nodes that join or restart may warm up.
fn warmup_config(spec: &PolicySpec) -> WarmupConfig {
    WarmupConfig { max: spec.warmup_max, ..WarmupConfig::default() }
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

impl Placement {
    /// A removed node's slot that `n` may take: same name, nothing in flight. So a node
    /// that comes back on a new address keeps its id, and slots do not pile up as
    /// addresses change under stable names.
    fn returning(&self, n: &NodeConfig) -> Option<NodeId> {
        let name = n.display_name();
        (0..self.nodes.len()).map(|i| NodeId(i as u32)).find(|&id| {
            let s = &self.nodes[id.index()];
            !s.configured && *s.name == *name && self.view.in_flight(id) == 0
        })
    }

    /// The eligible node with the least load, other than `exclude`.
    fn least_loaded_except(&self, exclude: Option<NodeId>) -> Option<NodeId> {
        (0..self.nodes.len())
            .map(|i| NodeId(i as u32))
            .filter(|&id| Some(id) != exclude)
            .filter(|id| {
                let n = &self.nodes[id.index()];
                n.configured && n.health.is_up() && n.weight > 0
            })
            .min_by(|a, b| self.view.load(*a).total_cmp(&self.view.load(*b)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::health::WEIGHT_SCALE;

    fn config(n: u16) -> RouterConfig {
        RouterConfig {
            nodes: (0..n)
                .map(|i| NodeConfig::new(SocketAddr::from(([127, 0, 0, 1], 1000 + i))))
                .collect(),
            ..RouterConfig::default()
        }
    }

    #[test]
    fn a_connect_failure_ejects_and_a_retry_avoids_the_node() {
        let c = Cluster::new(config(2)).unwrap();
        let t = Target::from_key(7);
        let now = Instant::now();
        let first = c.pick(&t, "/", None, now).unwrap();
        c.finish(first.node, &t, Outcome::Failed, (None, None), now);
        c.failed(first.node, Failure::Connect, now);
        for _ in 0..4 {
            let d = c.pick(&t, "/", Some(first.node), now).unwrap();
            assert_ne!(d.node, first.node);
            c.finish(d.node, &t, Outcome::Ok, (None, None), now);
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

    #[test]
    fn discovered_nodes_merge_with_the_config_and_outlive_its_reload() {
        let c = Cluster::new(config(1)).unwrap();
        let found = |ports: &[u16]| -> Vec<NodeConfig> {
            let node = |p: u16| NodeConfig {
                name: format!("pod-{p}"),
                ..NodeConfig::new(SocketAddr::from(([127, 0, 0, 2], p)))
            };
            ports.iter().map(|&p| node(p)).collect()
        };
        let members = |c: &Cluster| -> Vec<String> {
            let p = c.placement();
            let mut names: Vec<String> =
                p.nodes.iter().filter(|n| n.configured).map(|n| n.name.to_string()).collect();
            names.sort();
            names
        };
        let change = c.set_discovered(found(&[1, 2])).unwrap().unwrap();
        assert_eq!(change, Change { joined: vec!["pod-1".into(), "pod-2".into()], left: vec![] });
        assert_eq!(c.set_discovered(found(&[1, 2])).unwrap(), None, "nothing changed");
        assert_eq!(members(&c), ["127.0.0.1:1000", "pod-1", "pod-2"]);
        c.reload(config(2)).unwrap();
        assert_eq!(members(&c), ["127.0.0.1:1000", "127.0.0.1:1001", "pod-1", "pod-2"]);
        let change = c.set_discovered(found(&[2, 3])).unwrap().unwrap();
        assert_eq!(change, Change { joined: vec!["pod-3".into()], left: vec!["pod-1".into()] });
        assert_eq!(members(&c), ["127.0.0.1:1000", "127.0.0.1:1001", "pod-2", "pod-3"]);
        assert_eq!(c.static_nodes(), 2);
        // A found address the config lists stays the config's node.
        let mut same = found(&[]);
        same.push(NodeConfig { name: "dup".into(), ..config(1).nodes[0].clone() });
        c.set_discovered(same).unwrap();
        assert_eq!(members(&c), ["127.0.0.1:1000", "127.0.0.1:1001"]);
    }

    #[test]
    fn a_node_back_under_its_name_on_a_new_address_takes_its_old_slot() {
        let c = Cluster::new(config(1)).unwrap();
        let pod = |port: u16| NodeConfig {
            name: "pod-0".into(),
            ..NodeConfig::new(SocketAddr::from(([127, 0, 0, 2], port)))
        };
        c.set_discovered(vec![pod(1)]).unwrap();
        // Moved in one round: the old slot is still in use while the new one is placed.
        c.set_discovered(vec![pod(2)]).unwrap();
        c.set_discovered(vec![]).unwrap();
        c.set_discovered(vec![pod(3)]).unwrap();
        let p = c.placement();
        assert_eq!(p.nodes.len(), 3, "slots: the config's node, pod-0 twice");
        let at: Vec<_> = p.nodes.iter().filter(|n| n.configured).map(|n| n.addr.port()).collect();
        assert_eq!(at, [1000, 3]);
        assert_eq!(c.upstreams()[1].addr, pod(3).addr);
    }

    #[test]
    fn reload_keeps_ids_by_address() {
        let c = Cluster::new(config(2)).unwrap();
        let mut next = config(3);
        next.nodes.remove(0);
        c.reload(next).unwrap();
        let p = c.placement();
        assert_eq!(p.nodes.len(), 3);
        assert!(!p.nodes[0].configured);
        assert!(p.nodes[1].configured && p.nodes[2].configured);
        assert_eq!(p.nodes[2].addr.port(), 1002);
    }
}

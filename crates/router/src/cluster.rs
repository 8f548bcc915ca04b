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
//! address gets the next id, a removed node keeps its slot but leaves the membership.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::{Duration, Instant};

use policy::{
    LoadView, Nanos, NodeId, NodeState, Outcome, Policy, PolicySpec, Target, TargetMapper,
};

use crate::config::{NodeConfig, RouterConfig};
use crate::error::RouterError;
use crate::health::{self, Failure, Flip, Health};
use crate::hot::HotTargets;
use crate::log::event;
use crate::stats::NodeStats;
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
        let router_field = config
            .router_header
            .then(|| format!("X-Larder-Router: {}\r\n", config.router_name()).into_bytes().into());
        let tls = if config.tls.cert.is_empty() {
            None
        } else {
            Some(crate::tls::server_config(&config.tls)?)
        };
        Ok(Settings { config, mapper, head_limits, health, router_field, tls })
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
        }
    }
}

/// The one placement: policy, load view, per-node status.
pub(crate) struct Placement {
    pub policy: Box<dyn Policy>,
    pub spec: PolicySpec,
    pub view: LoadView,
    pub nodes: Vec<NodeStatus>,
}

/// Where a request goes.
pub(crate) struct Dispatch {
    pub node: NodeId,
    pub name: Arc<str>,
    pub upstream: Arc<Upstream>,
}

pub(crate) struct Cluster {
    origin: Instant,
    settings: RwLock<Arc<Settings>>,
    upstreams: RwLock<Vec<Arc<Upstream>>>,
    placement: Mutex<Placement>,
    hot: Mutex<HotTargets>,
}

impl Cluster {
    pub(crate) fn new(config: RouterConfig) -> Result<Cluster, RouterError> {
        config.validate()?;
        let ids = config.config_order_ids();
        let spec = config.policy_spec(&ids)?;
        let policy = policy::build(&spec).map_err(|e| RouterError::Config(e.to_string()))?;
        let upstreams = config.nodes.iter().map(|n| Arc::new(Upstream::new(n.addr))).collect();
        let placement = Placement {
            policy,
            spec,
            view: LoadView::with_weights(config.nodes.len(), config.load.weights()),
            nodes: config.nodes.iter().map(NodeStatus::new).collect(),
        };
        let hot = HotTargets::new(config.limits.hot_targets);
        let settings = Settings::new(config)?;
        let rules = settings.health;
        let cluster = Cluster {
            origin: Instant::now(),
            settings: RwLock::new(Arc::new(settings)),
            upstreams: RwLock::new(upstreams),
            placement: Mutex::new(placement),
            hot: Mutex::new(hot),
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
        let (node, name) = {
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
            let status = &mut p.nodes[node.index()];
            status.stats.dispatched(exclude.is_some());
            (node, status.name.clone())
        };
        match self.upstream(node) {
            Some(upstream) => Some(Dispatch { node, name, upstream }),
            None => {
                self.finish(node, target, Outcome::Failed, None, at);
                None
            }
        }
    }

    /// A dispatched request ended (about `at`); `upstream_time` is known when a response
    /// came back.
    pub(crate) fn finish(
        &self,
        node: NodeId,
        target: &Target,
        outcome: Outcome,
        upstream_time: Option<Duration>,
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
        status.stats.finished(outcome, upstream_time, at);
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
        let states: Vec<NodeState> = p
            .nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.configured)
            .map(|(i, n)| NodeState {
                id: NodeId(i as u32),
                weight: n.health.weight(n.weight, now, rules),
                up: n.health.is_up(),
                name: NodeState::name_hash(&n.name),
            })
            .collect();
        p.policy.membership(&states, self.nanos_at(now));
    }

    /// Fold a node's own load report into the view.
    pub(crate) fn report_load(&self, node: NodeId, cpu_pct: f64, disk_pct: f64) {
        self.placement().view.report(node, cpu_pct, disk_pct);
    }

    /// The configured nodes `wanted` selects, with their addresses (for background probes).
    pub(crate) fn probe_targets(
        &self,
        wanted: impl Fn(&NodeStatus) -> bool,
    ) -> Vec<(NodeId, SocketAddr)> {
        let p = self.placement();
        (0..p.nodes.len())
            .filter(|&i| p.nodes[i].configured && wanted(&p.nodes[i]))
            .map(|i| (NodeId(i as u32), p.nodes[i].addr))
            .collect()
    }

    /// Apply a new config: nodes by address, weights, policy parameters, limits.
    /// A changed policy spec means a new policy (its placement starts afresh).
    pub(crate) fn reload(&self, config: RouterConfig) -> Result<(), RouterError> {
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
                    NodeId(i as u32)
                }
                None => {
                    let id = NodeId(p.nodes.len() as u32);
                    p.nodes.push(NodeStatus::new(n));
                    upstreams.push(Arc::new(Upstream::new(n.addr)));
                    id
                }
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
        c.finish(first.node, &t, Outcome::Failed, None, now);
        c.failed(first.node, Failure::Connect, now);
        for _ in 0..4 {
            let d = c.pick(&t, "/", Some(first.node), now).unwrap();
            assert_ne!(d.node, first.node);
            c.finish(d.node, &t, Outcome::Ok, None, now);
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

//! The cluster as the router knows it: nodes, their health, the load view and the policy.
//!
//! Policies are `Send` but not `Sync`, and a placement must be one placement, not one per
//! thread (two threads disagreeing on where `/a` lives would halve locality). So the
//! policy, the load view, per-node status and the hot-target table sit behind one mutex
//! ([`Placement`]), taken twice per request — to pick and when done — for a few hundred
//! nanoseconds each. Upstream connection pools live outside it, one small lock per node.
//!
//! Node ids are dense and follow addresses: a node keeps its id across reloads, a new
//! address gets the next id, a removed node keeps its slot but leaves the membership.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::{Duration, Instant};

use policy::{
    LoadView, Nanos, NodeId, NodeState, Outcome, Policy, PolicySpec, Target, TargetMapper,
};

use crate::config::{ms, RouterConfig};
use crate::hot::HotTargets;
use crate::log::event;
use crate::upstream::Upstream;
use crate::RouterError;

/// Weight units per unit of configured weight, so slow start can ramp in small steps.
const WEIGHT_SCALE: u32 = 100;

/// The parts of the config read on every request, swapped whole on reload.
pub(crate) struct Settings {
    pub config: RouterConfig,
    pub mapper: TargetMapper,
    pub head_limits: http1::Limits,
}

impl Settings {
    fn new(config: RouterConfig) -> Result<Settings, RouterError> {
        let mapper = TargetMapper::new(config.mapper_config()?);
        let head_limits = http1::Limits {
            max_header_bytes: config.limits.max_header_bytes,
            max_headers: config.limits.max_headers,
            max_uri_len: config.limits.max_uri_bytes,
        };
        Ok(Settings { config, mapper, head_limits })
    }
}

/// Health of one node, driven by active checks and by the requests themselves.
#[derive(Clone, Debug)]
pub(crate) struct Health {
    pub up: bool,
    /// Consecutive failures while up.
    pub fails: u32,
    /// Consecutive good checks while down.
    pub rises: u32,
    /// When the node last came back (slow start runs from here).
    pub back_since: Option<Instant>,
    /// Without active checks: when an ejected node is let back.
    pub down_until: Option<Instant>,
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
    pub requests: u64,
    pub errors: u64,
    pub retries: u64,
    /// Moving average of upstream time (request sent → response complete), µs.
    pub latency_us: f64,
}

/// The one placement: policy, load view, per-node status, hot targets.
pub(crate) struct Placement {
    pub policy: Box<dyn Policy>,
    pub spec: PolicySpec,
    pub view: LoadView,
    pub nodes: Vec<NodeStatus>,
    pub hot: HotTargets,
}

/// Where a request goes.
pub(crate) struct Dispatch {
    pub node: NodeId,
    pub name: Arc<str>,
    pub upstream: Arc<Upstream>,
}

/// How a node failed a request, for passive ejection.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Failure {
    /// Connect refused or timed out: the node is taken out at once.
    Connect,
    /// Reset, early close, timeout or garbage: counts toward `health.fall`.
    Exchange,
}

pub(crate) struct Cluster {
    origin: Instant,
    settings: RwLock<Arc<Settings>>,
    upstreams: RwLock<Vec<Arc<Upstream>>>,
    placement: Mutex<Placement>,
}

impl Cluster {
    pub(crate) fn new(config: RouterConfig) -> Result<Cluster, RouterError> {
        config.validate()?;
        let ids = config.config_order_ids();
        let spec = config.policy_spec(&ids)?;
        let policy = policy::build(&spec).map_err(|e| RouterError::Config(e.to_string()))?;
        let upstreams = config.nodes.iter().map(|n| Arc::new(Upstream::new(n.addr))).collect();
        let nodes = config.nodes.iter().map(new_status).collect();
        let placement = Placement {
            policy,
            spec,
            view: LoadView::with_weights(config.nodes.len(), config.load.weights()),
            nodes,
            hot: HotTargets::new(config.limits.hot_targets),
        };
        let cluster = Cluster {
            origin: Instant::now(),
            settings: RwLock::new(Arc::new(Settings::new(config)?)),
            upstreams: RwLock::new(upstreams),
            placement: Mutex::new(placement),
        };
        cluster.push_membership(&mut cluster.placement());
        Ok(cluster)
    }

    pub(crate) fn settings(&self) -> Arc<Settings> {
        self.settings.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub(crate) fn placement(&self) -> MutexGuard<'_, Placement> {
        self.placement.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn upstreams(&self) -> Vec<Arc<Upstream>> {
        self.upstreams.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn upstream(&self, node: NodeId) -> Option<Arc<Upstream>> {
        self.upstreams.read().unwrap_or_else(|e| e.into_inner()).get(node.index()).cloned()
    }

    /// The policy's clock: nanoseconds since the router started.
    pub(crate) fn now(&self) -> Nanos {
        self.nanos_at(Instant::now())
    }

    /// `at` on the policy's clock. Requests pass the instant they already read, so the
    /// request path reads the clock once per step instead of once per call.
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
        let now = self.nanos_at(at);
        let (node, name) = {
            let mut guard = self.placement();
            let p = &mut *guard;
            p.hot.record(target, path);
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
            status.requests += 1;
            if exclude.is_some() {
                status.retries += 1;
            }
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
        match outcome {
            Outcome::Ok => status.health.fails = 0,
            Outcome::Failed => status.errors += 1,
        }
        if let Some(t) = upstream_time {
            let us = t.as_secs_f64() * 1e6;
            status.latency_us =
                if status.latency_us == 0.0 { us } else { status.latency_us * 0.9 + us * 0.1 };
        }
    }

    /// A request failed on `node` in a way that says something about the node.
    pub(crate) fn failed(&self, node: NodeId, failure: Failure) {
        let settings = self.settings();
        let health = &settings.config.health;
        let mut p = self.placement();
        let Some(status) = p.nodes.get_mut(node.index()) else { return };
        if !status.health.up {
            return;
        }
        status.health.fails += 1;
        if failure == Failure::Connect || status.health.fails >= health.fall {
            let reason = if failure == Failure::Connect { "connect failed" } else { "failures" };
            self.take_down(&mut p, node, reason, ms(health.eject_ms));
        }
    }

    /// The result of one active check.
    pub(crate) fn check_result(&self, node: NodeId, ok: bool) {
        let settings = self.settings();
        let health = &settings.config.health;
        let mut p = self.placement();
        let Some(status) = p.nodes.get_mut(node.index()) else { return };
        let h = &mut status.health;
        match (h.up, ok) {
            (true, true) => h.fails = 0,
            (true, false) => {
                h.fails += 1;
                if h.fails >= health.fall {
                    self.take_down(&mut p, node, "health check", ms(health.eject_ms));
                }
            }
            (false, true) => {
                h.rises += 1;
                if h.rises >= health.rise {
                    self.bring_back(&mut p, node, "health check");
                }
            }
            (false, false) => h.rises = 0,
        }
    }

    fn take_down(&self, p: &mut Placement, node: NodeId, reason: &str, eject_for: Duration) {
        let status = &mut p.nodes[node.index()];
        status.health =
            Health { up: false, fails: 0, rises: 0, back_since: None, down_until: None };
        status.health.down_until = Some(Instant::now() + eject_for);
        event("warn", "node down", &[("node", &status.name), ("reason", &reason)]);
        if let Some(u) = self.upstream(node) {
            u.clear();
        }
        self.push_membership(p);
    }

    fn bring_back(&self, p: &mut Placement, node: NodeId, reason: &str) {
        let status = &mut p.nodes[node.index()];
        status.health = Health {
            up: true,
            fails: 0,
            rises: 0,
            back_since: Some(Instant::now()),
            down_until: None,
        };
        event("info", "node up", &[("node", &status.name), ("reason", &reason)]);
        self.push_membership(p);
    }

    /// Periodic work off the request path: without active checks, let ejected nodes back
    /// when their time is up; while a node is in slow start, raise its weight.
    pub(crate) fn tick(&self) {
        let settings = self.settings();
        let health = &settings.config.health;
        let now = Instant::now();
        let slow_start = ms(health.slow_start_ms);
        let mut p = self.placement();
        if health.path.is_empty() {
            let due: Vec<NodeId> = (0..p.nodes.len())
                .filter(|&i| {
                    let h = &p.nodes[i].health;
                    p.nodes[i].configured && !h.up && h.down_until.is_some_and(|t| now >= t)
                })
                .map(|i| NodeId(i as u32))
                .collect();
            for node in due {
                self.bring_back(&mut p, node, "ejection over");
            }
        }
        let ramping = p.nodes.iter().any(|n| {
            n.health
                .back_since
                .is_some_and(|t| now.duration_since(t) <= slow_start + slow_start / 10)
        });
        if ramping {
            self.push_membership(&mut p);
        }
    }

    /// Tell the policy the current membership (weights include slow start).
    fn push_membership(&self, p: &mut Placement) {
        let slow_start = ms(self.settings().config.health.slow_start_ms);
        let now = Instant::now();
        let states: Vec<NodeState> = p
            .nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.configured)
            .map(|(i, n)| NodeState {
                id: NodeId(i as u32),
                weight: effective_weight(n, now, slow_start),
                up: n.health.up,
            })
            .collect();
        let nanos = self.now();
        p.policy.membership(&states, nanos);
    }

    /// Fold a node's own load report into the view.
    pub(crate) fn report_load(&self, node: NodeId, cpu_pct: f64, disk_pct: f64) {
        self.placement().view.report(node, cpu_pct, disk_pct);
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
                    p.nodes.push(new_status(n));
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
        *self.settings.write().unwrap_or_else(|e| e.into_inner()) = settings;
        self.push_membership(&mut p);
        Ok(())
    }
}

fn new_status(n: &crate::config::NodeConfig) -> NodeStatus {
    NodeStatus {
        name: n.display_name().into(),
        addr: n.addr,
        configured: true,
        weight: n.weight,
        load_report: n.load_report,
        health: Health { up: true, fails: 0, rises: 0, back_since: None, down_until: None },
        requests: 0,
        errors: 0,
        retries: 0,
        latency_us: 0.0,
    }
}

/// The configured weight, ramped from 1% to 100% over `slow_start` after a comeback.
fn effective_weight(n: &NodeStatus, now: Instant, slow_start: Duration) -> u32 {
    let full = n.weight.saturating_mul(WEIGHT_SCALE);
    match n.health.back_since {
        Some(t) if !slow_start.is_zero() && full > 0 => {
            let f = (now.duration_since(t).as_secs_f64() / slow_start.as_secs_f64()).min(1.0);
            ((full as f64 * f) as u32).clamp(1, full)
        }
        _ => full,
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
                n.configured && n.health.up && n.weight > 0
            })
            .min_by(|a, b| self.view.load(*a).total_cmp(&self.view.load(*b)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::NodeConfig;

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
        c.failed(first.node, Failure::Connect);
        for _ in 0..4 {
            let d = c.pick(&t, "/", Some(first.node), now).unwrap();
            assert_ne!(d.node, first.node);
            c.finish(d.node, &t, Outcome::Ok, None, now);
        }
        assert!(!c.placement().nodes[first.node.index()].health.up);
    }

    #[test]
    fn checks_bring_a_node_back_with_slow_start() {
        let c = Cluster::new(config(2)).unwrap();
        c.failed(NodeId(1), Failure::Connect);
        c.check_result(NodeId(1), true);
        assert!(!c.placement().nodes[1].health.up, "rise is 2");
        c.check_result(NodeId(1), true);
        let p = c.placement();
        assert!(p.nodes[1].health.up);
        let w = effective_weight(&p.nodes[1], Instant::now(), Duration::from_secs(10));
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

//! The one placement: the policy, its load view and every node slot's status, and what
//! requests and load reports do to them: pick a node, finish a request, fold in a node's
//! report.
//!
//! Policies are `Send` but not `Sync`, and a placement must be one placement, not one per
//! thread (two threads disagreeing on where `/a` lives would halve locality). So all of
//! it sits behind the cluster's one mutex, taken twice per request — to pick and when
//! done — for a few hundred nanoseconds each.

use std::sync::Arc;
use std::time::{Duration, Instant};

use policy::warmup::{Warmup, WarmupConfig};
use policy::{LoadView, Nanos, NodeId, Outcome, Policy, PolicySpec, Target};

use crate::agreement::Agreement;
use crate::cluster::clock::Clock;
use crate::cluster::node::NodeStatus;
use crate::config::RouterConfig;
use crate::error::RouterError;
use crate::health::Flip;
use crate::monitor::NodeReport;
use crate::stats::Answered;

pub(crate) struct Placement {
    pub policy: Box<dyn Policy>,
    pub spec: PolicySpec,
    pub view: LoadView,
    pub nodes: Vec<NodeStatus>,
    /// How many recent picks fell on a node that reports holding the target.
    pub agreement: Agreement,
    /// Which nodes joined or restarted and how much of their share they take.
    pub warmup: Warmup,
    /// The time the policy, the view and the agreement count in.
    pub clock: Clock,
    /// Name a target's first node to its other nodes (`RouterConfig::peer_fill`).
    pub peer_fill: bool,
}

/// The node the placement chose for a request.
pub(crate) struct Picked {
    pub node: NodeId,
    pub name: Arc<str>,
    /// Told to the node (`X-Larder-Target`), so its holdings digest names the target;
    /// only for policies that place targets.
    pub hint: Option<wire::TargetHint>,
    /// The node the request's node is to fill a miss from (`wire::PeerHint`): the first
    /// of the target's server set when the request goes to another of its nodes.
    pub peer: Option<NodeId>,
}

/// How a dispatched request ended.
pub(crate) struct Finished {
    pub outcome: Outcome,
    /// Known when a response came back whole.
    pub upstream_time: Option<Duration>,
    /// Known when a response started.
    pub answered: Option<Answered>,
    /// About when it ended.
    pub at: Instant,
}

impl Placement {
    /// The placement of `config`'s nodes, in config order, under the policy `spec` says.
    pub(crate) fn new(config: &RouterConfig, spec: PolicySpec) -> Result<Placement, RouterError> {
        let mut p = Placement {
            policy: build(&spec)?,
            view: LoadView::with_weights(config.nodes.len(), config.load.weights()),
            nodes: config.nodes.iter().map(NodeStatus::new).collect(),
            agreement: Agreement::default(),
            warmup: Warmup::new(warmup_config(&spec)),
            spec,
            clock: Clock::start(),
            peer_fill: config.peer_fill,
        };
        p.find_local(config);
        Ok(p)
    }

    /// Tell the view which slot is this peer's own node (`config.local_node`), if any: a
    /// router has none.
    pub(crate) fn find_local(&mut self, config: &RouterConfig) {
        let local = config.local_node.and_then(|addr| {
            let index = self.nodes.iter().position(|n| n.configured && n.addr == addr)?;
            Some(NodeId(u32::try_from(index).ok()?))
        });
        self.view.set_local(local);
    }

    /// Take the policy `spec` says; a changed spec means a new policy, whose placement
    /// starts afresh.
    pub(crate) fn set_spec(&mut self, spec: PolicySpec) -> Result<(), RouterError> {
        if spec != self.spec {
            self.policy = build(&spec)?;
            self.warmup.set_config(warmup_config(&spec));
            self.spec = spec;
        }
        Ok(())
    }

    /// Choose a node for `target`, never `exclude` (the node a retried request failed
    /// on), and count the request in flight there; `at` is about now.
    pub(crate) fn pick(
        &mut self,
        target: &Target,
        exclude: Option<NodeId>,
        at: Instant,
    ) -> Option<Picked> {
        let now = self.clock.at(at);
        let node = match self.policy.pick(target, &self.view, now) {
            Some(n) if Some(n) != exclude => n,
            // The policy insists on the failed node (it has not been ejected): take the
            // least loaded other eligible node for this one retry.
            Some(_) => self.least_loaded_except(exclude)?,
            None => return None,
        };
        Some(self.dispatch(node, target, exclude, now))
    }

    /// Send the request for `target` to the node at `addr` (a peer's own node), whatever
    /// the policy would say: another peer's distributor placed it already. None when no
    /// current node has that address, or it is `exclude`.
    pub(crate) fn pick_at(
        &mut self,
        addr: std::net::SocketAddr,
        target: &Target,
        exclude: Option<NodeId>,
        at: Instant,
    ) -> Option<Picked> {
        let now = self.clock.at(at);
        let index = self.nodes.iter().position(|n| n.configured && n.addr == addr)?;
        let node = NodeId(u32::try_from(index).ok()?);
        if Some(node) == exclude {
            return None;
        }
        Some(self.dispatch(node, target, exclude, now))
    }

    /// Count a request for `target` in flight on `node`, chosen now.
    fn dispatch(
        &mut self,
        node: NodeId,
        target: &Target,
        exclude: Option<NodeId>,
        now: Nanos,
    ) -> Picked {
        self.view.started(node);
        let holds = self.view.holds(node, target.key);
        self.agreement.record(holds, now);
        let hint = self
            .spec
            .places_targets()
            .then_some(wire::TargetHint { key: target.key.0, tree: target.tree.0 });
        let peer = if self.peer_fill { self.first_holder(target, node) } else { None };
        let status = &mut self.nodes[node.index()];
        status.stats.dispatched(exclude.is_some());
        Picked { node, name: status.name.clone(), hint, peer }
    }

    /// The first node of `target`'s placement when `node` is another of its nodes: the
    /// one the target went to first, which holds it or is filling it.
    #[cold]
    fn first_holder(&self, target: &Target, node: NodeId) -> Option<NodeId> {
        let first = *self.policy.placement(target).first()?;
        (first != node).then_some(first)
    }

    /// A request picked for `node` ended.
    pub(crate) fn finish(&mut self, node: NodeId, target: &Target, how: &Finished) {
        let now = self.clock.at(how.at);
        self.view.finished(node);
        self.policy.done(node, target, how.outcome, now);
        let Some(status) = self.nodes.get_mut(node.index()) else { return };
        if how.outcome == Outcome::Ok {
            status.health.request_ok();
        }
        status.stats.finished(how.outcome, how.upstream_time, how.answered, how.at);
    }

    /// Fold a node's own load report, received at `at`, into the view; the health flip it
    /// brings (a node that answers again is up). A digest of the version already folded
    /// is not decoded again.
    pub(crate) fn report_load(
        &mut self,
        node: NodeId,
        report: NodeReport,
        at: Instant,
    ) -> Option<Flip> {
        self.view.report(node, report.cpu_pct, report.disk_pct);
        self.view.report_in_flight(node, report.figures.in_flight);
        self.view.report_miss_bytes(node, report.figures.miss_bytes_reading);
        self.view.set_capacity(node, report.cache_capacity_bytes);
        self.view.set_cached(node, report.figures.cache_bytes, report.figures.cache_objects);
        let routers = u32::try_from(report.figures.routers).unwrap_or(u32::MAX);
        self.view.report_routers(node, routers);
        if self.spec.placement.is_shared() {
            self.warmup.report(node, report.warmup);
            self.warmup.settle();
            for i in 0..self.nodes.len() {
                let id = NodeId(i as u32);
                let warmth = self.warmup.warmth(id);
                self.view.set_warmth(id, warmth);
            }
        }
        let status = self.nodes.get_mut(node.index())?;
        let flip = status.health.answered(at);
        status.reported_at = Some(at);
        status.last_report = Some(report.figures);
        let seen = report.holdings.as_ref().map(|d| (d.version, d.entries));
        if seen != status.holdings {
            status.holdings = seen;
            let holdings = report.holdings.map(|d| Arc::new(d) as Arc<dyn policy::Holdings>);
            self.view.set_holdings(node, holdings);
        }
        flip
    }

    /// Drop the holdings (and the count of routers) of nodes whose last report is older
    /// than `max_age` at `now`: a node that stopped reporting may have lost its cache, and
    /// stale digests would pull targets to it.
    pub(crate) fn forget_stale_reports(&mut self, now: Instant, max_age: Duration) {
        for (i, status) in self.nodes.iter_mut().enumerate() {
            let stale =
                status.reported_at.is_none_or(|at| now.saturating_duration_since(at) > max_age);
            if stale {
                // Nor does it say any more how many routers poll it.
                self.view.report_routers(NodeId(i as u32), 0);
            }
            if stale && status.holdings.is_some() {
                status.holdings = None;
                self.view.set_holdings(NodeId(i as u32), None);
            }
        }
    }

    /// The configured nodes `wanted` selects.
    pub(crate) fn configured(&self, wanted: impl Fn(&NodeStatus) -> bool) -> Vec<NodeId> {
        (0..self.nodes.len())
            .filter(|&i| self.nodes[i].configured && wanted(&self.nodes[i]))
            .map(|i| NodeId(i as u32))
            .collect()
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

fn build(spec: &PolicySpec) -> Result<Box<dyn Policy>, RouterError> {
    policy::build(spec).map_err(|e| RouterError::Config(e.to_string()))
}

/// How long nodes that join or restart may warm up.
fn warmup_config(spec: &PolicySpec) -> WarmupConfig {
    WarmupConfig { max: spec.warmup_max, ..WarmupConfig::default() }
}

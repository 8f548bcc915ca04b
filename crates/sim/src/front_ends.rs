//! The front-ends of a simulated cluster: one or many routers, each with its own policy
//! instance, in front of the same nodes. Real deployments run several routers behind one
//! address; each then places targets from its own table, and this is where the
//! simulator measures what that costs.
//!
//! What a front-end knows of the nodes' load: what the nodes report, as it was when it
//! last polled them, plus what it sent itself since (a router counts its own requests in
//! flight). The simulator's load is requests in flight, so a report is a node's in-flight
//! count over every front-end. Router r polls every `report_delay` (HACC polled every
//! 200 ms), at phases staggered by `report_delay · r / routers` so that the routers do not
//! refresh in lockstep; a poll due is taken at the router's next pick, when the report is
//! read in one copy of the nodes' counts (O(nodes) once per period, O(1) per request).
//!
//! Nodes also report the bytes of misses whose disk reads are queued or running, with
//! their load, and how many routers poll them (the run's front-ends): one front-end in
//! front of a few equal nodes then places as per-router LARD does, as a real router alone
//! does ([`policy::roster`]).
//!
//! Nodes also report what they hold (a digest of their caches' targets, as larder's
//! node does in its load report), every `report_delay` (200 ms when it is 0); a
//! front-end sees a digest from its last poll.
//!
//! A front-end's view keeps the report apart from its own count
//! ([`LoadView::reported_load`] against [`LoadView::load`]): shared first choices read
//! the report only, as a real router's do.
//!
//! With one front-end, or no delay, every front-end's view is the exact count of
//! requests in flight per node, and all of them read one shared view: one front-end
//! runs exactly as the single front-end of the LARD paper's model, its reports exact.

use std::num::NonZeroU64;
use std::sync::Arc;

use policy::{Holdings, LoadView, NodeId, NodeState, Outcome, Policy, PolicyStats, Target};

use crate::spread::Spreader;
use crate::{SimConfig, SimError, Spread};

struct FrontEnd {
    policy: Box<dyn Policy>,
    /// The nodes' last report plus this front-end's own picks and completions since
    /// (unused when views are shared).
    view: LoadView,
    /// When this front-end polls the nodes next, in simulated ns.
    next_poll: u64,
    /// Its poll times are `phase + k · delay`.
    phase: u64,
}

/// Every front-end of one run.
pub(crate) struct FrontEnds {
    routers: Vec<FrontEnd>,
    /// Requests in flight per node over all front-ends: what the nodes would report.
    nodes: LoadView,
    /// Poll period; `None` when every front-end reads `nodes` directly.
    delay: Option<NonZeroU64>,
    spreader: Spreader,
    name: &'static str,
}

impl FrontEnds {
    /// `config.routers` front-ends running `config.policy`, the requests spread by `spread`.
    pub(crate) fn new(config: &SimConfig, spread: Spread) -> Result<Self, SimError> {
        let (n, count) = (config.nodes, config.routers);
        let delay = NonZeroU64::new(if count > 1 { config.report_delay_ns } else { 0 });
        let nodes = NodeState::uniform(n);
        let mut routers = (0..count)
            .map(|r| {
                let mut policy = policy::build(&config.policy)?;
                policy.membership(&nodes, 0);
                let period = delay.map_or(0, NonZeroU64::get);
                let phase = (u128::from(period) * r as u128 / count as u128) as u64;
                let view = LoadView::new(if delay.is_some() { n } else { 0 });
                Ok(FrontEnd { policy, view, next_poll: phase, phase })
            })
            .collect::<Result<Vec<_>, SimError>>()?;
        let name = routers[0].policy.name();
        let spreader = Spreader::new(spread, count, config.spread_seed);
        // Every node reports its cache capacity and how many routers poll it, as larder's
        // nodes do.
        let mut reported = LoadView::of_nodes(n);
        let polled_by = u32::try_from(count).unwrap_or(u32::MAX);
        for i in 0..n {
            reported.set_capacity(NodeId(i as u32), config.caches.of(i));
            reported.report_routers(NodeId(i as u32), polled_by);
        }
        for fe in &mut routers {
            if delay.is_some() {
                fe.view.poll(&reported);
            }
        }
        Ok(FrontEnds { routers, nodes: reported, delay, spreader, name })
    }

    pub(crate) fn policy_name(&self) -> &'static str {
        self.name
    }

    /// The front-end that takes request `index` (from `client`) picks its node at `now`;
    /// returns the front-end and the node.
    #[inline]
    pub(crate) fn pick(
        &mut self,
        index: u64,
        client: u32,
        target: &Target,
        now: u64,
    ) -> Result<(u32, NodeId), SimError> {
        let r = self.spreader.router(index, client);
        let fe = &mut self.routers[r as usize];
        let view = match self.delay {
            None => &self.nodes,
            Some(delay) => {
                if now >= fe.next_poll {
                    fe.view.poll(&self.nodes);
                    fe.next_poll = fe.phase + ((now - fe.phase) / delay + 1) * delay.get();
                }
                &fe.view
            }
        };
        let node = fe
            .policy
            .pick(target, view, now)
            .ok_or_else(|| SimError::NoNode { policy: self.name.to_string(), index })?;
        if node.index() >= self.nodes.len() {
            return Err(SimError::BadNode {
                policy: self.name.to_string(),
                node: node.0,
                nodes: self.nodes.len(),
            });
        }
        self.nodes.started(node);
        if self.delay.is_some() {
            fe.view.started(node);
        }
        Ok((r, node))
    }

    /// Request `index` (from `client`) for `target` comes soon: have the memory its
    /// front-end's policy reads first loaded ahead.
    #[inline]
    pub(crate) fn upcoming(&self, index: u64, client: u32, target: &Target) {
        let r = self.spreader.router(index, client);
        let touch = &mut |at, bytes| crate::prefetch::prefetch_bytes(at, bytes);
        self.routers[r as usize].policy.upcoming(target, touch);
    }

    /// The request `router` sent to `node` for `target` finished at `now`.
    #[inline]
    pub(crate) fn done(&mut self, router: u32, node: NodeId, target: &Target, now: u64) {
        let fe = &mut self.routers[router as usize];
        self.nodes.finished(node);
        if self.delay.is_some() {
            fe.view.finished(node);
        }
        fe.policy.done(node, target, Outcome::Ok, now);
    }

    /// `node` queued the disk read of a miss of `bytes`: the nodes report the bytes of
    /// misses they are reading in, as larder's nodes do.
    #[inline]
    pub(crate) fn miss_started(&mut self, node: NodeId, bytes: u64) {
        self.nodes.miss_started(node, bytes);
    }

    /// `node` finished the disk read of a miss of `bytes`.
    #[inline]
    pub(crate) fn miss_finished(&mut self, node: NodeId, bytes: u64) {
        self.nodes.miss_finished(node, bytes);
    }

    /// Every front-end hears a new membership at `now` (a node added, removed or back).
    pub(crate) fn membership(&mut self, nodes: &[NodeState], now: u64) {
        for fe in &mut self.routers {
            fe.policy.membership(nodes, now);
        }
    }

    /// Nodes publish what they hold (`digests[i]` for node i, `None`: unchanged); each
    /// front-end sees it at its next poll, as it sees the load.
    pub(crate) fn publish_holdings(&mut self, digests: Vec<crate::holdings::Published>) {
        let changed = digests.into_iter().enumerate().filter_map(|(i, d)| Some((i, d?)));
        for (i, digest) in changed {
            let holdings = digest.map(|d| Arc::new(d) as Arc<dyn Holdings>);
            self.nodes.set_holdings(NodeId(i as u32), holdings);
        }
    }

    /// The policies' counters summed over the front-ends (each keeps its own table).
    pub(crate) fn stats(&self) -> PolicyStats {
        self.routers.iter().map(|fe| fe.policy.stats()).fold(PolicyStats::default(), |a, s| {
            PolicyStats {
                table_entries: a.table_entries + s.table_entries,
                reassignments: a.reassignments + s.reassignments,
                replications: a.replications + s.replications,
                evictions: a.evictions + s.evictions,
            }
        })
    }
}

//! What one simulation run is: cluster size, caches, policy, costs, measurement window.

use cache::Kind;
use policy::PolicySpec;
use trace::MembershipEvent;

use crate::{CacheSizes, Model, SimError, MAX_NODES, MAX_ROUTERS};

/// Most shared cores accepted (one machine's worth, and then some).
pub const MAX_SHARED_CPUS: u32 = 4096;

/// One run's settings.
#[derive(Clone, Debug)]
pub struct SimConfig {
    /// Back-end nodes (≥ 1).
    pub nodes: usize,
    /// Each node's cache capacity.
    pub caches: CacheSizes,
    /// Replacement policy of every node's cache (GreedyDual-Size in the LARD paper).
    pub cache_kind: Kind,
    pub policy: PolicySpec,
    pub model: Model,
    /// Share of the requests, from the start, replayed only to warm the caches and
    /// the policy's table: they are not measured. In `0.0..1.0`.
    pub warmup: f64,
    /// Requests the front-end admits at once; `None` for LARD's
    /// S = (n−1)·T_high + T_low − 1 (from the policy's thresholds).
    pub max_in_flight: Option<u64>,
    /// `None`: every node has a CPU of its own, and so has the front-end (the LARD
    /// model). `Some(k)`: the nodes, the front-end and the clients share k cores of one
    /// machine, each node being an event loop and a helper thread (see `cpu_pool.rs`).
    pub shared_cpus: Option<u32>,
    /// Front-ends, each running its own instance of `policy` in front of the same nodes,
    /// the requests spread over them as a layer-4 spreader would (`front_ends.rs`,
    /// `spread.rs`). The admission limit S stays the cluster's: clients keep S requests
    /// in flight over all front-ends together.
    pub routers: usize,
    /// With several front-ends: how often each polls the nodes' load reports, in ns (the
    /// oldest report it may act on). 0: every front-end sees the exact counts.
    pub report_delay_ns: u64,
    /// Seed of the spreading of requests over front-ends.
    pub spread_seed: u64,
    /// Nodes added, removed or restarted when the replay reaches each event's time in
    /// the workload (`membership.rs`); a node first added is out at the start.
    pub events: Vec<MembershipEvent>,
}

/// HACC's load monitor polled the nodes every 200 ms.
pub const DEFAULT_REPORT_DELAY_NS: u64 = 200_000_000;

impl SimConfig {
    /// The paper's settings for `nodes` nodes with `cache_bytes` each, running `policy`.
    pub fn new(nodes: usize, cache_bytes: u64, policy: PolicySpec) -> Self {
        Self::with_caches(nodes, CacheSizes::Uniform(cache_bytes), policy)
    }

    /// The paper's settings with one cache size per node: as many nodes as `cache_bytes`
    /// has entries.
    pub fn per_node(cache_bytes: Vec<u64>, policy: PolicySpec) -> Self {
        Self::with_caches(cache_bytes.len(), CacheSizes::PerNode(cache_bytes), policy)
    }

    /// The paper's settings for `nodes` nodes with `caches`, running `policy`.
    pub fn with_caches(nodes: usize, caches: CacheSizes, policy: PolicySpec) -> Self {
        SimConfig {
            nodes,
            caches,
            cache_kind: Kind::Gds,
            policy,
            model: Model::default(),
            warmup: 0.2,
            max_in_flight: None,
            shared_cpus: None,
            routers: 1,
            report_delay_ns: DEFAULT_REPORT_DELAY_NS,
            spread_seed: 1,
            events: Vec::new(),
        }
    }

    /// Requests in flight the front-end allows: LARD's S = (n−1)·T_high + T_low − 1,
    /// which keeps every node between its thresholds, at least 1.
    pub fn in_flight_limit(&self) -> u64 {
        self.max_in_flight.unwrap_or_else(|| {
            let s = (self.nodes.saturating_sub(1)) as f64 * self.policy.t_high + self.policy.t_low
                - 1.0;
            s.clamp(1.0, u32::MAX as f64) as u64
        })
    }

    pub fn validate(&self) -> Result<(), SimError> {
        let bad = |m: String| Err(SimError::Config(m));
        if self.nodes == 0 || self.nodes > MAX_NODES {
            return bad(format!("nodes must be in 1..={MAX_NODES}"));
        }
        self.caches.check(self.nodes)?;
        if !(0.0..1.0).contains(&self.warmup) {
            return bad("warmup must be a fraction in 0.0..1.0".into());
        }
        if self.routers == 0 || self.routers > MAX_ROUTERS {
            return bad(format!("routers must be in 1..={MAX_ROUTERS}"));
        }
        if matches!(self.shared_cpus, Some(0)) {
            return bad("shared_cpus must be at least 1".into());
        }
        if self.shared_cpus.is_some_and(|k| k > MAX_SHARED_CPUS) {
            return bad(format!("shared_cpus must be at most {MAX_SHARED_CPUS}"));
        }
        if matches!(self.max_in_flight, Some(0)) {
            return bad("max_in_flight must be at least 1".into());
        }
        if self.in_flight_limit() > u32::MAX as u64 - 1 {
            return bad("max_in_flight is too large".into());
        }
        self.policy.validate().map_err(SimError::Policy)
    }
}

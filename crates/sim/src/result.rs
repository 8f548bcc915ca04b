//! What a run measured, as printed in tables and JSON lines.

use serde::Serialize;

/// One node's share of a run, over the measured window.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NodeResult {
    /// This node's cache, in MiB.
    pub cache_mb: f64,
    /// Requests this node completed in the window.
    pub requests: u64,
    /// Share of the window its CPU was busy, 0.0–1.0; with shared cores, its event loop's
    /// and helper's CPU time over the window together (up to 2.0).
    pub cpu_util: f64,
    /// Share of the window its disk was busy, 0.0–1.0.
    pub disk_util: f64,
    /// Hits over lookups of the requests it took in the window.
    pub hit_ratio: f64,
    /// Targets whose last request went to this node: its share of the placement.
    pub targets: u64,
}

/// One simulation run: one policy, one cluster size, one workload.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunResult {
    pub policy: String,
    pub nodes: usize,
    /// Front-ends, each with its own instance of the policy.
    pub routers: usize,
    /// With several front-ends, how old a node report they act on may be, in ms.
    pub report_delay_ms: f64,
    /// What requests are spread over front-ends by: `client` or `request`.
    pub spread: String,
    /// All nodes' caches together, in MiB (each node's is in `per_node`).
    pub cache_mb_total: f64,
    /// Cache replacement (`gds` or `lru`).
    pub cache: String,
    /// Requests replayed (warm-up included); every one of them completed.
    pub requests: u64,
    /// Requests not measured because they warmed the caches.
    pub warmup_requests: u64,
    /// Requests completed inside the measured window.
    pub measured_requests: u64,
    /// Length of the measured window in simulated seconds.
    pub sim_seconds: f64,
    /// `measured_requests / sim_seconds`: the cluster's capacity, since the front-end
    /// kept it saturated.
    pub throughput_rps: f64,
    /// Cache hits over lookups of the measured requests, over all nodes.
    pub hit_ratio: f64,
    /// Hit ratio of one cache of `cache_mb_total` (same replacement) over the same
    /// request stream: what perfect locality with no load balancing would reach.
    pub ideal_hit_ratio: f64,
    /// Max over mean of the nodes' completed requests in the window (1.0 = even).
    pub imbalance: f64,
    /// Mean over nodes of CPU and disk utilisation.
    pub mean_cpu_util: f64,
    pub mean_disk_util: f64,
    /// The front-end's admission limit S, and the most requests it ever had in flight.
    pub in_flight_limit: u64,
    pub max_in_flight: u64,
    /// False when the stream was too short to keep the cluster saturated through the
    /// window (it then runs until the last completion, drain included).
    pub saturated: bool,
    /// The policy's own counters at the end of the run, summed over front-ends.
    pub reassignments: u64,
    pub replications: u64,
    pub table_entries: u64,
    pub table_evictions: u64,
    pub per_node: Vec<NodeResult>,
}

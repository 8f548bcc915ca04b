//! The router's `/stats` JSON: what its dashboard (`GET /` on the admin address) polls,
//! and what scripts and tests read. Written by the router from its own state, read here
//! too, so writer and readers share one type.

use serde::{Deserialize, Serialize};

use crate::latency::LatencyHistogram;
use crate::LoadReport;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RouterStats {
    /// The router's name (`X-Larder-Router`), for the dashboard's title.
    pub router: String,
    /// Milliseconds since the router started: the clock rates are taken on (two
    /// snapshots' counters over the difference of their `uptime_ms`).
    pub uptime_ms: u64,
    /// Upper bounds of [`LatencyHistogram`]'s buckets, in seconds.
    pub latency_bounds_seconds: Vec<f64>,
    pub policy: PolicyStats,
    pub placement: PlacementStats,
    /// How many targets the hot-target table tracks.
    pub hot_targets_tracked: usize,
    /// The hottest targets and the nodes the policy holds them on, hottest first.
    pub hot_targets: Vec<HotTarget>,
    /// Every node in the membership, and removed ones still finishing requests.
    pub nodes: Vec<NodeRow>,
    /// DNS discovery's names, their nodes, last refresh and last error.
    #[serde(default)]
    pub discovery: DiscoveryStats,
    /// Requests by the protocol clients spoke, and HTTP/2's connections.
    #[serde(default)]
    pub protocols: ProtocolStats,
    /// Client connections passed to nodes on this host, and offers that fell back to the relay.
    #[serde(default)]
    pub handoff: HandoffStats,
}

/// Connection handoffs ([`crate::Handoff`]): connections a node took, and offers that
/// fell back to the relay (no answer in time, refused, or the node's socket gone).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HandoffStats {
    pub handoffs: u64,
    pub fallbacks: u64,
}

/// Requests sent to nodes by the protocol the client spoke (a retry counts again, as in
/// each node's `requests`), and the HTTP/2 connections.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProtocolStats {
    pub http1_requests: u64,
    pub http2_requests: u64,
    /// HTTP/2 client connections open now.
    pub http2_connections_open: u64,
    /// HTTP/2 client connections since the router started.
    pub http2_connections: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PolicyStats {
    pub name: String,
    pub table_entries: u64,
    pub reassignments: u64,
    pub replications: u64,
    pub evictions: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PlacementStats {
    pub mode: String,
    pub basis: String,
    pub nodes_reporting_holdings: usize,
    pub recent_picks_of_reporting_nodes: u64,
    pub recent_picks_on_holders: Option<f64>,
    /// Routers the nodes say poll them (the most any node says; 0: none says). With 1, a
    /// router in front of a few equal nodes is alone and places as per-router LARD.
    #[serde(default)]
    pub routers: u32,
    /// The placement the last pick followed, by its config name: `mode`, or `per-router`
    /// while a shared placement's router is alone (absent for policies that place
    /// nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub following: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HotTarget {
    pub path: String,
    pub hits: u64,
    pub nodes: Vec<String>,
}

/// Where a node stands with the router.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NodeState {
    /// Takes traffic at its full weight.
    #[default]
    Up,
    /// Ejected or failing its checks: takes no traffic.
    Down,
    /// Removed from the membership or given weight 0: takes no new traffic, finishes
    /// what it has.
    Draining,
    /// Back after being down: its weight still ramps up (slow start).
    Warming,
}

/// One node as the router sees it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NodeRow {
    pub id: usize,
    pub name: String,
    pub addr: String,
    /// False once a reload or discovery removed the node.
    pub configured: bool,
    pub up: bool,
    pub state: NodeState,
    pub weight: u32,
    /// The weight the policy sees now, in per mille of the configured one (slow start).
    pub effective_weight_permille: u32,
    pub in_flight: u64,
    pub load: f64,
    pub cpu_pct: f64,
    pub disk_pct: f64,
    pub requests: u64,
    pub errors: u64,
    pub retries: u64,
    /// Responses relayed from the node by status class: index 0 is 1xx … index 4 is 5xx.
    pub responses_by_class: [u64; 5],
    /// Moving average of upstream time, µs.
    pub latency_us: f64,
    /// Upstream time (request sent → response complete).
    pub upstream_time: LatencyHistogram,
    /// Whole request time at the router (request read → response relayed).
    pub request_duration: LatencyHistogram,
    pub idle_connections: usize,
    pub assigned_hot_targets: usize,
    pub report_age_ms: Option<u64>,
    pub holdings_version: Option<u64>,
    pub holdings_keys: Option<u64>,
    /// The cache capacity the node reports (None: it does not say); placement gives a
    /// node first choices in proportion to it.
    #[serde(default)]
    pub cache_capacity_bytes: Option<u64>,
    /// True while the node warms after a join or restart: its share of first choices
    /// follows its hit ratio until it catches up with the others.
    #[serde(default)]
    pub cache_warming: bool,
    /// The node's share of first choices, 0 to 1 (1: settled).
    #[serde(default)]
    pub share: f64,
    /// The node's last load report (its cache hits and misses, fill, origin fetches),
    /// without the holdings digest.
    pub report: Option<LoadReport>,
}

/// DNS discovery as the router runs it: the nameserver, its rounds, and every name.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DiscoveryStats {
    /// The nameserver asked (`IP:PORT`); none while no name is configured.
    pub resolver: Option<String>,
    /// Rounds whose nodes are in the membership: a change made while round k+1 may be
    /// under way is in once this counts k+2.
    pub refreshes: u64,
    pub next_refresh_in_ms: Option<u64>,
    /// Nodes found beyond `max_nodes`, left out of the membership.
    pub nodes_cut_by_max_nodes: usize,
    pub names: Vec<DiscoveredName>,
}

/// One configured DNS name and what it last resolved to.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DiscoveredName {
    pub name: String,
    /// `a` (A and AAAA records) or `srv`.
    pub kind: String,
    /// The port of every address (`a`); 0 for `srv`, whose records carry the ports.
    pub port: u16,
    /// The nodes in force: the last good answer's.
    pub nodes: Vec<DiscoveredNode>,
    /// The shortest TTL of the last answer, when the last round got one.
    pub ttl_s: Option<u64>,
    pub last_refresh_ms_ago: Option<u64>,
    pub last_ok_ms_ago: Option<u64>,
    /// Why the name could not be resolved, or why its last nodes stay; none once it
    /// answers again.
    pub last_error: Option<String>,
}

/// A node found under a name.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DiscoveredNode {
    pub name: String,
    pub addr: String,
}

impl RouterStats {
    pub fn parse(body: &[u8]) -> Result<RouterStats, serde_json::Error> {
        serde_json::from_slice(body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The discovery part the router has always written (the dashboard's and scripts'
    /// shape) reads as the type, and writes back the same.
    #[test]
    fn the_discovery_part_reads_and_writes_the_shape_the_router_serves() {
        let discovery = serde_json::json!({
            "resolver": "10.96.0.10:53",
            "refreshes": 7,
            "next_refresh_in_ms": 4000,
            "nodes_cut_by_max_nodes": 0,
            "names": [{
                "name": "_http._tcp.web", "kind": "srv", "port": 0,
                "nodes": [{"name": "pod-0.web", "addr": "10.0.0.1:80"}],
                "ttl_s": 30, "last_refresh_ms_ago": 1000, "last_ok_ms_ago": 1000,
                "last_error": null,
            }],
        });
        let mut doc = serde_json::to_value(RouterStats::default()).unwrap();
        doc["discovery"] = discovery.clone();
        let stats = RouterStats::parse(doc.to_string().as_bytes()).unwrap();
        assert_eq!(stats.discovery.names[0].nodes[0].addr, "10.0.0.1:80");
        assert_eq!(stats.discovery.names[0].last_error, None);
        assert_eq!(serde_json::to_value(&stats.discovery).unwrap(), discovery);
    }
}

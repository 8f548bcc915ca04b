//! The admin `/stats` document ([`wire::RouterStats`]) and `/targets?top=N`, built from
//! the cluster's state at one moment.

use std::time::Instant;

use policy::NodeId;
use serde_json::json;
use wire::router_stats::{
    HandoffStats, HotTarget, NodeRow, NodeState, PlacementStats, PolicyStats, ProtocolStats,
};
use wire::RouterStats;

use crate::cluster::{Cluster, NodeStatus, Placement};
use crate::health::WEIGHT_SCALE;

/// How many of the hottest targets `/stats` lists (the dashboard's table).
const STATS_HOT_TARGETS: usize = 10;

/// Per node: state, weight, in-flight, load, counters, latency histograms, the node's own
/// last load report; per policy: table size, reassignments, replications; the hottest
/// targets and their nodes; DNS discovery's names and nodes.
pub(crate) fn stats(cluster: &Cluster) -> RouterStats {
    let upstreams = cluster.upstreams();
    let (hot, hot_tracked) = {
        let hot = cluster.hot();
        (hot.top(usize::MAX), hot.len())
    };
    let now = Instant::now();
    let discovery = cluster.discovered().status(now);
    let rules = cluster.settings().health;
    let router = cluster.settings().config.router_name();
    let p = cluster.placement();
    let policy_stats = p.policy.stats();
    let nodes: Vec<NodeRow> = p
        .nodes
        .iter()
        .enumerate()
        .filter(|(i, n)| n.configured || p.view.in_flight(NodeId(*i as u32)) > 0)
        .map(|(i, n)| {
            let id = NodeId(i as u32);
            let load = p.view.node(id);
            let effective = n.health.weight(n.weight, now, &rules);
            let full = n.weight.saturating_mul(WEIGHT_SCALE).max(1);
            NodeRow {
                id: i,
                name: n.name.to_string(),
                addr: n.addr.to_string(),
                configured: n.configured,
                up: n.health.is_up(),
                state: state(
                    n,
                    (n.health.ramping(now, &rules) && effective < full) || p.warmup.warming(id),
                ),
                weight: n.weight,
                effective_weight_permille: (u64::from(effective) * 1000 / u64::from(full)) as u32,
                in_flight: u64::from(load.in_flight),
                load: p.view.load(id),
                cpu_pct: load.cpu_pct,
                disk_pct: load.disk_pct,
                requests: n.stats.requests,
                errors: n.stats.errors,
                retries: n.stats.retries,
                responses_by_class: n.stats.by_class,
                latency_us: n.stats.latency_us(),
                upstream_time: n.stats.upstream_time.clone(),
                request_duration: n.stats.request_duration.clone(),
                idle_connections: upstreams.get(i).map_or(0, |u| u.idle_count()),
                assigned_hot_targets: hot
                    .iter()
                    .filter(|e| p.policy.placement(&e.target).contains(&id))
                    .count(),
                report_age_ms: n
                    .reported_at
                    .map(|at| now.saturating_duration_since(at).as_millis() as u64),
                holdings_version: n.holdings.map(|(version, _)| version),
                holdings_keys: n.holdings.map(|(_, keys)| keys),
                cache_capacity_bytes: p.view.capacity(id),
                cache_warming: p.warmup.warming(id),
                share: p.view.warmth(id),
                report: n.last_report.clone(),
            }
        })
        .collect();
    RouterStats {
        router,
        uptime_ms: p.clock.at(now) / 1_000_000,
        latency_bounds_seconds: wire::LATENCY_BOUNDS_SECONDS.to_vec(),
        policy: PolicyStats {
            name: p.policy.name().to_string(),
            table_entries: policy_stats.table_entries,
            reassignments: policy_stats.reassignments,
            replications: policy_stats.replications,
            evictions: policy_stats.evictions,
        },
        placement: placement(&p, now),
        hot_targets_tracked: hot_tracked,
        hot_targets: hot.iter().take(STATS_HOT_TARGETS).map(|e| hot_target(&p, e)).collect(),
        protocols: protocols(cluster, &nodes),
        handoff: HandoffStats {
            handoffs: cluster.handoff_counts().handed(),
            fallbacks: cluster.handoff_counts().fallbacks(),
        },
        nodes,
        discovery,
    }
}

/// Requests by protocol: HTTP/2 counts its own, HTTP/1.1's are the rest of the nodes'.
fn protocols(cluster: &Cluster, nodes: &[NodeRow]) -> ProtocolStats {
    let counts = cluster.http2_counts();
    let all: u64 = nodes.iter().map(|n| n.requests).sum();
    ProtocolStats {
        http1_requests: all.saturating_sub(counts.requests()),
        http2_requests: counts.requests(),
        http2_connections_open: counts.connections_open(),
        http2_connections: counts.connections(),
    }
}

/// Up, down, warming (slow start after a comeback, or a cache filling after a join or
/// restart) or draining (removed, or weight 0).
fn state(n: &NodeStatus, warming: bool) -> NodeState {
    if !n.configured || n.weight == 0 {
        NodeState::Draining
    } else if !n.health.is_up() {
        NodeState::Down
    } else if warming {
        NodeState::Warming
    } else {
        NodeState::Up
    }
}

/// How this router places targets, and how often its recent picks fell on a node that
/// holds the target by the nodes' own reports.
fn placement(p: &Placement, now: Instant) -> PlacementStats {
    let (picks, share) = p.agreement.share(p.clock.at(now));
    let reporting = p.nodes.iter().filter(|n| n.configured && n.holdings.is_some()).count();
    let basis = if reporting > 0 {
        "node reports of their holdings, then hashing on node names"
    } else {
        "hashing on node names and this router's own table (no node reports its holdings)"
    };
    PlacementStats {
        mode: p.spec.placement.name().to_string(),
        basis: basis.to_string(),
        nodes_reporting_holdings: reporting,
        recent_picks_of_reporting_nodes: picks,
        recent_picks_on_holders: share,
        routers: p.view.routers(),
        following: p.policy.placement_followed().map(|m| m.name().to_string()),
    }
}

/// One hot target and the names of the nodes the policy holds it on.
fn hot_target(p: &Placement, e: &crate::hot::HotEntry) -> HotTarget {
    let nodes = p
        .policy
        .placement(&e.target)
        .iter()
        .filter_map(|id| p.nodes.get(id.index()).map(|n| n.name.to_string()))
        .collect();
    HotTarget { path: e.path.clone(), hits: e.hits, nodes }
}

/// The `top` hottest targets and the nodes the policy holds them on.
pub(crate) fn targets(cluster: &Cluster, top: usize) -> serde_json::Value {
    let hot = cluster.hot().top(top);
    let p = cluster.placement();
    let list: Vec<HotTarget> = hot.iter().map(|e| hot_target(&p, e)).collect();
    json!({ "targets": list })
}

//! The admin listener (127.0.0.1 by default, apart from the traffic port):
//! `/stats` (JSON), `/metrics` (Prometheus text) and `/targets?top=N` (hottest targets and
//! the nodes that hold them). One request per connection; answers are small.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use http1::Status;
use policy::NodeId;
use serde_json::json;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};

use crate::buf::IoBuf;
use crate::cluster::{Cluster, Placement};
use crate::head;

/// An admin request must arrive within this long.
const ADMIN_TIMEOUT: Duration = Duration::from_secs(5);
/// Default and largest `top` for `/targets`.
const DEFAULT_TOP: usize = 20;
const MAX_TOP: usize = 10_000;

pub(crate) async fn run(listener: TcpListener, cluster: Arc<Cluster>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else { continue };
        let cluster = cluster.clone();
        tokio::spawn(async move {
            let _ = tokio::time::timeout(ADMIN_TIMEOUT, answer(stream, &cluster)).await;
        });
    }
}

async fn answer(mut stream: TcpStream, cluster: &Cluster) -> std::io::Result<()> {
    let limits = http1::Limits::default();
    let mut buf = IoBuf::new(limits.max_header_bytes + 1);
    let head = loop {
        match http1::parse_head(buf.filled(), &limits) {
            Ok(Some((head, _))) => break head,
            Ok(None) if !buf.is_full() => {
                if buf.fill(&mut stream).await? == 0 {
                    return Ok(());
                }
            }
            _ => {
                return reply(&mut stream, Status::BAD_REQUEST, "text/plain", "bad request\n").await
            }
        }
    };
    let top = head
        .query()
        .and_then(|q| q.split('&').find_map(|kv| kv.strip_prefix("top=")))
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(DEFAULT_TOP)
        .min(MAX_TOP);
    match head.path() {
        "/stats" => {
            reply(&mut stream, Status::OK, "application/json", &stats(cluster).to_string()).await
        }
        "/metrics" => {
            reply(&mut stream, Status::OK, "text/plain; version=0.0.4", &metrics(cluster)).await
        }
        "/targets" => {
            reply(&mut stream, Status::OK, "application/json", &targets(cluster, top).to_string())
                .await
        }
        _ => {
            reply(
                &mut stream,
                Status::NOT_FOUND,
                "text/plain",
                "try /stats, /metrics or /targets?top=N\n",
            )
            .await
        }
    }
}

async fn reply(
    stream: &mut TcpStream,
    status: Status,
    ctype: &str,
    body: &str,
) -> std::io::Result<()> {
    let mut out = Vec::with_capacity(body.len() + 128);
    head::simple_response(status, ctype, body.as_bytes(), true, &mut out);
    stream.write_all(&out).await
}

/// Per node: in-flight, load, requests, errors, health, assigned (hot) targets; per
/// policy: table size, reassignments, replications; DNS discovery: per name, its nodes,
/// last refresh and last error.
pub(crate) fn stats(cluster: &Cluster) -> serde_json::Value {
    let upstreams = cluster.upstreams();
    let (hot, hot_tracked) = {
        let hot = cluster.hot();
        (hot.top(usize::MAX), hot.len())
    };
    let now = Instant::now();
    let discovery = cluster.discovered().status(now);
    let p = cluster.placement();
    let policy_stats = p.policy.stats();
    let nodes: Vec<_> = p
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let id = NodeId(i as u32);
            let load = p.view.node(id);
            let assigned =
                hot.iter().filter(|e| p.policy.placement(&e.target).contains(&id)).count();
            json!({
                "id": i,
                "name": &*n.name,
                "addr": n.addr.to_string(),
                "configured": n.configured,
                "up": n.health.is_up(),
                "weight": n.weight,
                "in_flight": load.in_flight,
                "load": p.view.load(id),
                "cpu_pct": load.cpu_pct,
                "disk_pct": load.disk_pct,
                "requests": n.stats.requests,
                "errors": n.stats.errors,
                "retries": n.stats.retries,
                "latency_us": n.stats.latency_us(),
                "idle_connections": upstreams.get(i).map_or(0, |u| u.idle_count()),
                "assigned_hot_targets": assigned,
                "report_age_ms": n.reported_at.map(|at| now.saturating_duration_since(at).as_millis() as u64),
                "holdings_version": n.holdings.map(|(version, _)| version),
                "holdings_keys": n.holdings.map(|(_, keys)| keys),
                "cache_capacity_bytes": p.view.capacity(id),
                "warming": p.warmup.warming(id),
                "share": p.view.warmth(id),
            })
        })
        .collect();
    json!({
        "policy": {
            "name": p.policy.name(),
            "table_entries": policy_stats.table_entries,
            "reassignments": policy_stats.reassignments,
            "replications": policy_stats.replications,
            "evictions": policy_stats.evictions,
        },
        "placement": placement(cluster, &p, now),
        "hot_targets_tracked": hot_tracked,
        "nodes": nodes,
        "discovery": discovery,
    })
}

/// How this router places targets, and how often its recent picks fell on a node that
/// holds the target by the nodes' own reports.
fn placement(cluster: &Cluster, p: &Placement, now: Instant) -> serde_json::Value {
    let (picks, share) = p.agreement.share(cluster.clock(now));
    let reporting = p.nodes.iter().filter(|n| n.configured && n.holdings.is_some()).count();
    let basis = if reporting > 0 {
        "node reports of their holdings, then hashing on node names"
    } else {
        "hashing on node names and this router's own table (no node reports its holdings)"
    };
    json!({
        "mode": p.spec.placement.name(),
        "basis": basis,
        "nodes_reporting_holdings": reporting,
        "recent_picks_of_reporting_nodes": picks,
        "recent_picks_on_holders": share,
    })
}

/// The same figures in Prometheus text format.
pub(crate) fn metrics(cluster: &Cluster) -> String {
    let now = Instant::now();
    let p = cluster.placement();
    let mut s = String::new();
    let per_node: [(&str, &str, &str); 6] = [
        ("larder_route_requests_total", "counter", "Requests dispatched to the node."),
        ("larder_route_errors_total", "counter", "Requests the node failed."),
        ("larder_route_in_flight", "gauge", "Requests in flight on the node."),
        ("larder_route_load", "gauge", "The load number the policy sees."),
        ("larder_route_up", "gauge", "1 while the node takes traffic."),
        ("larder_route_latency_seconds", "gauge", "Moving average of upstream time."),
    ];
    for (name, kind, help) in per_node {
        let _ = writeln!(s, "# HELP {name} {help}\n# TYPE {name} {kind}");
        for (i, n) in p.nodes.iter().enumerate().filter(|(_, n)| n.configured) {
            let id = NodeId(i as u32);
            let value = match name {
                "larder_route_requests_total" => n.stats.requests as f64,
                "larder_route_errors_total" => n.stats.errors as f64,
                "larder_route_in_flight" => p.view.in_flight(id) as f64,
                "larder_route_load" => p.view.load(id),
                "larder_route_up" => f64::from(u8::from(n.health.is_up())),
                _ => n.stats.latency_us() / 1e6,
            };
            let _ = writeln!(s, "{name}{{node=\"{}\"}} {value}", n.name);
        }
    }
    let name = "larder_route_report_age_seconds";
    let help = "Time since the node's last load report.";
    let _ = writeln!(s, "# HELP {name} {help}\n# TYPE {name} gauge");
    for n in p.nodes.iter().filter(|n| n.configured) {
        if let Some(at) = n.reported_at {
            let age = now.saturating_duration_since(at).as_secs_f64();
            let _ = writeln!(s, "{name}{{node=\"{}\"}} {age}", n.name);
        }
    }
    if let (_, Some(share)) = p.agreement.share(cluster.clock(now)) {
        let name = "larder_route_picks_on_holders_ratio";
        let help = "Share of recent picks that went to a node holding the target by its report.";
        let _ = writeln!(s, "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {share}");
    }
    let st = p.policy.stats();
    for (name, value) in [
        ("larder_route_policy_table_entries", st.table_entries),
        ("larder_route_policy_reassignments_total", st.reassignments),
        ("larder_route_policy_replications_total", st.replications),
    ] {
        let kind = if name.ends_with("_total") { "counter" } else { "gauge" };
        let _ = writeln!(s, "# TYPE {name} {kind}\n{name} {value}");
    }
    s
}

/// The `top` hottest targets and the nodes the policy holds them on.
pub(crate) fn targets(cluster: &Cluster, top: usize) -> serde_json::Value {
    let hot = cluster.hot().top(top);
    let p = cluster.placement();
    let list: Vec<_> = hot
        .into_iter()
        .map(|e| {
            let nodes: Vec<&str> = p
                .policy
                .placement(&e.target)
                .iter()
                .filter_map(|id| p.nodes.get(id.index()).map(|n| &*n.name))
                .collect();
            json!({ "path": e.path, "hits": e.hits, "nodes": nodes })
        })
        .collect();
    json!({ "targets": list })
}

//! The admin `/metrics`: the router's figures as Prometheus text, through
//! [`wire::Exposition`] (the `prometheus-client` encoder). Per node (label `node`):
//! requests, errors, responses by status class (label `class`), in-flight, load, up,
//! histograms of whole-request and upstream time; per policy: table size, reassignments,
//! replications; requests by client protocol (label `protocol`) and HTTP/2 connections.

use std::time::Instant;

use policy::NodeId;
use wire::exposition::Labels;
use wire::Exposition;

use crate::cluster::{Cluster, NodeStatus};

/// Status classes, in the order of `NodeStats::by_class`.
const CLASSES: [&str; 5] = ["1xx", "2xx", "3xx", "4xx", "5xx"];

pub(crate) fn metrics(cluster: &Cluster) -> String {
    let now = Instant::now();
    let p = cluster.placement();
    let nodes: Vec<(NodeId, &NodeStatus)> = p
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| n.configured)
        .map(|(i, n)| (NodeId(i as u32), n))
        .collect();
    let node = |n: &NodeStatus| -> Labels { vec![("node", n.name.to_string())] };
    let per_node = |value: &dyn Fn(NodeId, &NodeStatus) -> f64| -> Vec<(Labels, f64)> {
        nodes.iter().map(|&(id, n)| (node(n), value(id, n))).collect()
    };
    let count = |value: &dyn Fn(&NodeStatus) -> u64| -> Vec<(Labels, u64)> {
        nodes.iter().map(|&(_, n)| (node(n), value(n))).collect()
    };
    let mut e = Exposition::default();
    e.counter(
        "larder_route_requests",
        "Requests dispatched to the node.",
        count(&|n| n.stats.requests),
    );
    e.counter("larder_route_errors", "Requests the node failed.", count(&|n| n.stats.errors));
    e.counter(
        "larder_route_retries",
        "Requests sent to the node after failing on another.",
        count(&|n| n.stats.retries),
    );
    let by_class = nodes
        .iter()
        .flat_map(|&(_, n)| {
            CLASSES.iter().zip(n.stats.by_class).map(move |(class, v)| {
                (vec![("node", n.name.to_string()), ("class", class.to_string())], v)
            })
        })
        .collect();
    e.counter(
        "larder_route_responses",
        "Responses relayed from the node, by status class.",
        by_class,
    );
    e.histogram(
        "larder_route_request_duration_seconds",
        "Time from a request read to its response relayed to the client, retries included.",
        nodes.iter().map(|&(_, n)| (node(n), n.stats.request_duration.clone())).collect(),
    );
    e.histogram(
        "larder_route_upstream_duration_seconds",
        "Time from a request sent to the node to its response received whole.",
        nodes.iter().map(|&(_, n)| (node(n), n.stats.upstream_time.clone())).collect(),
    );
    e.gauge(
        "larder_route_in_flight",
        "Requests in flight on the node.",
        per_node(&|id, _| p.view.in_flight(id) as f64),
    );
    e.gauge(
        "larder_route_load",
        "The load number the policy sees.",
        per_node(&|id, _| p.view.load(id)),
    );
    e.gauge(
        "larder_route_up",
        "1 while the node takes traffic.",
        per_node(&|_, n| f64::from(u8::from(n.health.is_up()))),
    );
    e.gauge(
        "larder_route_latency_seconds",
        "Moving average of upstream time (about the last second).",
        per_node(&|_, n| n.stats.latency_us() / 1e6),
    );
    let ages = nodes
        .iter()
        .filter_map(|&(_, n)| {
            n.reported_at.map(|at| (node(n), now.saturating_duration_since(at).as_secs_f64()))
        })
        .collect();
    e.gauge("larder_route_report_age_seconds", "Time since the node's last load report.", ages);
    if let (_, Some(share)) = p.agreement.share(p.clock.at(now)) {
        e.gauge(
            "larder_route_picks_on_holders_ratio",
            "Share of recent picks that went to a node holding the target by its report.",
            vec![(vec![], share)],
        );
    }
    let http2 = cluster.http2_counts();
    let all: u64 = nodes.iter().map(|&(_, n)| n.stats.requests).sum();
    let by_protocol = vec![
        (vec![("protocol", "http/1.1".to_string())], all.saturating_sub(http2.requests())),
        (vec![("protocol", "h2".to_string())], http2.requests()),
    ];
    e.counter(
        "larder_route_requests_by_protocol",
        "Requests dispatched to nodes, by the protocol the client spoke.",
        by_protocol,
    );
    e.gauge(
        "larder_route_http2_connections_open",
        "HTTP/2 client connections open now.",
        vec![(vec![], http2.connections_open() as f64)],
    );
    e.counter(
        "larder_route_http2_connections",
        "HTTP/2 client connections accepted.",
        vec![(vec![], http2.connections())],
    );
    let handoff = cluster.handoff_counts();
    e.counter(
        "larder_route_handoffs",
        "Client connections passed to a node on this host, which serves them from then on.",
        vec![(vec![], handoff.handed())],
    );
    e.counter(
        "larder_route_handoff_fallbacks",
        "Connection handoffs a node did not take in time; their requests were relayed.",
        vec![(vec![], handoff.fallbacks())],
    );
    let st = p.policy.stats();
    e.gauge(
        "larder_route_policy_table_entries",
        "Entries in the policy's target table.",
        vec![(vec![], st.table_entries as f64)],
    );
    e.counter(
        "larder_route_policy_reassignments",
        "Targets moved from one node to another.",
        vec![(vec![], st.reassignments)],
    );
    e.counter(
        "larder_route_policy_replications",
        "Nodes added to a target's server set.",
        vec![(vec![], st.replications)],
    );
    e.render()
}

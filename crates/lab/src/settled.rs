//! When a router's placement has settled: it has heard every node's own load report.
//!
//! A router places targets by the nodes' names, weights and the cache capacity each
//! reports. Until a node's first report arrives the router counts it at a default
//! capacity and slow-start weight, and when the report comes a target's first choice can
//! move: a request sent in that first moment can land on one node and the next request
//! for the same target on another, a miss the cluster did not need. `larder up` says
//! ready only once every router has heard from every node, so what it prints as ready
//! places as it will go on placing.

use std::net::SocketAddr;
use std::time::Instant;

use wire::RouterStats;

use crate::error::Result;
use crate::probe;
use crate::signals::Signals;

/// Waits until the router with the admin API at `admin` has a load report from every
/// node in its membership. Ok(false): a stop was requested first. An error at `deadline`
/// names the nodes not heard from.
pub fn every_node_reported(
    admin: SocketAddr,
    deadline: Instant,
    signals: &Signals,
) -> Result<bool> {
    all_of(admin, None, deadline, signals)
}

/// As [`every_node_reported`], once the membership has `nodes` configured nodes (a peer
/// told of the others by a reload).
pub fn every_one_of(
    admin: SocketAddr,
    nodes: usize,
    deadline: Instant,
    signals: &Signals,
) -> Result<bool> {
    all_of(admin, Some(nodes), deadline, signals)
}

fn all_of(
    admin: SocketAddr,
    nodes: Option<usize>,
    deadline: Instant,
    signals: &Signals,
) -> Result<bool> {
    probe::until(
        admin,
        "/stats",
        deadline,
        signals,
        |answer| match answer {
            Ok((200, body)) => match serde_json::from_slice::<RouterStats>(&body) {
                Ok(stats) => match (unreported(&stats), configured(&stats)) {
                    (_, n) if nodes.is_some_and(|want| want != n) => {
                        Err(format!("{n} nodes configured, not {}", nodes.unwrap_or(n)))
                    }
                    (silent, _) if silent.is_empty() => Ok(()),
                    (silent, _) => Err(format!("no load report yet from {}", silent.join(", "))),
                },
                Err(e) => Err(format!("its /stats does not parse: {e}")),
            },
            Ok((code, _)) => Err(format!("/stats answered {code}")),
            Err(e) => Err(format!("/stats: {e}")),
        },
        |last| {
            format!("the router at http://{admin} did not hear from every node in time ({last})")
        },
    )
}

/// How many nodes the router's membership has.
fn configured(stats: &RouterStats) -> usize {
    stats.nodes.iter().filter(|n| n.configured).count()
}

/// The names of the configured nodes the router has no load report from.
fn unreported(stats: &RouterStats) -> Vec<&str> {
    stats
        .nodes
        .iter()
        .filter(|n| n.configured && n.report_age_ms.is_none())
        .map(|n| n.name.as_str())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use wire::router_stats::NodeRow;

    fn row(name: &str, configured: bool, report_age_ms: Option<u64>) -> NodeRow {
        NodeRow { name: name.into(), configured, report_age_ms, ..NodeRow::default() }
    }

    #[test]
    fn names_the_configured_nodes_not_heard_from() {
        let stats = RouterStats {
            nodes: vec![
                row("n1", true, Some(12)),
                row("n2", true, None),
                row("gone", false, None),
                row("n3", true, Some(0)),
            ],
            ..RouterStats::default()
        };
        assert_eq!(unreported(&stats), ["n2"]);
        let all = RouterStats { nodes: vec![row("n1", true, Some(3))], ..RouterStats::default() };
        assert!(unreported(&all).is_empty());
    }
}

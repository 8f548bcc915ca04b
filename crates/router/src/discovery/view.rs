//! Discovery's state as `/stats` shows it ([`wire::router_stats::DiscoveryStats`]): the
//! nameserver, the rounds, and per name its nodes, TTL, last refresh and last error, with
//! instants turned into ages at one moment.

use std::time::Instant;

use wire::router_stats::{DiscoveredName, DiscoveredNode, DiscoveryStats};

use crate::discovery::state::Discovered;

impl Discovered {
    /// The `/stats` view at `now`.
    pub(crate) fn status(&self, now: Instant) -> DiscoveryStats {
        let ago =
            |at: Option<Instant>| at.map(|at| now.saturating_duration_since(at).as_millis() as u64);
        let names = self
            .names
            .iter()
            .map(|s| DiscoveredName {
                name: s.spec.name.clone(),
                kind: s.spec.kind.name().to_string(),
                port: s.spec.port,
                nodes: s
                    .found
                    .iter()
                    .map(|f| DiscoveredNode { name: f.name.clone(), addr: f.addr.to_string() })
                    .collect(),
                ttl_s: s.ttl.map(|t| t.as_secs()),
                last_refresh_ms_ago: ago(s.last_refresh),
                last_ok_ms_ago: ago(s.last_ok),
                last_error: s.last_error.clone(),
            })
            .collect();
        DiscoveryStats {
            resolver: self.resolver.map(|r| r.to_string()),
            refreshes: self.rounds,
            next_refresh_in_ms: self
                .next_at
                .map(|at| at.saturating_duration_since(now).as_millis() as u64),
            nodes_cut_by_max_nodes: self.cut,
            names,
        }
    }
}

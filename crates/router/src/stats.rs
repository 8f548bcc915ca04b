//! What the router counts per node for `/stats` and `/metrics`: requests, errors, retries
//! and the moving average of upstream time. Counting only: no decision reads these.

use std::time::{Duration, Instant};

use policy::Outcome;

use crate::ewma::Ewma;

/// How far back the latency average looks.
const LATENCY_DECAY: Duration = Duration::from_secs(1);

#[derive(Clone, Debug)]
pub(crate) struct NodeStats {
    pub requests: u64,
    pub errors: u64,
    pub retries: u64,
    /// Upstream time (request sent → response complete), µs.
    latency_us: Ewma,
}

impl Default for NodeStats {
    fn default() -> Self {
        NodeStats { requests: 0, errors: 0, retries: 0, latency_us: Ewma::new(LATENCY_DECAY) }
    }
}

impl NodeStats {
    /// A request was sent to the node (`retry`: after failing on another).
    pub(crate) fn dispatched(&mut self, retry: bool) {
        self.requests += 1;
        if retry {
            self.retries += 1;
        }
    }

    /// A request ended at `at`; `upstream_time` is known when a response came back.
    pub(crate) fn finished(
        &mut self,
        outcome: Outcome,
        upstream_time: Option<Duration>,
        at: Instant,
    ) {
        if outcome == Outcome::Failed {
            self.errors += 1;
        }
        if let Some(t) = upstream_time {
            self.latency_us.add(t.as_secs_f64() * 1e6, at);
        }
    }

    /// Moving average of upstream time, µs.
    pub(crate) fn latency_us(&self) -> f64 {
        self.latency_us.value()
    }
}

//! What the router counts per node for `/stats` and `/metrics`: requests, errors, retries,
//! responses by status class, histograms of upstream and whole-request time, and the
//! moving average of upstream time. Counting only: no decision reads these.

use std::time::{Duration, Instant};

use policy::Outcome;
use wire::LatencyHistogram;

use crate::ewma::Ewma;

/// How far back the latency average looks.
const LATENCY_DECAY: Duration = Duration::from_secs(1);

#[derive(Clone, Debug)]
pub(crate) struct NodeStats {
    pub requests: u64,
    pub errors: u64,
    pub retries: u64,
    /// Responses relayed by status class: index 0 is 1xx … index 4 is 5xx.
    pub by_class: [u64; 5],
    /// Upstream time (request sent → response complete).
    pub upstream_time: LatencyHistogram,
    /// Whole request time at the router (request read → response relayed).
    pub request_duration: LatencyHistogram,
    /// Moving average of upstream time, µs.
    latency_us: Ewma,
}

/// How a request that reached a node ended for the client, when a response started.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Answered {
    pub status: u16,
    /// From the request read to the response relayed (retries included).
    pub duration: Duration,
}

impl Default for NodeStats {
    fn default() -> Self {
        NodeStats {
            requests: 0,
            errors: 0,
            retries: 0,
            by_class: [0; 5],
            upstream_time: LatencyHistogram::default(),
            request_duration: LatencyHistogram::default(),
            latency_us: Ewma::new(LATENCY_DECAY),
        }
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

    /// A request ended at `at`; `upstream_time` is known when a response came back
    /// whole, `answered` when one started.
    pub(crate) fn finished(
        &mut self,
        outcome: Outcome,
        upstream_time: Option<Duration>,
        answered: Option<Answered>,
        at: Instant,
    ) {
        if outcome == Outcome::Failed {
            self.errors += 1;
        }
        if let Some(t) = upstream_time {
            self.latency_us.add(t.as_secs_f64() * 1e6, at);
            self.upstream_time.observe(t);
        }
        if let Some(a) = answered {
            let class = usize::from(a.status / 100).clamp(1, 5) - 1;
            self.by_class[class] += 1;
            self.request_duration.observe(a.duration);
        }
    }

    /// Moving average of upstream time, µs.
    pub(crate) fn latency_us(&self) -> f64 {
        self.latency_us.value()
    }
}

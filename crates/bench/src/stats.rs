//! What a run counts: responses, bytes, errors by kind, connect times, latency and the share
//! of requests per node. One `Stats` per user, merged per epoch and for the whole run.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;

use crate::http_client::Response;
use crate::latency::{LatencyHistogram, LatencySummary};

/// Why a request did not succeed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The TCP connection could not be opened.
    Connect,
    /// No full response within the request timeout.
    Timeout,
    /// A complete response with a 4xx status.
    Status4xx,
    /// A complete response with a 5xx status.
    Status5xx,
    /// The connection was reset or closed before the response was complete.
    Reset,
    /// The response could not be parsed.
    Protocol,
    /// A complete response whose status or body length is not what the request asked
    /// for (a range answered with the whole object, a short body).
    Mismatch,
}

/// Error counts by kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ErrorCounts {
    pub total: u64,
    pub connect: u64,
    pub timeout: u64,
    pub status_4xx: u64,
    pub status_5xx: u64,
    pub reset: u64,
    pub protocol: u64,
    pub mismatch: u64,
}

impl ErrorCounts {
    fn add(&mut self, kind: ErrorKind, n: u64) {
        self.total += n;
        let slot = match kind {
            ErrorKind::Connect => &mut self.connect,
            ErrorKind::Timeout => &mut self.timeout,
            ErrorKind::Status4xx => &mut self.status_4xx,
            ErrorKind::Status5xx => &mut self.status_5xx,
            ErrorKind::Reset => &mut self.reset,
            ErrorKind::Protocol => &mut self.protocol,
            ErrorKind::Mismatch => &mut self.mismatch,
        };
        *slot += n;
    }

    fn merge(&mut self, o: &ErrorCounts) {
        for (kind, n) in [
            (ErrorKind::Connect, o.connect),
            (ErrorKind::Timeout, o.timeout),
            (ErrorKind::Status4xx, o.status_4xx),
            (ErrorKind::Status5xx, o.status_5xx),
            (ErrorKind::Reset, o.reset),
            (ErrorKind::Protocol, o.protocol),
            (ErrorKind::Mismatch, o.mismatch),
        ] {
            self.add(kind, n);
        }
    }
}

/// Raw counters, cheap to update per request and lossless to merge.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// Complete responses, whatever their status.
    pub responses: u64,
    pub wire_bytes: u64,
    pub body_bytes: u64,
    pub errors: ErrorCounts,
    pub latency: LatencyHistogram,
    pub connects: u64,
    pub connect_total: Duration,
    pub connect_max: Duration,
    /// Responses per `X-Larder-Node` value.
    pub nodes: BTreeMap<String, u64>,
    /// Responses per `X-Larder-Router` value.
    pub routers: BTreeMap<String, u64>,
}

/// Connect times of a run or epoch, in milliseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct ConnectSummary {
    pub count: u64,
    pub avg: f64,
    pub max: f64,
}

/// The figures a report shows for a span of time.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Summary {
    /// Complete responses (any status).
    pub requests: u64,
    pub bytes: u64,
    pub body_bytes: u64,
    pub errors: ErrorCounts,
    pub throughput_rps: f64,
    /// Megabits per second received (head and body).
    pub throughput_mbps: f64,
    pub latency_ms: LatencySummary,
    pub connect_ms: ConnectSummary,
    /// Responses per node, from `X-Larder-Node` (empty when no response carried it).
    pub nodes: BTreeMap<String, u64>,
    /// Responses per router, from `X-Larder-Router` (several routers on one address);
    /// left out of JSON when no response carried it.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub routers: BTreeMap<String, u64>,
}

impl Stats {
    pub fn record_response(&mut self, response: &Response, latency: Duration) {
        self.responses += 1;
        self.wire_bytes += response.wire_bytes;
        self.body_bytes += response.body_bytes;
        self.latency.record(latency);
        match response.status {
            400..=499 => self.errors.add(ErrorKind::Status4xx, 1),
            500..=599 => self.errors.add(ErrorKind::Status5xx, 1),
            _ => {}
        }
        count(&mut self.nodes, &response.node);
        count(&mut self.routers, &response.router);
    }

    pub fn record_error(&mut self, kind: ErrorKind) {
        self.errors.add(kind, 1);
    }

    pub fn record_connect(&mut self, took: Duration) {
        self.connects += 1;
        self.connect_total += took;
        self.connect_max = self.connect_max.max(took);
    }

    pub fn merge(&mut self, o: &Stats) {
        self.responses += o.responses;
        self.wire_bytes += o.wire_bytes;
        self.body_bytes += o.body_bytes;
        self.errors.merge(&o.errors);
        self.latency.merge(&o.latency);
        self.connects += o.connects;
        self.connect_total += o.connect_total;
        self.connect_max = self.connect_max.max(o.connect_max);
        for (mine, theirs) in [(&mut self.nodes, &o.nodes), (&mut self.routers, &o.routers)] {
            for (name, n) in theirs {
                *mine.entry(name.clone()).or_default() += n;
            }
        }
    }

    /// Average connect time (zero when nothing connected).
    pub fn connect_avg(&self) -> Duration {
        match u32::try_from(self.connects) {
            Ok(0) => Duration::ZERO,
            Ok(n) => self.connect_total / n,
            Err(_) => self.connect_total.div_f64(self.connects as f64),
        }
    }

    /// The figures for a span of `elapsed`.
    pub fn summary(&self, elapsed: Duration) -> Summary {
        let secs = elapsed.as_secs_f64();
        let per_second = |x: f64| if secs > 0.0 { x / secs } else { 0.0 };
        Summary {
            requests: self.responses,
            bytes: self.wire_bytes,
            body_bytes: self.body_bytes,
            errors: self.errors,
            throughput_rps: per_second(self.responses as f64),
            throughput_mbps: per_second(self.wire_bytes as f64 * 8.0 / 1e6),
            latency_ms: self.latency.summary(),
            connect_ms: ConnectSummary {
                count: self.connects,
                avg: self.connect_avg().as_secs_f64() * 1000.0,
                max: self.connect_max.as_secs_f64() * 1000.0,
            },
            nodes: self.nodes.clone(),
            routers: self.routers.clone(),
        }
    }
}

/// One more response for `name`, if the response named one (no allocation once the
/// name is known: responses repeat few names).
fn count(counts: &mut BTreeMap<String, u64>, name: &Option<String>) {
    if let Some(name) = name {
        match counts.get_mut(name) {
            Some(n) => *n += 1,
            None => {
                counts.insert(name.clone(), 1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(status: u16, node: Option<&str>) -> Response {
        Response {
            status,
            wire_bytes: 100,
            body_bytes: 60,
            node: node.map(str::to_string),
            router: None,
            keep_alive: true,
        }
    }

    #[test]
    fn statuses_count_as_errors_by_class() {
        let mut s = Stats::default();
        s.record_response(&response(200, Some("a")), Duration::from_millis(1));
        s.record_response(&response(404, Some("a")), Duration::from_millis(1));
        s.record_response(&response(503, Some("b")), Duration::from_millis(1));
        s.record_error(ErrorKind::Reset);
        assert_eq!(s.responses, 3);
        assert_eq!(s.errors.total, 3);
        assert_eq!((s.errors.status_4xx, s.errors.status_5xx, s.errors.reset), (1, 1, 1));
        assert_eq!(s.nodes.get("a"), Some(&2));
    }

    #[test]
    fn merge_and_summary() {
        let mut a = Stats::default();
        let mut b = Stats::default();
        a.record_response(&response(200, None), Duration::from_millis(2));
        a.record_connect(Duration::from_millis(1));
        b.record_connect(Duration::from_millis(3));
        b.record_error(ErrorKind::Timeout);
        a.merge(&b);
        let s = a.summary(Duration::from_secs(2));
        assert_eq!(s.requests, 1);
        assert_eq!(s.bytes, 100);
        assert_eq!(s.errors.timeout, 1);
        assert!((s.throughput_rps - 0.5).abs() < 1e-9);
        assert!((s.throughput_mbps - 100.0 * 8.0 / 1e6 / 2.0).abs() < 1e-12);
        assert!((s.connect_ms.avg - 2.0).abs() < 1e-9);
        assert!((s.connect_ms.max - 3.0).abs() < 1e-9);
    }
}

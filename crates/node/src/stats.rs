//! What the node reports about itself: counters kept by the event loop, CPU and disk rates
//! sampled from /proc, and their two renderings (the JSON load report the router polls, and
//! Prometheus text).

use std::cell::{Cell, RefCell};
use std::time::{Duration, Instant};
use wire::{Exposition, LatencyHistogram, LoadReport};

/// Load samples closer together than this are not taken (CPU ticks are 10 ms coarse).
pub const SAMPLE_GAP: Duration = Duration::from_millis(100);

/// Counters updated by the event loop (one thread, so plain cells).
#[derive(Debug, Default)]
pub struct Counters {
    pub requests: Cell<u64>,
    pub in_flight: Cell<u64>,
    pub open_connections: Cell<u64>,
    pub hits: Cell<u64>,
    pub misses: Cell<u64>,
    pub bytes_sent: Cell<u64>,
    /// Responses by status class: index 0 is 1xx … index 4 is 5xx.
    pub by_class: [Cell<u64>; 5],
    pub header_timeouts: Cell<u64>,
    /// Bytes of misses being read from storage now ([`Reading`]).
    pub miss_bytes_reading: Cell<u64>,
    /// Time from a request's head read to its response written.
    pub request_duration: RefCell<LatencyHistogram>,
}

/// A miss's read from storage while it lasts: its bytes count in
/// [`Counters::miss_bytes_reading`] until it is dropped, on every exit path.
pub struct Reading<'a> {
    counters: &'a Counters,
    bytes: u64,
}

impl<'a> Reading<'a> {
    pub fn start(counters: &'a Counters, bytes: u64) -> Self {
        Counters::add(&counters.miss_bytes_reading, bytes);
        Reading { counters, bytes }
    }
}

impl Drop for Reading<'_> {
    fn drop(&mut self) {
        Counters::sub(&self.counters.miss_bytes_reading, self.bytes);
    }
}

impl Counters {
    pub fn add(cell: &Cell<u64>, n: u64) {
        cell.set(cell.get().wrapping_add(n));
    }

    pub fn sub(cell: &Cell<u64>, n: u64) {
        cell.set(cell.get().saturating_sub(n));
    }

    pub fn count_status(&self, code: u16) {
        let class = (usize::from(code / 100)).clamp(1, 5) - 1;
        Self::add(&self.by_class[class], 1);
    }
}

#[derive(Clone, Copy, Debug)]
struct Sample {
    at: Instant,
    cpu_ticks: u64,
    read_bytes: u64,
}

/// CPU utilisation and disk read rate from deltas of /proc/self/stat and /proc/self/io.
/// Rates are per interval between two samples, so the figure is current, not a lifetime
/// average.
#[derive(Debug)]
pub struct LoadSampler {
    last: Option<Sample>,
    ticks_per_sec: f64,
    /// CPU time of the process over wall time, in percent of one core (helpers included,
    /// so it may exceed 100).
    pub cpu_pct: f64,
    pub disk_read_bytes_per_sec: f64,
    /// Bytes read from storage by the process so far (the counter the rate is made of).
    pub disk_read_bytes: u64,
}

impl Default for LoadSampler {
    fn default() -> Self {
        // SAFETY: sysconf has no memory-safety preconditions.
        let tck = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        LoadSampler {
            last: None,
            ticks_per_sec: if tck > 0 { tck as f64 } else { 100.0 },
            cpu_pct: 0.0,
            disk_read_bytes_per_sec: 0.0,
            disk_read_bytes: 0,
        }
    }
}

impl LoadSampler {
    /// Take a sample at `now` and update the rates; samples closer than `min_gap` to the
    /// previous one are skipped (tick granularity would make them noise).
    pub fn sample(&mut self, now: Instant, min_gap: Duration) {
        if self.last.is_some_and(|l| now.duration_since(l.at) < min_gap) {
            return;
        }
        let cur = Sample {
            at: now,
            cpu_ticks: read_cpu_ticks().unwrap_or(0),
            read_bytes: read_io_read_bytes().unwrap_or(0),
        };
        if let Some(prev) = self.last {
            let secs = now.duration_since(prev.at).as_secs_f64().max(1e-6);
            let ticks = cur.cpu_ticks.saturating_sub(prev.cpu_ticks) as f64;
            self.cpu_pct = 100.0 * ticks / self.ticks_per_sec / secs;
            self.disk_read_bytes_per_sec =
                cur.read_bytes.saturating_sub(prev.read_bytes) as f64 / secs;
        }
        self.disk_read_bytes = cur.read_bytes;
        self.last = Some(cur);
    }
}

/// utime + stime of this process, in clock ticks.
fn read_cpu_ticks() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name may contain spaces and parentheses: fields start after the last ')'.
    let after = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    // Field 14 (utime) and 15 (stime) of proc(5); `after` starts at field 3.
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(utime + stime)
}

/// Bytes this process caused to be read from storage (page-cache hits do not count).
fn read_io_read_bytes() -> Option<u64> {
    let io = std::fs::read_to_string("/proc/self/io").ok()?;
    io.lines().find_map(|l| l.strip_prefix("read_bytes:")).and_then(|v| v.trim().parse().ok())
}

/// One snapshot of the node: the load report the router polls (its JSON is the contract
/// in `wire`) and the counters only the Prometheus rendering shows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeReport {
    pub load: LoadReport,
    pub bytes_sent: u64,
    pub responses_by_class: [u64; 5],
    pub header_timeouts: u64,
    pub request_duration: LatencyHistogram,
}

impl NodeReport {
    /// The JSON the router's load monitor polls (flat, numbers only).
    pub fn to_json(&self) -> String {
        self.load.to_json()
    }

    /// Prometheus text exposition format 0.0.4.
    pub fn to_prometheus(&self) -> String {
        let l = &self.load;
        let mut e = Exposition::default();
        let one = |v: u64| vec![(vec![], v)];
        let level = |v: f64| vec![(vec![], v)];
        e.counter("larder_node_requests", "Requests answered.", one(l.requests));
        let by_class = (1..=5)
            .zip(self.responses_by_class)
            .map(|(c, n)| (vec![("class", format!("{c}xx"))], n))
            .collect();
        e.counter("larder_node_responses", "Responses by status class.", by_class);
        e.histogram(
            "larder_node_request_duration_seconds",
            "Time from a request's head read to its response written.",
            vec![(vec![], self.request_duration.clone())],
        );
        e.gauge("larder_node_in_flight", "Requests being answered.", level(l.in_flight as f64));
        e.gauge(
            "larder_node_open_connections",
            "Open client connections.",
            level(l.open_connections as f64),
        );
        e.gauge("larder_node_cpu_percent", "Process CPU, percent of one core.", level(l.cpu_pct));
        e.gauge(
            "larder_node_disk_read_bytes_per_second",
            "Bytes read from storage per second.",
            level(l.disk_read_bytes_per_sec.round()),
        );
        e.gauge(
            "larder_node_cache_bytes",
            "Bytes held in the content cache.",
            level(l.cache_bytes as f64),
        );
        e.gauge(
            "larder_node_cache_capacity_bytes",
            "Capacity of the content cache.",
            level(l.cache_capacity_bytes as f64),
        );
        e.counter("larder_node_cache_hits", "Content cache hits.", one(l.hits));
        e.counter("larder_node_cache_misses", "Content cache misses.", one(l.misses));
        e.gauge(
            "larder_node_helper_queue",
            "Jobs queued or running on helper threads.",
            level(l.helper_queue as f64),
        );
        e.counter("larder_node_origin_fetches", "Requests sent to origins.", one(l.origin_fetches));
        e.counter(
            "larder_node_origin_bytes",
            "Response bytes received from origins.",
            one(l.origin_bytes),
        );
        e.counter("larder_node_origin_errors", "Origin fetches that failed.", one(l.origin_errors));
        e.counter(
            "larder_node_peer_fills",
            "Cache misses filled from another node instead of an origin.",
            one(l.peer_fills),
        );
        e.counter(
            "larder_node_peer_fill_failures",
            "Fills from another node that failed, filled from an origin instead.",
            one(l.peer_fill_failures),
        );
        e.counter(
            "larder_node_slices_from_cache",
            "Slices of large objects served from the node's store.",
            one(l.slices_from_cache),
        );
        e.counter(
            "larder_node_slices_from_origin",
            "Slices of large objects fetched from an origin.",
            one(l.slices_from_origin),
        );
        e.counter(
            "larder_node_slices_from_peers",
            "Slices of large objects fetched from the node that owns them.",
            one(l.slices_from_peers),
        );
        e.counter(
            "larder_node_forwarded",
            "Later requests on adopted connections answered with the response of the node they belong to.",
            one(l.forwarded),
        );
        e.counter(
            "larder_node_forward_failures",
            "Forwards to another node that failed, served by this node instead.",
            one(l.forward_failures),
        );
        e.counter("larder_node_sent_bytes", "Response bytes sent.", one(self.bytes_sent));
        e.counter(
            "larder_node_header_timeouts",
            "Connections closed for sending their request head too slowly.",
            one(self.header_timeouts),
        );
        e.render()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reading_counts_its_bytes_until_dropped() {
        let c = Counters::default();
        let big = Reading::start(&c, 48 << 20);
        {
            let _small = Reading::start(&c, 4096);
            assert_eq!(c.miss_bytes_reading.get(), (48 << 20) + 4096);
        }
        assert_eq!(c.miss_bytes_reading.get(), 48 << 20);
        drop(big);
        assert_eq!(c.miss_bytes_reading.get(), 0);
    }

    #[test]
    fn proc_parsing_works_here() {
        assert!(read_cpu_ticks().is_some());
        let mut s = LoadSampler::default();
        let t = Instant::now();
        s.sample(t, Duration::ZERO);
        s.sample(t + Duration::from_secs(1), Duration::ZERO);
        assert!(s.cpu_pct >= 0.0 && s.disk_read_bytes_per_sec >= 0.0);
    }

    #[test]
    fn renders() {
        let load = LoadReport { requests: 7, hits: 3, cpu_pct: 12.5, ..Default::default() };
        let r = NodeReport { load, ..Default::default() };
        let j: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
        assert_eq!((j["requests"].as_u64(), j["cpu_pct"].as_f64()), (Some(7), Some(12.5)), "{j}");
        let p = r.to_prometheus();
        assert!(p.contains("larder_node_requests_total 7\n"), "{p}");
        assert!(p.contains("larder_node_responses_total{class=\"2xx\"} 0\n"));
        assert!(p.contains("# TYPE larder_node_request_duration_seconds histogram\n"), "{p}");
        assert!(p.contains("larder_node_request_duration_seconds_count 0\n"), "{p}");
    }
}

//! A latency histogram with fixed bucket bounds: what the router and the node count per
//! request (one bucket increment, no allocation), what `/metrics` exports as a Prometheus
//! histogram, and what `/stats` carries so the dashboard can take percentiles of the last
//! seconds from two snapshots.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Upper bounds of the buckets, in seconds (a last, unbounded bucket follows): from 100 µs,
/// a cache hit on loopback, to 10 s, a request that waited on a slow origin.
pub const LATENCY_BOUNDS_SECONDS: [f64; 16] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
    5.0, 10.0,
];

/// Buckets: one per bound and the unbounded one.
const BUCKETS: usize = LATENCY_BOUNDS_SECONDS.len() + 1;

/// Counts per bucket (not cumulative) and the sum of all observations.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyHistogram {
    /// `counts[i]` observations fell in `(bound[i-1], bound[i]]`; the last bucket holds
    /// those above the last bound.
    pub counts: [u64; BUCKETS],
    pub sum_seconds: f64,
}

impl LatencyHistogram {
    pub fn observe(&mut self, d: Duration) {
        let s = d.as_secs_f64();
        let i = LATENCY_BOUNDS_SECONDS.partition_point(|&b| b < s);
        self.counts[i] += 1;
        self.sum_seconds += s;
    }

    pub fn count(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// Per bucket: its upper bound (infinite for the last) and its count, as the
    /// Prometheus encoder takes them.
    pub fn buckets(&self) -> Vec<(f64, u64)> {
        let bounds = LATENCY_BOUNDS_SECONDS.iter().copied().chain([f64::INFINITY]);
        bounds.zip(self.counts.iter().copied()).collect()
    }

    /// The `q` quantile (0..=1) in seconds, interpolated linearly inside its bucket, as
    /// Prometheus' `histogram_quantile` does; the unbounded bucket answers its lower bound.
    /// None before any observation.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        let total = self.count();
        if total == 0 {
            return None;
        }
        let rank = q.clamp(0.0, 1.0) * total as f64;
        let mut below = 0u64;
        for (i, &n) in self.counts.iter().enumerate() {
            if n > 0 && (below + n) as f64 >= rank {
                let lower = if i == 0 { 0.0 } else { LATENCY_BOUNDS_SECONDS[i - 1] };
                let Some(&upper) = LATENCY_BOUNDS_SECONDS.get(i) else { return Some(lower) };
                let within = (rank - below as f64) / n as f64;
                return Some(lower + (upper - lower) * within.clamp(0.0, 1.0));
            }
            below += n;
        }
        LATENCY_BOUNDS_SECONDS.last().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_and_quantiles() {
        let mut h = LatencyHistogram::default();
        assert_eq!(h.quantile(0.5), None);
        for _ in 0..99 {
            h.observe(Duration::from_micros(300));
        }
        h.observe(Duration::from_secs(20));
        assert_eq!(h.count(), 100);
        assert_eq!(h.counts[2], 99, "300 µs is in (250 µs, 500 µs]");
        assert_eq!(h.counts[16], 1);
        let p50 = h.quantile(0.5).unwrap();
        assert!(p50 > 0.00025 && p50 <= 0.0005, "{p50}");
        assert_eq!(h.quantile(1.0), Some(10.0), "the unbounded bucket answers its lower bound");
        assert!((h.sum_seconds - (99.0 * 0.0003 + 20.0)).abs() < 1e-9);
        let b = h.buckets();
        assert_eq!((b.len(), b[16].0, b[2]), (17, f64::INFINITY, (0.0005, 99)));
    }

    #[test]
    fn a_bound_itself_falls_in_its_bucket() {
        let mut h = LatencyHistogram::default();
        h.observe(Duration::from_millis(1));
        assert_eq!(h.counts[3], 1);
    }
}

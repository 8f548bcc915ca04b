//! Latency distribution in an HDR histogram: microsecond resolution, three significant
//! digits, any range (it grows as needed), so p99.9 and max are exact enough to trust and
//! merging per-user and per-epoch histograms is lossless.

use std::time::Duration;

use hdrhistogram::Histogram;
use serde::Serialize;

/// Latencies recorded in microseconds.
#[derive(Clone, Debug)]
pub struct LatencyHistogram {
    hist: Histogram<u64>,
}

/// The percentiles every report shows, in milliseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct LatencySummary {
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
    pub mean: f64,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        let mut hist = Histogram::new_with_bounds(1, 60_000_000, 3)
            .expect("1 µs to 60 s at 3 significant digits are valid bounds");
        hist.auto(true);
        LatencyHistogram { hist }
    }
}

impl LatencyHistogram {
    pub fn record(&mut self, latency: Duration) {
        let micros = u64::try_from(latency.as_micros()).unwrap_or(u64::MAX).max(1);
        // The histogram grows past 60 s on demand; only a value beyond any range saturates.
        if self.hist.record(micros).is_err() {
            self.hist.saturating_record(micros);
        }
    }

    pub fn merge(&mut self, other: &LatencyHistogram) {
        // Both histograms auto-resize, so adding one to the other cannot fail.
        let _ = self.hist.add(&other.hist);
    }

    pub fn count(&self) -> u64 {
        self.hist.len()
    }

    pub fn summary(&self) -> LatencySummary {
        if self.hist.is_empty() {
            return LatencySummary::default();
        }
        let ms = |micros: u64| micros as f64 / 1000.0;
        LatencySummary {
            p50: ms(self.hist.value_at_quantile(0.5)),
            p90: ms(self.hist.value_at_quantile(0.9)),
            p99: ms(self.hist.value_at_quantile(0.99)),
            p999: ms(self.hist.value_at_quantile(0.999)),
            max: ms(self.hist.max()),
            mean: self.hist.mean() / 1000.0,
        }
    }

    /// `(percentile, milliseconds)` points of the distribution, at percentiles that crowd
    /// toward the tail (90, 99, 99.9, ...) as HDR plots do, ending at the maximum.
    pub fn distribution(&self) -> Vec<(f64, f64)> {
        if self.hist.is_empty() {
            return Vec::new();
        }
        let mut points = Vec::new();
        let mut tail = 1.0_f64;
        while tail > 1e-6 {
            for step in [1.0, 0.75, 0.5, 0.25] {
                let q = 1.0 - tail * step;
                points.push((q * 100.0, self.hist.value_at_quantile(q) as f64 / 1000.0));
            }
            tail /= 10.0;
        }
        points.push((100.0, self.hist.max() as f64 / 1000.0));
        points
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_of_a_known_spread() {
        let mut h = LatencyHistogram::default();
        for ms in 1..=1000 {
            h.record(Duration::from_millis(ms));
        }
        let s = h.summary();
        assert!((s.p50 - 500.0).abs() < 1.0, "{s:?}");
        assert!((s.p99 - 990.0).abs() < 1.0, "{s:?}");
        assert!((s.max - 1000.0).abs() < 1.0, "{s:?}");
    }

    #[test]
    fn merge_adds_counts_and_keeps_the_max() {
        let mut a = LatencyHistogram::default();
        let mut b = LatencyHistogram::default();
        a.record(Duration::from_millis(1));
        b.record(Duration::from_secs(100));
        a.merge(&b);
        assert_eq!(a.count(), 2);
        assert!(a.summary().max >= 99_000.0);
        let d = a.distribution();
        assert!(d.windows(2).all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1));
    }
}

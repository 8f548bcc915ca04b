//! The Prometheus text exposition both the router and the node serve at their metrics
//! path: metric families collected from a snapshot of the process's own counters, written
//! by the `prometheus-client` encoder (names, `_total` on counters, `_bucket`/`_sum`/
//! `_count` on histograms, escaping). Counting stays with each process (plain integers
//! under locks it already holds); only a scrape builds this.

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, MetricEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;

use crate::latency::LatencyHistogram;

/// The `Content-Type` of the exposition (text format 0.0.4).
pub const METRICS_CONTENT_TYPE: &str = prometheus_client::encoding::prometheus_text::CONTENT_TYPE;

/// Label pairs of one series.
pub type Labels = Vec<(&'static str, String)>;

#[derive(Debug)]
enum Samples {
    Counter(Vec<(Labels, u64)>),
    Gauge(Vec<(Labels, f64)>),
    Histogram(Vec<(Labels, LatencyHistogram)>),
}

#[derive(Debug)]
struct Family {
    name: &'static str,
    help: &'static str,
    samples: Samples,
}

/// Metric families, added one by one, rendered once.
#[derive(Debug, Default)]
pub struct Exposition {
    families: Vec<Family>,
}

impl Exposition {
    /// A counter; `name` without `_total`, which the encoder appends.
    pub fn counter(&mut self, name: &'static str, help: &'static str, samples: Vec<(Labels, u64)>) {
        self.families.push(Family { name, help, samples: Samples::Counter(samples) });
    }

    pub fn gauge(&mut self, name: &'static str, help: &'static str, samples: Vec<(Labels, f64)>) {
        self.families.push(Family { name, help, samples: Samples::Gauge(samples) });
    }

    /// A histogram of durations in seconds (`name` ends in `_seconds`).
    pub fn histogram(
        &mut self,
        name: &'static str,
        help: &'static str,
        samples: Vec<(Labels, LatencyHistogram)>,
    ) {
        self.families.push(Family { name, help, samples: Samples::Histogram(samples) });
    }

    /// The text exposition of every family added.
    pub fn render(self) -> String {
        let mut registry = Registry::default();
        registry.register_collector(Box::new(self));
        let mut out = String::new();
        // Writing into a String cannot fail, and every name here is a constant.
        let _ = prometheus_client::encoding::prometheus_text::encode(&mut out, &registry);
        out
    }
}

impl Collector for Exposition {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        for f in &self.families {
            let kind = match f.samples {
                Samples::Counter(_) => MetricType::Counter,
                Samples::Gauge(_) => MetricType::Gauge,
                Samples::Histogram(_) => MetricType::Histogram,
            };
            let mut family = encoder.encode_descriptor(f.name, f.help, None, kind)?;
            match &f.samples {
                Samples::Counter(s) => {
                    for (labels, v) in s {
                        series(&mut family, labels, |m| {
                            m.encode_counter::<NoLabelSet, _, u64>(v, None)
                        })?;
                    }
                }
                Samples::Gauge(s) => {
                    for (labels, v) in s {
                        series(&mut family, labels, |m| m.encode_gauge(v))?;
                    }
                }
                Samples::Histogram(s) => {
                    for (labels, h) in s {
                        series(&mut family, labels, |m| {
                            m.encode_histogram::<NoLabelSet>(
                                h.sum_seconds,
                                h.count(),
                                &h.buckets(),
                                None,
                            )
                        })?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// One series of a family: with its labels, or bare when it has none.
fn series(
    family: &mut MetricEncoder<'_>,
    labels: &Labels,
    write: impl FnOnce(&mut MetricEncoder<'_>) -> Result<(), std::fmt::Error>,
) -> Result<(), std::fmt::Error> {
    if labels.is_empty() {
        write(family)
    } else {
        write(&mut family.encode_family(labels)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn writes_counters_gauges_and_histograms() {
        let mut e = Exposition::default();
        let node = |n: &str| vec![("node", n.to_string())];
        e.counter("x_requests", "Requests.", vec![(node("a\"b"), 3)]);
        e.gauge("x_up", "Up.", vec![(vec![], 1.0)]);
        let mut h = LatencyHistogram::default();
        h.observe(Duration::from_millis(2));
        e.histogram("x_duration_seconds", "Time.", vec![(node("a"), h)]);
        let text = e.render();
        assert!(text.contains("# TYPE x_requests_total counter\n"), "{text}");
        assert!(text.contains("x_requests_total{node=\"a\\\"b\"} 3\n"), "{text}");
        assert!(text.contains("x_up 1.0\n"), "{text}");
        assert!(text.contains("# TYPE x_duration_seconds histogram\n"), "{text}");
        assert!(text.contains("x_duration_seconds_bucket{node=\"a\",le=\"0.0025\"} 1\n"), "{text}");
        assert!(text.contains("x_duration_seconds_bucket{node=\"a\",le=\"+Inf\"} 1\n"), "{text}");
        assert!(text.contains("x_duration_seconds_count{node=\"a\"} 1\n"), "{text}");
    }
}

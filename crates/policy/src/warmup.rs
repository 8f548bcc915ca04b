//! Warm-up of a node that joins or restarts: it takes its share of targets gradually,
//! as fast as its cache fills, measured by its own hit ratio rather than a timer.
//!
//! A node that comes up empty and at once takes its full share of targets answers every
//! one of them from disk: its misses pile up while the nodes that served those targets
//! before sit idle with warm caches. Slow start on a timer (HAProxy's `slowstart`,
//! envoy's) guesses how long filling takes; here the node says it. Every load report
//! carries its uptime and its hit and miss counters, so every router computes the same
//! warmth from the same reports:
//!
//! - a node is **warming** while its uptime is below [`WarmupConfig::max`] and some other
//!   node has been up at least [`WarmupConfig::join_gap`] longer (a node that joined or
//!   restarted into a running cluster; a cluster started cold has nothing to warm
//!   against, and a router that starts late agrees);
//! - its **warmth**, the part of its share it takes ([`crate::LoadView::set_warmth`]), is
//!   its recent hit ratio over the mean recent hit ratio of the nodes that are not
//!   warming, but at least its uptime over [`WarmupConfig::max`], so warm-up is bounded
//!   even for a node whose cache never reaches the others' ratio;
//! - once its warmth reaches 1 the node is warm until it restarts again (its uptime or its
//!   counters go back).

use crate::{Nanos, NodeId, SECOND};

/// How warm-up is bounded.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct WarmupConfig {
    /// The longest warm-up: at this uptime a node takes its full share whatever its hit
    /// ratio. 0 turns warm-up off.
    pub max: Nanos,
    /// How much longer another node must have been up for a node to count as joining a
    /// running cluster (nodes started together do not warm against each other).
    pub join_gap: Nanos,
}

impl Default for WarmupConfig {
    /// At most 30 s; nodes started within 5 s of each other start together.
    fn default() -> Self {
        WarmupConfig { max: 30 * SECOND, join_gap: 5 * SECOND }
    }
}

/// What one load report says for warm-up.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct WarmupSample {
    /// How long the node has been up (0: it does not say, and never warms).
    pub uptime: Nanos,
    /// Cache hits and misses since the node started.
    pub hits: u64,
    pub misses: u64,
}

/// Weight of the newest report in a node's recent hit ratio.
const RECENT: f64 = 0.3;

#[derive(Copy, Clone, Debug, Default)]
struct Track {
    last: Option<WarmupSample>,
    /// Recent hit ratio (moving average over report intervals with requests).
    ratio: Option<f64>,
    /// Reached full warmth since it last started.
    warm: bool,
}

/// Every node's warm-up state, fed with their reports.
#[derive(Clone, Debug, Default)]
pub struct Warmup {
    config: WarmupConfig,
    nodes: Vec<Track>,
}

impl Warmup {
    pub fn new(config: WarmupConfig) -> Self {
        Warmup { config, nodes: Vec::new() }
    }

    pub fn config(&self) -> WarmupConfig {
        self.config
    }

    pub fn set_config(&mut self, config: WarmupConfig) {
        self.config = config;
    }

    /// Fold in a report of `node`.
    pub fn report(&mut self, node: NodeId, sample: WarmupSample) {
        if self.nodes.len() <= node.index() {
            self.nodes.resize(node.index() + 1, Track::default());
        }
        let track = &mut self.nodes[node.index()];
        let restarted = track.last.is_some_and(|last| {
            sample.uptime < last.uptime || sample.hits < last.hits || sample.misses < last.misses
        });
        if restarted {
            *track = Track::default();
        }
        if let Some(last) = track.last {
            let (hits, misses) = (sample.hits - last.hits, sample.misses - last.misses);
            if hits + misses > 0 {
                let now = hits as f64 / (hits + misses) as f64;
                track.ratio = Some(track.ratio.map_or(now, |r| r + RECENT * (now - r)));
            }
        }
        track.last = Some(sample);
    }

    /// The node left: forget it (it warms again if it comes back).
    pub fn forget(&mut self, node: NodeId) {
        if let Some(t) = self.nodes.get_mut(node.index()) {
            *t = Track::default();
        }
    }

    fn uptime(&self, node: usize) -> Option<Nanos> {
        self.nodes[node].last.map(|s| s.uptime).filter(|&u| u > 0)
    }

    /// Whether `node` joined or restarted into a running cluster and is not warm yet.
    pub fn warming(&self, node: NodeId) -> bool {
        let i = node.index();
        let Some(up) = self.nodes.get(i).and_then(|_| self.uptime(i)) else { return false };
        if self.config.max == 0 || self.nodes[i].warm || up >= self.config.max {
            return false;
        }
        let oldest = (0..self.nodes.len()).filter(|&j| j != i).filter_map(|j| self.uptime(j)).max();
        oldest.is_some_and(|o| o >= up.saturating_add(self.config.join_gap))
    }

    /// The part of its share `node` takes now, in (0, 1]: 1 unless it is warming.
    pub fn warmth(&self, node: NodeId) -> f64 {
        if !self.warming(node) {
            return 1.0;
        }
        let track = &self.nodes[node.index()];
        let up = track.last.map_or(0, |s| s.uptime);
        let by_time = up as f64 / self.config.max as f64;
        let settled: Vec<f64> = (0..self.nodes.len())
            .filter(|&j| !self.warming(NodeId(j as u32)))
            .filter_map(|j| self.nodes[j].ratio)
            .collect();
        let by_hits = match (track.ratio, settled.is_empty()) {
            (Some(r), false) => {
                let mean = settled.iter().sum::<f64>() / settled.len() as f64;
                if mean > 0.0 {
                    r / mean
                } else {
                    1.0
                }
            }
            _ => 0.0,
        };
        by_time.max(by_hits).min(1.0)
    }

    /// Mark nodes whose warmth reached 1 as warm (they stay so until they restart). Call
    /// after each round of reports.
    pub fn settle(&mut self) {
        for i in 0..self.nodes.len() {
            let node = NodeId(i as u32);
            if self.nodes[i].last.is_some() && self.warming(node) && self.warmth(node) >= 1.0 {
                self.nodes[i].warm = true;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(uptime_s: u64, hits: u64, misses: u64) -> WarmupSample {
        WarmupSample { uptime: uptime_s * SECOND, hits, misses }
    }

    #[test]
    fn nodes_started_together_do_not_warm() {
        let mut w = Warmup::default();
        for n in 0..3 {
            w.report(NodeId(n), sample(1 + u64::from(n), 0, 0));
        }
        assert!((0..3).all(|n| !w.warming(NodeId(n)) && w.warmth(NodeId(n)) == 1.0));
    }

    #[test]
    fn a_restarted_node_warms_by_its_hit_ratio_and_at_most_for_max() {
        let mut w = Warmup::default();
        let old = NodeId(0);
        let new = NodeId(1);
        w.report(old, sample(100, 0, 0));
        w.report(old, sample(101, 800, 200));
        w.report(new, sample(200, 900, 100));
        assert!(!w.warming(new), "up longer than the others");
        w.report(new, sample(1, 0, 10));
        assert!(w.warming(new), "uptime went back: restarted");
        assert!(w.warmth(new) < 0.05, "{}", w.warmth(new));
        w.report(new, sample(2, 40, 70));
        // 40 of 100 recent requests hit against 80% on the warm node: half its share.
        assert!((w.warmth(new) - 0.5).abs() < 1e-9, "{}", w.warmth(new));
        w.report(old, sample(103, 1600, 400));
        for s in 3..7 {
            w.settle();
            assert!(w.warming(new), "still below the others' ratio at {s} s");
            w.report(new, sample(s, 40 + 100 * (s - 2), 70));
        }
        w.settle();
        assert!(!w.warming(new), "reached the others' ratio: warm");
        assert_eq!(w.warmth(new), 1.0);
        // Counters going back also say restart; with no hits, time bounds the warm-up.
        w.report(new, sample(9, 0, 5));
        assert!(w.warming(new));
        w.report(new, sample(15, 0, 50));
        assert!((w.warmth(new) - 0.5).abs() < 1e-9);
        w.report(new, sample(30, 0, 60));
        assert!(!w.warming(new), "at max uptime: warm");
        w.forget(new);
        assert!(!w.warming(new));
    }
}

//! Flash-crowd detection for `lard-r`: which targets take a large share of this router's
//! requests right now, and how many nodes each should be served from.
//!
//! LARD/R replicates a target only once its node is overloaded, and a flash crowd (a
//! launch, a match, a link on a front page) overloads that node first: its queue grows
//! while the rest of the cluster idles, until T_high trips. Here a target is **hot** when
//! its share of the requests this router saw over the last [`WINDOW`] reaches
//! [`HeatConfig::share`] (and its rate reaches [`HeatConfig::min_rate`], so an idle router
//! or a handful of requests never looks like a crowd). A hot target is served from
//! [`replicas`] nodes, enough that each takes at most [`REPLICA_LOAD`] of a node's fair
//! share, and it keeps them until its share has stayed below half the threshold for
//! [`HeatConfig::cool_after`] (hysteresis: a crowd that flickers keeps its replicas).
//!
//! Only shares and rates go in, never loads: every router in front of the same cluster
//! sees about the same shares of the same stream, so every router makes the same target
//! hot with the same number of replicas (the policy takes them in the target's shared
//! order of candidates, [`crate::home`]). While a target stays hot its count only grows,
//! so noise in the share near a step does not flip it back and forth; two routers whose
//! estimates straddle a step differ by one replica, and as both take a prefix of the same
//! order, their sets still share every other node.
//!
//! Counting is O(1) per request and bounded in memory: one [`Window`] for all requests
//! and one per target, kept in the target's table entry (so the table's cap bounds them).
//! A window is three buckets of [`BUCKET`]; the oldest is counted for the part of it that
//! is still inside the window, the usual sliding-window estimate.

use crate::{Nanos, SECOND};

/// One bucket of a [`Window`].
pub const BUCKET: Nanos = SECOND / 4;

/// How far back a share is measured: two buckets.
pub const WINDOW: Nanos = 2 * BUCKET;

/// The part of a node's fair share of requests (1 / live nodes) one replica of a hot
/// target should take at most, so that each replica keeps room for its other targets.
pub const REPLICA_LOAD: f64 = 0.5;

/// When a target counts as hot and when it stops.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct HeatConfig {
    /// A target taking at least this share of the requests (0–1) is hot; 0 turns heat
    /// replicas off.
    pub share: f64,
    /// And at least this many requests per second at this router.
    pub min_rate: f64,
    /// A hot target whose share stays below half of [`HeatConfig::share`] this long loses
    /// its replicas.
    pub cool_after: Nanos,
}

impl Default for HeatConfig {
    /// A fifth of the requests, at least 50 a second; cool after 2 s below a tenth.
    fn default() -> Self {
        HeatConfig { share: 0.2, min_rate: 50.0, cool_after: 2 * SECOND }
    }
}

impl HeatConfig {
    pub fn enabled(&self) -> bool {
        self.share > 0.0
    }
}

/// Requests counted over the last [`WINDOW`], in buckets of [`BUCKET`].
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Window {
    /// The bucket `counts[0]` belongs to (time / [`BUCKET`]).
    bucket: u64,
    /// The current bucket first, then the two before it.
    counts: [u32; 3],
}

impl Window {
    /// Count one request at `now`.
    pub fn add(&mut self, now: Nanos) {
        *self = self.at(now);
        self.counts[0] = self.counts[0].saturating_add(1);
    }

    /// Requests over the [`WINDOW`] ending at `now` (the oldest bucket weighed by how much
    /// of it is still inside).
    pub fn estimate(&self, now: Nanos) -> f64 {
        let w = self.at(now);
        let elapsed = (now % BUCKET) as f64 / BUCKET as f64;
        f64::from(w.counts[0]) + f64::from(w.counts[1]) + f64::from(w.counts[2]) * (1.0 - elapsed)
    }

    /// This window moved on to `now`'s bucket (a time before the current bucket counts
    /// into it: callers may pass times slightly out of order).
    fn at(&self, now: Nanos) -> Window {
        let bucket = now / BUCKET;
        match bucket.saturating_sub(self.bucket) {
            0 => *self,
            1 => Window { bucket, counts: [0, self.counts[0], self.counts[1]] },
            2 => Window { bucket, counts: [0, 0, self.counts[0]] },
            _ => Window { bucket, counts: [0; 3] },
        }
    }
}

/// One target's heat: its recent requests and how many nodes it is served from.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct TargetHeat {
    seen: Window,
    /// Nodes the target is served from while hot; 0 or 1: not hot.
    replicas: u8,
    /// Since when its share has been below the cooling line, while hot.
    cooling_since: Option<Nanos>,
}

impl TargetHeat {
    /// Nodes the target should be served from: more than 1 while it is hot.
    pub fn replicas(&self) -> usize {
        usize::from(self.replicas.max(1))
    }

    pub fn is_hot(&self) -> bool {
        self.replicas > 1
    }

    /// One more replica (at most `cap`): the hot target's replicas are overloaded.
    pub fn grow(&mut self, cap: usize) {
        if self.is_hot() {
            self.replicas = clamp_count(self.replicas() + 1, cap);
        }
    }
}

/// The router-wide side of the detector: the config and the count of every request.
#[derive(Clone, Debug, Default)]
pub struct HeatMeter {
    config: HeatConfig,
    all: Window,
}

impl HeatMeter {
    pub fn new(config: HeatConfig) -> Self {
        HeatMeter { config, all: Window::default() }
    }

    pub fn enabled(&self) -> bool {
        self.config.enabled()
    }

    /// Count one request for `target` at `now` and judge its heat with `live` nodes in
    /// the cluster and at most `cap` replicas.
    pub fn record(&mut self, target: &mut TargetHeat, now: Nanos, live: usize, cap: usize) {
        if !self.enabled() {
            return;
        }
        self.all.add(now);
        target.seen.add(now);
        if !target.is_hot() && self.surely_cold(target) {
            // Neither branch below would change anything: skip their arithmetic.
            return;
        }
        let share = self.share(target, now);
        let rate = target.seen.estimate(now) * (SECOND as f64 / WINDOW as f64);
        if share >= self.config.share && rate >= self.config.min_rate && cap > 1 {
            target.replicas = target.replicas.max(clamp_count(replicas(share, live), cap));
            target.cooling_since = None;
        } else if target.is_hot() {
            if share >= self.config.share / 2.0 {
                target.cooling_since = None;
            } else {
                let since = *target.cooling_since.get_or_insert(now);
                if now.saturating_sub(since) >= self.config.cool_after {
                    *target = TargetHeat { seen: target.seen, ..TargetHeat::default() };
                }
            }
        }
    }

    /// Whether `target`'s share, both windows just counted at the same moment, is below
    /// half of [`HeatConfig::share`] whatever part of the oldest bucket still counts: its
    /// whole count against all requests of the two newest buckets (a factor of 2 to spare
    /// for rounding). Most targets of a large cluster's stream are; the check reads no
    /// clock arithmetic and divides nothing.
    fn surely_cold(&self, target: &TargetHeat) -> bool {
        let [t0, t1, t2] = target.seen.counts.map(u64::from);
        let [a0, a1, _] = self.all.counts.map(u64::from);
        let most = (t0 + t1 + t2) as f64;
        let least_all = ((a0 + a1) as f64).max(1.0);
        most < 0.5 * self.config.share * least_all
    }

    /// `target`'s share of the requests over the window ending at `now`.
    fn share(&self, target: &TargetHeat, now: Nanos) -> f64 {
        target.seen.estimate(now) / self.all.estimate(now).max(1.0)
    }
}

/// How many nodes a target taking `share` of the requests is served from with `live`
/// nodes: enough that each takes at most [`REPLICA_LOAD`] of a node's fair share, at least
/// 2 and at most `live`.
pub fn replicas(share: f64, live: usize) -> usize {
    let needed = (share * live as f64 / REPLICA_LOAD).ceil();
    (needed.max(2.0) as usize).min(live)
}

fn clamp_count(count: usize, cap: usize) -> u8 {
    count.min(cap).min(usize::from(u8::MAX)) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = SECOND / 1000;

    #[test]
    fn a_window_counts_the_last_half_second_sliding() {
        let mut w = Window::default();
        for t in 0..100 {
            w.add(t * MS);
        }
        assert_eq!(w.estimate(100 * MS), 100.0);
        // Half a bucket past the window's start: the first bucket counts half.
        assert_eq!(w.estimate(2 * BUCKET + BUCKET / 2), 50.0);
        assert_eq!(w.estimate(3 * BUCKET), 0.0);
        assert_eq!(w.estimate(10 * SECOND), 0.0);
    }

    #[test]
    fn a_target_called_surely_cold_is_below_half_the_hot_share() {
        let mut m = HeatMeter::new(HeatConfig::default());
        let mut heats = [TargetHeat::default(); 7];
        let (mut cold, mut checked) = (0, 0);
        for i in 0..20_000u64 {
            // Uneven rates and bucket phases: target k takes about 1 in 2^k requests.
            let now = i * MS / 3 + (i % 7) * MS / 11;
            let k = (i.trailing_zeros() as usize).min(6);
            m.all.add(now);
            heats[k].seen.add(now);
            for h in &heats {
                checked += 1;
                if m.surely_cold(h) {
                    cold += 1;
                    assert!(m.share(h, now) < m.config.share / 2.0, "{i} {k}");
                }
            }
        }
        assert!(cold > checked / 4 && cold < checked, "{cold} of {checked}");
    }

    #[test]
    fn replicas_grow_with_the_share_and_stop_at_the_nodes() {
        assert_eq!(replicas(0.2, 4), 2);
        assert_eq!(replicas(0.3, 4), 3);
        assert_eq!(replicas(0.3, 6), 4);
        assert_eq!(replicas(0.9, 4), 4);
        assert_eq!(replicas(0.3, 1), 1);
    }

    /// Feeds `rate` requests a second for `secs`, one in `every` for the target.
    fn feed(m: &mut HeatMeter, h: &mut TargetHeat, from: Nanos, secs: u64, every: u64) -> Nanos {
        let rate = 1000;
        let mut t = from;
        for i in 0..rate * secs {
            t = from + i * SECOND / rate;
            if i % every == 0 {
                m.record(h, t, 4, 4);
            } else {
                m.record(&mut TargetHeat::default(), t, 4, 4);
            }
        }
        t
    }

    #[test]
    fn a_target_gets_hot_fast_and_cools_only_after_a_while() {
        let mut m = HeatMeter::new(HeatConfig::default());
        let mut h = TargetHeat::default();
        let t = feed(&mut m, &mut h, 0, 2, 20);
        assert!(!h.is_hot(), "5% of the requests");
        let t = feed(&mut m, &mut h, t, 1, 3);
        assert_eq!(h.replicas(), 3, "a third of 4 nodes' requests: each replica takes 11%");
        // Down to 12%: above the cooling line, it stays hot.
        let t = feed(&mut m, &mut h, t, 3, 8);
        assert_eq!(h.replicas(), 3);
        // Down to 5%: below the line, but for 2 s only.
        let t = feed(&mut m, &mut h, t, 1, 20);
        assert!(h.is_hot());
        feed(&mut m, &mut h, t, 2, 20);
        assert!(!h.is_hot());
    }

    #[test]
    fn a_slow_router_or_a_switched_off_meter_sees_no_heat() {
        let mut m = HeatMeter::new(HeatConfig::default());
        let mut h = TargetHeat::default();
        for i in 0..100 {
            m.record(&mut h, i * SECOND / 20, 4, 4);
        }
        assert!(!h.is_hot(), "20 requests a second, all to one target");
        let mut off = HeatMeter::new(HeatConfig { share: 0.0, ..HeatConfig::default() });
        for i in 0..10_000 {
            off.record(&mut h, i * MS, 4, 4);
        }
        assert!(!h.is_hot());
    }
}

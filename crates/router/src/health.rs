//! One node's health as a pure state machine: what checks and requests said about it,
//! whether it takes traffic, and the weight it gets while it ramps back up (slow start).
//!
//! No clock and no I/O here: every method is given the time, so the transitions are
//! tested without sleeping. The cluster applies the [`Flip`]s it returns (membership, the
//! "node down" / "node up" events, dropping pooled connections); the background loops
//! feed it check results.

use std::time::{Duration, Instant};

use crate::config::HealthConfig;

/// Weight units per unit of configured weight, so slow start can ramp in small steps.
pub(crate) const WEIGHT_SCALE: u32 = 100;

/// The thresholds health runs by, from the config's `[health]` (swapped on reload).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Rules {
    /// Consecutive failures (checks or requests) that take a node down.
    pub fall: u32,
    /// Consecutive good checks that bring a down node back.
    pub rise: u32,
    /// Without active checks, how long an ejected node stays out.
    pub eject_for: Duration,
    /// A node that comes back ramps its weight from 1% to 100% over this long.
    pub slow_start: Duration,
    /// Whether active checks run (then they, not `eject_for`, decide a node's return).
    pub active_checks: bool,
}

impl Rules {
    pub(crate) fn new(c: &HealthConfig) -> Rules {
        Rules {
            fall: c.fall,
            rise: c.rise,
            eject_for: c.eject,
            slow_start: c.slow_start,
            active_checks: c.path.is_some(),
        }
    }
}

/// How a node failed a request, for passive ejection.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Failure {
    /// Connect refused or timed out: the node is taken out at once.
    Connect,
    /// Reset, early close, timeout or garbage: counts toward `fall`.
    Exchange,
}

/// A change of a node's state, with the reason logged for it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Flip {
    Down(&'static str),
    Up(&'static str),
}

/// Health of one node, driven by active checks and by the requests themselves.
#[derive(Clone, Debug)]
pub(crate) struct Health {
    up: bool,
    /// Consecutive failures while up.
    fails: u32,
    /// Consecutive good checks while down.
    rises: u32,
    /// When the node last came back (slow start runs from here).
    back_since: Option<Instant>,
    /// When an ejected node may be let back without active checks.
    down_until: Option<Instant>,
    /// Whether the node went down because a connect failed: then it is back as soon as
    /// it answers again ([`Health::answered`]), not only when the ejection is over.
    unreachable: bool,
}

impl Default for Health {
    /// A node starts up, at full weight (no slow start for the first start).
    fn default() -> Self {
        Health {
            up: true,
            fails: 0,
            rises: 0,
            back_since: None,
            down_until: None,
            unreachable: false,
        }
    }
}

impl Health {
    pub(crate) fn is_up(&self) -> bool {
        self.up
    }

    /// The result of one active check at `now`.
    pub(crate) fn observe(&mut self, ok: bool, now: Instant, rules: &Rules) -> Option<Flip> {
        match (self.up, ok) {
            (true, true) => {
                self.fails = 0;
                None
            }
            (true, false) => self.count_failure(now, rules, "health check"),
            (false, true) => {
                self.rises += 1;
                (self.rises >= rules.rise).then(|| self.come_back(now, "health check"))
            }
            (false, false) => {
                self.rises = 0;
                None
            }
        }
    }

    /// A request on the node completed: its run of failures is over.
    pub(crate) fn request_ok(&mut self) {
        self.fails = 0;
    }

    /// A request failed on the node at `now` in a way that says something about the node.
    pub(crate) fn request_failed(
        &mut self,
        failure: Failure,
        now: Instant,
        rules: &Rules,
    ) -> Option<Flip> {
        match failure {
            _ if !self.up => None,
            Failure::Connect => {
                let flip = self.eject(now, rules, "connect failed");
                self.unreachable = true;
                Some(flip)
            }
            Failure::Exchange => self.count_failure(now, rules, "failures"),
        }
    }

    /// Without active checks: let the node back once its ejection is over at `now`.
    pub(crate) fn ejection_over(&mut self, now: Instant) -> Option<Flip> {
        let over = !self.up && self.down_until.is_some_and(|t| now >= t);
        over.then(|| self.come_back(now, "ejection over"))
    }

    /// The node answered its load report at `now`. A node taken out because it refused a
    /// connection (stopped, restarting on its address) is listening again: it comes back
    /// at once instead of after the rest of `eject_for`, so a restarted node gets work
    /// within a report interval. A node taken out for failing requests or checks stays
    /// out: answering a report says nothing about those.
    pub(crate) fn answered(&mut self, now: Instant) -> Option<Flip> {
        (!self.up && self.unreachable).then(|| self.come_back(now, "load report answered"))
    }

    /// The weight the policy sees at `now`: `configured` in [`WEIGHT_SCALE`] units, ramped
    /// from 1% to 100% over `slow_start` after a comeback.
    pub(crate) fn weight(&self, configured: u32, now: Instant, rules: &Rules) -> u32 {
        let full = configured.saturating_mul(WEIGHT_SCALE);
        match self.back_since {
            Some(t) if !rules.slow_start.is_zero() && full > 0 => {
                let since = now.saturating_duration_since(t).as_secs_f64();
                let f = (since / rules.slow_start.as_secs_f64()).min(1.0);
                ((full as f64 * f) as u32).clamp(1, full)
            }
            _ => full,
        }
    }

    /// Whether the weight is still ramping at `now` (with a tenth of slack, so the last
    /// step to full weight is pushed too).
    pub(crate) fn ramping(&self, now: Instant, rules: &Rules) -> bool {
        let window = rules.slow_start + rules.slow_start / 10;
        self.back_since.is_some_and(|t| now.saturating_duration_since(t) <= window)
    }

    fn count_failure(&mut self, now: Instant, rules: &Rules, reason: &'static str) -> Option<Flip> {
        self.fails += 1;
        (self.fails >= rules.fall).then(|| self.eject(now, rules, reason))
    }

    fn eject(&mut self, now: Instant, rules: &Rules, reason: &'static str) -> Flip {
        *self = Health {
            up: false,
            fails: 0,
            rises: 0,
            back_since: None,
            down_until: Some(now + rules.eject_for),
            unreachable: false,
        };
        Flip::Down(reason)
    }

    fn come_back(&mut self, now: Instant, reason: &'static str) -> Flip {
        *self = Health {
            up: true,
            fails: 0,
            rises: 0,
            back_since: Some(now),
            down_until: None,
            unreachable: false,
        };
        Flip::Up(reason)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules() -> Rules {
        Rules::new(&HealthConfig { path: Some("/health".into()), ..HealthConfig::default() })
    }

    #[test]
    fn fall_failures_in_a_row_eject_and_a_success_resets_the_count() {
        let (r, t0) = (rules(), Instant::now());
        let mut h = Health::default();
        for _ in 1..r.fall {
            assert_eq!(h.request_failed(Failure::Exchange, t0, &r), None);
        }
        h.request_ok();
        for _ in 1..r.fall {
            assert_eq!(h.observe(false, t0, &r), None, "the run started over");
        }
        assert_eq!(h.observe(false, t0, &r), Some(Flip::Down("health check")));
        assert!(!h.is_up());
        assert_eq!(h.request_failed(Failure::Connect, t0, &r), None, "already down");
    }

    #[test]
    fn a_connect_failure_ejects_at_once() {
        let (r, t0) = (rules(), Instant::now());
        let mut h = Health::default();
        assert_eq!(h.request_failed(Failure::Connect, t0, &r), Some(Flip::Down("connect failed")));
        assert!(!h.is_up());
    }

    #[test]
    fn an_answer_ends_an_unreachable_ejection_but_not_a_failing_one() {
        let (r, t0) = (rules(), Instant::now());
        let mut refused = Health::default();
        refused.request_failed(Failure::Connect, t0, &r);
        assert_eq!(refused.answered(t0), Some(Flip::Up("load report answered")));
        assert!(refused.is_up());
        assert_eq!(refused.answered(t0), None, "already up");

        let mut failing = Health::default();
        for _ in 0..r.fall {
            failing.request_failed(Failure::Exchange, t0, &r);
        }
        assert!(!failing.is_up());
        assert_eq!(failing.answered(t0), None, "it answers, yet its requests failed");
        assert!(!failing.is_up());
    }

    #[test]
    fn rise_good_checks_in_a_row_bring_it_back() {
        let (r, t0) = (rules(), Instant::now());
        let mut h = Health::default();
        h.request_failed(Failure::Connect, t0, &r);
        for _ in 1..r.rise {
            assert_eq!(h.observe(true, t0, &r), None);
        }
        assert_eq!(h.observe(false, t0, &r), None, "a bad check restarts the rise");
        for _ in 1..r.rise {
            assert_eq!(h.observe(true, t0, &r), None);
        }
        assert_eq!(h.observe(true, t0, &r), Some(Flip::Up("health check")));
        assert!(h.is_up());
    }

    #[test]
    fn without_checks_the_ejection_ends_after_eject_for() {
        let (r, t0) = (rules(), Instant::now());
        let mut h = Health::default();
        h.request_failed(Failure::Connect, t0, &r);
        assert_eq!(h.ejection_over(t0 + r.eject_for / 2), None);
        assert_eq!(h.ejection_over(t0 + r.eject_for), Some(Flip::Up("ejection over")));
        assert_eq!(h.ejection_over(t0 + r.eject_for * 2), None, "once");
    }

    #[test]
    fn slow_start_ramps_the_weight_from_one_percent_to_full() {
        let (r, t0) = (rules(), Instant::now());
        let mut h = Health::default();
        assert_eq!(h.weight(2, t0, &r), 2 * WEIGHT_SCALE, "a first start is at full weight");
        h.request_failed(Failure::Connect, t0, &r);
        let back = t0 + r.eject_for;
        assert!(h.ejection_over(back).is_some());
        assert_eq!(h.weight(2, back, &r), 1);
        assert_eq!(h.weight(2, back + r.slow_start / 2, &r), WEIGHT_SCALE);
        assert_eq!(h.weight(2, back + r.slow_start, &r), 2 * WEIGHT_SCALE);
        assert_eq!(h.weight(0, back, &r), 0, "weight 0 stays 0");
        assert!(h.ramping(back + r.slow_start, &r));
        assert!(!h.ramping(back + r.slow_start * 2, &r));
    }
}

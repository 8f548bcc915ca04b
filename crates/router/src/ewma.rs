//! An exponentially weighted moving average over time, for upstream latency.
//!
//! Each sample's weight depends on how long ago the previous one came, not on how many
//! came: the average reflects about the last `decay` of traffic whether a node serves ten
//! requests a second or ten thousand. Time is passed in, so it reads no clock and is
//! tested without sleeping.

use std::time::{Duration, Instant};

#[derive(Clone, Debug)]
pub(crate) struct Ewma {
    decay_secs: f64,
    value: f64,
    last: Option<Instant>,
}

impl Ewma {
    /// An empty average whose memory is about `decay` long (must not be zero).
    pub(crate) fn new(decay: Duration) -> Ewma {
        Ewma { decay_secs: decay.as_secs_f64().max(f64::MIN_POSITIVE), value: 0.0, last: None }
    }

    /// Fold in `sample`, taken at `now`. The first sample is the average.
    pub(crate) fn add(&mut self, sample: f64, now: Instant) {
        self.value = match self.last {
            None => sample,
            Some(last) => {
                let elapsed = now.saturating_duration_since(last).as_secs_f64();
                let keep = (-elapsed / self.decay_secs).exp();
                self.value * keep + sample * (1.0 - keep)
            }
        };
        self.last = Some(self.last.map_or(now, |last| last.max(now)));
    }

    /// The average so far (0 before any sample).
    pub(crate) fn value(&self) -> f64 {
        self.value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_sample_is_the_average() {
        let mut e = Ewma::new(Duration::from_secs(1));
        assert_eq!(e.value(), 0.0);
        e.add(250.0, Instant::now());
        assert_eq!(e.value(), 250.0);
    }

    #[test]
    fn a_sample_counts_by_the_time_since_the_last() {
        let t0 = Instant::now();
        let decay = Duration::from_secs(1);
        let mut soon = Ewma::new(decay);
        soon.add(100.0, t0);
        soon.add(200.0, t0 + Duration::from_millis(1));
        let mut late = Ewma::new(decay);
        late.add(100.0, t0);
        late.add(200.0, t0 + Duration::from_secs(1));
        assert!(soon.value() > 100.0 && soon.value() < 101.0, "{}", soon.value());
        // After one decay the old average keeps 1/e of its weight.
        let expected = 100.0 / std::f64::consts::E + 200.0 * (1.0 - 1.0 / std::f64::consts::E);
        assert!((late.value() - expected).abs() < 1e-9, "{}", late.value());
    }

    #[test]
    fn a_sample_from_the_past_changes_nothing_and_time_never_runs_back() {
        let t0 = Instant::now() + Duration::from_secs(5);
        let mut e = Ewma::new(Duration::from_secs(1));
        e.add(100.0, t0);
        e.add(900.0, t0 - Duration::from_secs(1));
        assert_eq!(e.value(), 100.0);
        e.add(100.0, t0 + Duration::from_secs(1));
        assert_eq!(e.value(), 100.0, "the late sample's gap counts from t0");
    }
}

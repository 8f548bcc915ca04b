//! A count over a window that decays exponentially: every unit counted loses half its
//! weight per half-life. Unlike fixed windows it never drops to zero at a boundary, and
//! counts kept by the same half-life stay comparable (their ratios are shares of recent
//! requests), whenever each was last touched. Time is passed in.

use crate::Nanos;

#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct Decayed {
    value: f64,
    at: Nanos,
}

impl Decayed {
    /// The count as of `now` (times before the last update count as the last update).
    pub fn value(&self, now: Nanos, half_life: Nanos) -> f64 {
        match now.checked_sub(self.at) {
            Some(elapsed) if elapsed > 0 => {
                self.value * (-(elapsed as f64) / half_life.max(1) as f64).exp2()
            }
            _ => self.value,
        }
    }

    /// Add `amount` (negative to take some away, never below 0) at `now`; returns the count.
    pub fn add(&mut self, amount: f64, now: Nanos, half_life: Nanos) -> f64 {
        self.value = (self.value(now, half_life) + amount).max(0.0);
        self.at = self.at.max(now);
        self.value
    }

    /// A key that orders counts kept by the same half-life by their value at any one time,
    /// whenever each was last touched: log2 of the value plus the half-lives since 0 (a
    /// count decays by one in this key per half-life, so the order never changes while
    /// no count is touched). `-inf` for a count of 0.
    pub fn rank(&self, half_life: Nanos) -> f64 {
        self.value.log2() + self.at as f64 / half_life.max(1) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halves_per_half_life_and_never_goes_negative() {
        let mut c = Decayed::default();
        assert_eq!(c.add(8.0, 0, 10), 8.0);
        assert_eq!(c.value(10, 10), 4.0);
        assert_eq!(c.value(30, 10), 1.0);
        assert_eq!(c.add(1.0, 10, 10), 5.0);
        assert_eq!(c.value(5, 10), 5.0, "an earlier time reads the last update");
        assert_eq!(c.add(-9.0, 10, 10), 0.0);
    }
}

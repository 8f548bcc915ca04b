//! The DBench ramp (HACC): start with some users, add more every epoch, and stop at the
//! first epoch in which the server failed a request or connections became slow to open.
//! The answer is the number of users the server sustained: the last level that passed.

use std::time::Duration;

use serde::Serialize;

use crate::duration_text::parse_duration;
use crate::error::BenchError;
use crate::stats::Stats;

/// Users added over time, from `START:STEP:EPOCH` (e.g. `10:10:30s`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RampSpec {
    pub start: u32,
    pub step: u32,
    pub epoch: Duration,
}

/// When an epoch counts as failed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RampLimits {
    /// Stop when the epoch's average connect time exceeds this (DBench: 1 s).
    pub avg_connect: Duration,
    /// Stop when any connect in the epoch took longer than this (DBench: 2 s).
    pub max_connect: Duration,
    /// Stop after an epoch at this many users passes, so a ramp always ends.
    pub max_users: u32,
}

impl Default for RampLimits {
    fn default() -> Self {
        RampLimits {
            avg_connect: Duration::from_secs(1),
            max_connect: Duration::from_secs(2),
            max_users: 10_000,
        }
    }
}

/// Why a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The plan was used up (every script played once).
    Finished,
    /// `--requests` were sent.
    Requests,
    /// `--duration` elapsed.
    Duration,
    /// Ramp: the server failed a request (any error kind).
    Failure,
    /// Ramp: the average connect time exceeded its limit.
    AvgConnect,
    /// Ramp: a connect took longer than its limit.
    MaxConnect,
    /// Ramp: the epoch at the user limit passed.
    MaxUsers,
}

impl StopReason {
    pub fn describe(self) -> &'static str {
        match self {
            StopReason::Finished => "the workload was replayed in full",
            StopReason::Requests => "the request count was reached",
            StopReason::Duration => "the duration elapsed",
            StopReason::Failure => "the server failed a request",
            StopReason::AvgConnect => "the average connect time exceeded its limit",
            StopReason::MaxConnect => "a connect took longer than its limit",
            StopReason::MaxUsers => "the user limit was reached",
        }
    }
}

impl RampSpec {
    pub fn parse(text: &str) -> Result<RampSpec, BenchError> {
        let bad = || BenchError::BadRamp { text: text.to_string() };
        let parts: Vec<&str> = text.split(':').collect();
        let [start, step, epoch] = parts[..] else {
            return Err(bad());
        };
        let start: u32 = start.trim().parse().map_err(|_| bad())?;
        let step: u32 = step.trim().parse().map_err(|_| bad())?;
        let epoch = parse_duration(epoch).map_err(|_| bad())?;
        if start == 0 || step == 0 || epoch.is_zero() {
            return Err(bad());
        }
        Ok(RampSpec { start, step, epoch })
    }
}

impl RampLimits {
    /// The verdict on an epoch run with `users` users: `None` to go on.
    pub fn verdict(&self, epoch: &Stats, users: u32) -> Option<StopReason> {
        if epoch.errors.total > 0 {
            Some(StopReason::Failure)
        } else if epoch.connect_max > self.max_connect {
            Some(StopReason::MaxConnect)
        } else if epoch.connect_avg() > self.avg_connect {
            Some(StopReason::AvgConnect)
        } else if users >= self.max_users {
            Some(StopReason::MaxUsers)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::ErrorKind;

    #[test]
    fn parses_specs() {
        let r = RampSpec::parse("10:5:30s").unwrap();
        assert_eq!(r, RampSpec { start: 10, step: 5, epoch: Duration::from_secs(30) });
        for bad in ["", "1:2", "0:1:1s", "1:0:1s", "1:1:0s", "a:1:1s", "1:1:1s:1"] {
            assert!(RampSpec::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn each_condition_stops_the_ramp() {
        let limits = RampLimits::default();
        let mut ok = Stats::default();
        ok.record_connect(Duration::from_millis(10));
        assert_eq!(limits.verdict(&ok, 5), None);
        assert_eq!(limits.verdict(&ok, 10_000), Some(StopReason::MaxUsers));

        let mut failed = ok.clone();
        failed.record_error(ErrorKind::Status5xx);
        assert_eq!(limits.verdict(&failed, 5), Some(StopReason::Failure));

        let mut slow_one = ok.clone();
        slow_one.record_connect(Duration::from_millis(2500));
        assert_eq!(limits.verdict(&slow_one, 5), Some(StopReason::MaxConnect));

        let mut slow_all = Stats::default();
        slow_all.record_connect(Duration::from_millis(1500));
        slow_all.record_connect(Duration::from_millis(1500));
        assert_eq!(limits.verdict(&slow_all, 5), Some(StopReason::AvgConnect));
    }
}

//! How load is applied, as a user gives it (users, an open-loop rate or a ramp, limits in
//! time or requests), turned into a run's [`Config`]. The defaults that depend on what
//! else was given (a single URL runs 10 s unless bounded) live here so `bench` and
//! `bench compare` apply them alike.

use std::time::Duration;

use trace::FlashCrowd;

use crate::crowd::CrowdPlan;
use crate::{BaseUrl, BenchError, Config, Mode, Plan, RampLimits, RampSpec};

/// The seed the hot targets of `--flash-crowd` are drawn with, so runs repeat.
pub const CROWD_SEED: u64 = 1;

/// A run's load, before it is joined with a target and a plan.
#[derive(Clone, Debug)]
pub struct LoadShape {
    /// Closed-loop users, or connections of the open loop.
    pub users: u32,
    pub connection_per_request: bool,
    /// Open loop: requests per second in total.
    pub rate: Option<f64>,
    /// DBench ramp and its stop conditions (wins over `rate`).
    pub ramp: Option<(RampSpec, RampLimits)>,
    pub duration: Option<Duration>,
    pub requests: Option<u64>,
    pub warmup: Duration,
    pub timeout: Option<Duration>,
    pub epoch: Duration,
    /// A flash crowd on targets of the plan, drawn with [`CROWD_SEED`].
    pub flash_crowd: Option<FlashCrowd>,
}

impl LoadShape {
    /// The validated config; `single` (one URL over and over) runs 10 s unless the run is
    /// bounded otherwise, and a single URL or a bounded run cycles through its plan.
    pub fn config(&self, target: BaseUrl, plan: Plan, single: bool) -> Result<Config, BenchError> {
        let mode = match (self.ramp, self.rate) {
            (Some((spec, limits)), _) => Mode::Ramp { spec, limits },
            (None, Some(rate)) => Mode::Open { rate, connections: self.users },
            (None, None) => Mode::Closed { users: self.users },
        };
        let bounded = self.duration.is_some() || self.requests.is_some();
        let mut config = Config::closed(target, plan, self.users);
        config.mode = mode;
        config.connection_per_request = self.connection_per_request;
        config.duration = match self.duration {
            None if single && !bounded && self.ramp.is_none() => Some(Duration::from_secs(10)),
            d => d,
        };
        config.requests = self.requests;
        config.warmup = self.warmup;
        config.timeout = self.timeout;
        config.epoch = self.epoch;
        config.cycle = single || bounded;
        config.flash_crowd = match self.flash_crowd {
            Some(crowd) => Some(CrowdPlan::new(crowd, config.plan.paths.len(), CROWD_SEED)?),
            None => None,
        };
        config.validate()?;
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape() -> LoadShape {
        LoadShape {
            users: 3,
            connection_per_request: false,
            rate: None,
            ramp: None,
            duration: None,
            requests: None,
            warmup: Duration::ZERO,
            timeout: None,
            epoch: Duration::from_secs(10),
            flash_crowd: None,
        }
    }

    #[test]
    fn a_single_url_runs_ten_seconds_unless_bounded() {
        let base = BaseUrl::parse("http://127.0.0.1:1/x").unwrap();
        let single = |s: LoadShape| s.config(base.clone(), Plan::single("/x".into()), true);
        let config = single(shape()).unwrap();
        assert_eq!(config.duration, Some(Duration::from_secs(10)));
        assert!(config.cycle);
        let bounded = single(LoadShape { requests: Some(5), ..shape() }).unwrap();
        assert_eq!((bounded.duration, bounded.requests), (None, Some(5)));
        let open = single(LoadShape { rate: Some(50.0), ..shape() }).unwrap();
        assert!(matches!(open.mode, Mode::Open { connections: 3, .. }), "{:?}", open.mode);
    }
}

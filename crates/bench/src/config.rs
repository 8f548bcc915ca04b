//! Everything a run needs, checked before any connection is opened.

use std::time::Duration;

use crate::base_url::BaseUrl;
use crate::crowd::CrowdPlan;
use crate::error::BenchError;
use crate::plan::Plan;
use crate::ramp::{RampLimits, RampSpec};

/// How load is applied.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Mode {
    /// A fixed number of users, each sending its next request when the previous answered
    /// (after its think time).
    Closed { users: u32 },
    /// A fixed rate over `connections` connections; latency counts from each request's
    /// intended send time, so a stalled server shows as latency, not as fewer requests.
    Open { rate: f64, connections: u32 },
    /// Closed-loop users added every epoch until the server fails or connects get slow.
    Ramp { spec: RampSpec, limits: RampLimits },
}

/// A benchmark run.
#[derive(Clone, Debug)]
pub struct Config {
    /// The server: address and `Host` header (the plan's paths are already joined).
    pub target: BaseUrl,
    pub plan: Plan,
    pub mode: Mode,
    /// Open a new connection for every request and ask the server to close it.
    pub connection_per_request: bool,
    pub duration: Option<Duration>,
    /// Requests to send after the warm-up (exact: no more are sent).
    pub requests: Option<u64>,
    /// Requests due before this much time has passed are sent but not counted.
    pub warmup: Duration,
    /// Per request, connect included; `None` waits forever.
    pub timeout: Option<Duration>,
    /// Length of the per-epoch statistics (the ramp uses its own epoch).
    pub epoch: Duration,
    /// Replay the plan again when every script was played (otherwise the run ends).
    pub cycle: bool,
    /// A flash crowd from some time after the start (warm-up included) on.
    pub flash_crowd: Option<CrowdPlan>,
}

/// Defaults that a command line leaves alone.
pub const DEFAULT_EPOCH: Duration = Duration::from_secs(10);
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

impl Config {
    /// A closed loop of `users` on one plan, with default limits and no bound.
    pub fn closed(target: BaseUrl, plan: Plan, users: u32) -> Config {
        Config {
            target,
            plan,
            mode: Mode::Closed { users },
            connection_per_request: false,
            duration: None,
            requests: None,
            warmup: Duration::ZERO,
            timeout: Some(DEFAULT_TIMEOUT),
            epoch: DEFAULT_EPOCH,
            cycle: false,
            flash_crowd: None,
        }
    }

    /// Reject settings that could not run, or would run forever.
    pub fn validate(&self) -> Result<(), BenchError> {
        let bad = |m: &str| Err(BenchError::Config(m.to_string()));
        match self.mode {
            Mode::Closed { users: 0 } => return bad("users must be at least 1"),
            Mode::Open { rate, connections } => {
                if !(rate.is_finite() && rate > 0.0) {
                    return bad("rate must be a positive number of requests per second");
                }
                if connections == 0 {
                    return bad("an open loop needs at least 1 connection");
                }
            }
            Mode::Ramp { spec, limits } if spec.start > limits.max_users => {
                return bad("the ramp starts above its user limit")
            }
            _ => {}
        }
        if self.epoch.is_zero() {
            return bad("epoch must be longer than zero");
        }
        if self.timeout.is_some_and(|t| t.is_zero()) {
            return bad("timeout must be longer than zero (or none)");
        }
        if self.requests == Some(0) {
            return bad("requests must be at least 1");
        }
        let ramp = matches!(self.mode, Mode::Ramp { .. });
        if self.cycle && !ramp && self.duration.is_none() && self.requests.is_none() {
            return bad("a repeating workload needs --duration or --requests");
        }
        Ok(())
    }

    /// The number of users or connections at the start.
    pub fn initial_users(&self) -> u32 {
        match self.mode {
            Mode::Closed { users } => users,
            Mode::Open { connections, .. } => connections,
            Mode::Ramp { spec, .. } => spec.start,
        }
    }
}

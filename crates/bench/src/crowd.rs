//! A flash crowd as a run plays it ([`trace::FlashCrowd`] by the wall clock): from `at`
//! after the run's start, the crowd's share of the requests sent (counted over all users)
//! asks for the hot targets instead of what the plan had next.

use std::sync::atomic::{AtomicU64, Ordering};

use tokio::time::Instant;
use trace::FlashCrowd;

use crate::error::BenchError;

/// The crowd and its hot targets (indices into the plan's paths).
#[derive(Clone, Debug, PartialEq)]
pub struct CrowdPlan {
    pub crowd: FlashCrowd,
    pub hot: Vec<u32>,
}

impl CrowdPlan {
    /// `crowd` over a plan of `paths` paths, its hot targets drawn for `seed`.
    pub fn new(crowd: FlashCrowd, paths: usize, seed: u64) -> Result<CrowdPlan, BenchError> {
        let n = u32::try_from(paths).unwrap_or(u32::MAX);
        let hot = crowd.hot_targets(n, seed).map_err(BenchError::Config)?;
        Ok(CrowdPlan { crowd, hot })
    }
}

/// A run's crowd: when it begins, and how many requests were sent since.
pub(crate) struct CrowdState {
    plan: CrowdPlan,
    begins: Instant,
    sent: AtomicU64,
}

impl CrowdState {
    pub(crate) fn new(plan: CrowdPlan, run_start: Instant) -> CrowdState {
        let begins = run_start + plan.crowd.at;
        CrowdState { plan, begins, sent: AtomicU64::new(0) }
    }

    /// The target to ask for instead of `planned`, for a request due at `due`.
    pub(crate) fn target(&self, planned: u32, due: Instant) -> u32 {
        if due < self.begins {
            return planned;
        }
        let k = self.sent.fetch_add(1, Ordering::Relaxed);
        self.plan.crowd.pick(k).map_or(planned, |i| self.plan.hot[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn the_crowd_begins_at_its_time_and_takes_its_share() {
        let crowd: FlashCrowd = "share=0.25,at=2s".parse().unwrap();
        let plan = CrowdPlan::new(crowd, 100, 1).unwrap();
        let hot = plan.hot[0];
        let start = Instant::now();
        let state = CrowdState::new(plan, start);
        let planned = (hot + 1) % 100;
        assert_eq!(state.target(planned, start + Duration::from_secs(1)), planned);
        let later = start + Duration::from_secs(3);
        let on_hot = (0..1000).filter(|_| state.target(planned, later) == hot).count();
        assert_eq!(on_hot, 250);
        assert!(CrowdPlan::new("share=0.5,at=0s,targets=3".parse().unwrap(), 2, 1).is_err());
    }
}

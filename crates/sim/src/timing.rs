//! How fast the simulator replays (`larder sim --timing`): wall and CPU time per run.

use serde::Serialize;

use crate::RunResult;

/// A JSON line with the replay speed added (`--timing`).
#[derive(Serialize)]
pub struct TimedResult<'a> {
    #[serde(flatten)]
    pub result: &'a RunResult,
    pub wall_seconds: f64,
    /// Simulated requests per second of wall time.
    pub replay_rps: f64,
    /// CPU time this thread spent on the run, where the kernel reports it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_seconds: Option<f64>,
    /// Simulated requests per second of CPU time: the speed on an otherwise idle core.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay_rps_cpu: Option<f64>,
}

/// CPU time of the calling thread so far (Linux `/proc/thread-self/schedstat`, in ns),
/// so that replay speed can be told apart from contention on a shared machine.
pub fn thread_cpu_seconds() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = text.split_whitespace().next()?.parse().ok()?;
    Some(ns as f64 / 1e9)
}

/// `requests` per second of `seconds` (never a division by zero).
pub fn per_second(requests: u64, seconds: f64) -> f64 {
    requests as f64 / seconds.max(1e-9)
}

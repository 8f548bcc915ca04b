//! How fast the simulator replays (`larder sim --timing`): wall and CPU time per run.

use std::time::Duration;

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

impl TimedResult<'_> {
    /// The run as one JSON line, with the replay speed when `timing`.
    pub fn json_line(&self, timing: bool) -> String {
        let line =
            if timing { serde_json::to_string(self) } else { serde_json::to_string(self.result) };
        // Plain numbers and strings always serialise; say so if that ever changes.
        line.unwrap_or_else(|e| format!("{{\"error\":\"cannot write JSON: {e}\"}}"))
    }

    /// One line for a person: `lard at 4 nodes: 1.20 s wall, 800000 simulated requests/s`
    /// (`lard at 4 nodes, 16 routers: …` with several front-ends).
    pub fn summary(&self) -> String {
        let routers = match self.result.routers {
            1 => String::new(),
            r => format!(", {r} routers"),
        };
        format!(
            "{} at {} nodes{routers}: {:.2} s wall, {:.0} simulated requests/s{}",
            self.result.policy,
            self.result.nodes,
            self.wall_seconds,
            self.replay_rps,
            self.replay_rps_cpu.map_or_else(String::new, |v| format!(" ({v:.0} per CPU second)"))
        )
    }
}

/// The calling thread's CPU clock across a sweep's runs: each run's share, and the total.
pub struct RunClock {
    started: Option<f64>,
    mark: Option<f64>,
}

impl RunClock {
    /// Starts counting on the calling thread (the one that runs the sweep).
    pub fn start() -> Self {
        let now = thread_cpu_seconds();
        RunClock { started: now, mark: now }
    }

    /// `result` with its replay speed over `wall`, and the CPU time since the last lap.
    pub fn lap<'a>(&mut self, result: &'a RunResult, wall: Duration) -> TimedResult<'a> {
        let wall_seconds = wall.as_secs_f64();
        let now = thread_cpu_seconds();
        let cpu_seconds = now.zip(self.mark).map(|(now, mark)| now - mark);
        self.mark = now;
        TimedResult {
            result,
            wall_seconds,
            replay_rps: per_second(result.requests, wall_seconds),
            cpu_seconds,
            replay_rps_cpu: cpu_seconds.map(|cpu| per_second(result.requests, cpu)),
        }
    }

    /// `CPU time 1.20 s: …` over every run of `results`, where the kernel reports it.
    pub fn total(&self, results: &[RunResult]) -> Option<String> {
        let cpu = thread_cpu_seconds().zip(self.started).map(|(now, start)| now - start)?;
        let replayed: u64 = results.iter().map(|r| r.requests).sum();
        Some(format!(
            "CPU time {cpu:.2} s: {:.0} simulated requests per CPU second",
            per_second(replayed, cpu)
        ))
    }
}

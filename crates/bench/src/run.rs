//! A run from start to report: spawn the users, cut time into epochs, collect every user's
//! statistics at each epoch's end, grow the ramp or stop it, and end at the first of: plan
//! used up, requests sent, duration elapsed, ramp verdict.

use std::sync::{Arc, Mutex};
use std::time::Duration;

pub use tokio::runtime::Runtime;
use tokio::task::JoinSet;
use tokio::time::{sleep_until, Instant};

use crate::client::{drain, Client, RunState, StatsSlot};
use crate::closed_loop::run_user;
use crate::config::{Config, Mode};
use crate::error::BenchError;
use crate::open_loop::run_connection;
use crate::ramp::StopReason;
use crate::report::{EpochReport, Report};
use crate::stats::Stats;

/// Users (or connections) of a run and their statistics.
struct Crowd {
    run: Arc<RunState>,
    tasks: JoinSet<()>,
    slots: Vec<StatsSlot>,
}

impl Crowd {
    fn spawn(&mut self, config: &Config, n: u32) {
        for _ in 0..n {
            let slot: StatsSlot = Arc::new(Mutex::new(Stats::default()));
            let client = Client::new(self.run.clone(), slot.clone());
            let index = self.slots.len() as u32;
            self.slots.push(slot);
            match config.mode {
                Mode::Open { rate, connections } => {
                    self.tasks.spawn(run_connection(client, index, connections, rate));
                }
                Mode::Closed { .. } | Mode::Ramp { .. } => {
                    self.tasks.spawn(run_user(client));
                }
            }
        }
    }

    /// Wait until `until` or until every task has ended; true when all have ended.
    async fn wait(&mut self, until: Instant) -> bool {
        let timer = sleep_until(until);
        tokio::pin!(timer);
        loop {
            tokio::select! {
                _ = &mut timer => return self.tasks.is_empty(),
                joined = self.tasks.join_next() => {
                    if joined.is_none() {
                        return true;
                    }
                }
            }
        }
    }

    fn drain(&self) -> Stats {
        let mut all = Stats::default();
        for slot in &self.slots {
            all.merge(&drain(slot));
        }
        all
    }
}

/// [`runtime`] with `threads` workers, or one per core when not given.
pub fn runtime_or_per_core(threads: Option<usize>) -> Result<Runtime, BenchError> {
    runtime(threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())))
}

/// A multi-thread runtime with `threads` workers for the load generator's users.
pub fn runtime(threads: usize) -> Result<Runtime, BenchError> {
    if threads == 0 {
        return Err(BenchError::Config("the load generator needs at least 1 thread".into()));
    }
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .enable_all()
        .build()
        .map_err(|e| BenchError::Config(format!("cannot start {threads} worker threads: {e}")))
}

/// Run `config`, calling `on_epoch` as each epoch ends (for a progress display).
pub async fn run(
    config: &Config,
    mut on_epoch: impl FnMut(&EpochReport),
) -> Result<Report, BenchError> {
    config.validate()?;
    let start = Instant::now();
    let run = Arc::new(RunState::new(config, start));
    let mut crowd = Crowd { run: run.clone(), tasks: JoinSet::new(), slots: Vec::new() };
    let mut users = config.initial_users();
    crowd.spawn(config, users);

    let (epoch_len, ramp) = match config.mode {
        Mode::Ramp { spec, limits } => (spec.epoch, Some((spec, limits))),
        _ => (config.epoch, None),
    };
    let measure_start = run.measure_start;
    let mut finished = crowd.wait(measure_start).await;
    let mut epochs: Vec<EpochReport> = Vec::new();
    let mut total = Stats::default();
    let mut sustained = 0;
    let mut epoch_start = measure_start;
    let stop = loop {
        let epoch_end = epoch_start + epoch_len;
        let until = run.deadline().map_or(epoch_end, |d| d.min(epoch_end));
        if !finished {
            finished = crowd.wait(until).await;
        }
        let end = if finished { Instant::now().min(until) } else { until };
        let stats = crowd.drain();
        let span = end.saturating_duration_since(epoch_start);
        let epoch =
            EpochReport::new(epochs.len(), epoch_start - measure_start, span, users, &stats);
        on_epoch(&epoch);
        epochs.push(epoch);
        total.merge(&stats);
        let verdict = ramp.and_then(|(_, limits)| limits.verdict(&stats, users));
        if verdict != Some(StopReason::Failure)
            && verdict != Some(StopReason::AvgConnect)
            && verdict != Some(StopReason::MaxConnect)
        {
            sustained = users;
        }
        if let Some(reason) = verdict {
            break reason;
        }
        if finished {
            break if run.tickets_exhausted() {
                StopReason::Requests
            } else {
                StopReason::Finished
            };
        }
        if run.deadline().is_some_and(|d| end >= d) {
            break StopReason::Duration;
        }
        if let Some((spec, limits)) = ramp {
            let add = spec.step.min(limits.max_users - users);
            crowd.spawn(config, add);
            users += add;
        }
        epoch_start = epoch_end;
    };
    crowd.tasks.shutdown().await;
    let elapsed = epochs.last().map_or(Duration::ZERO, |e| e.end());
    let reported_users = if ramp.is_some() { sustained } else { users };
    Ok(Report::new(config, reported_users, stop, elapsed, &total, epochs))
}

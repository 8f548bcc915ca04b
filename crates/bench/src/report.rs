//! The result of a run: totals, per-epoch figures and the latency distribution, in one
//! serialisable shape that the table, the JSON file and the HTML page all read.

use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use crate::config::{Config, Mode};
use crate::error::BenchError;
use crate::ramp::StopReason;
use crate::stats::{Stats, Summary};

/// Figures for one epoch.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EpochReport {
    pub index: usize,
    /// Seconds since the end of the warm-up.
    pub start_s: f64,
    pub duration_s: f64,
    /// Users (or open-loop connections) during the epoch.
    pub users: u32,
    #[serde(flatten)]
    pub summary: Summary,
}

impl EpochReport {
    pub fn new(index: usize, start: Duration, span: Duration, users: u32, stats: &Stats) -> Self {
        EpochReport {
            index,
            start_s: start.as_secs_f64(),
            duration_s: span.as_secs_f64(),
            users,
            summary: stats.summary(span),
        }
    }

    /// Time from the end of the warm-up to the end of this epoch.
    pub fn end(&self) -> Duration {
        Duration::from_secs_f64(self.start_s + self.duration_s)
    }
}

/// Everything a run measured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    pub target: String,
    /// `closed`, `open` or `ramp`.
    pub mode: &'static str,
    pub connection_per_request: bool,
    /// The open loop's intended rate (requests per second).
    pub rate: Option<f64>,
    /// Users (closed loop), connections (open loop), or users sustained (ramp).
    pub users: u32,
    pub stop_reason: StopReason,
    /// Measured time (warm-up excluded).
    pub duration_s: f64,
    #[serde(flatten)]
    pub total: Summary,
    pub epochs: Vec<EpochReport>,
    /// `[percentile, milliseconds]` points of the latency distribution.
    pub latency_distribution: Vec<(f64, f64)>,
}

impl Report {
    pub fn new(
        config: &Config,
        users: u32,
        stop_reason: StopReason,
        elapsed: Duration,
        total: &Stats,
        epochs: Vec<EpochReport>,
    ) -> Report {
        let (mode, rate) = match config.mode {
            Mode::Closed { .. } => ("closed", None),
            Mode::Open { rate, .. } => ("open", Some(rate)),
            Mode::Ramp { .. } => ("ramp", None),
        };
        Report {
            target: config.target.text.clone(),
            mode,
            connection_per_request: config.connection_per_request,
            rate,
            users,
            stop_reason,
            duration_s: elapsed.as_secs_f64(),
            total: total.summary(elapsed),
            epochs,
            latency_distribution: total.latency.distribution(),
        }
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self)
            .expect("a report has only plain fields and maps with string keys")
    }

    pub fn write_json(&self, path: &Path) -> Result<(), BenchError> {
        write_file(path, &self.to_json())
    }
}

/// Write `text` to `path`, naming the path on failure.
pub fn write_file(path: &Path, text: &str) -> Result<(), BenchError> {
    std::fs::write(path, text)
        .map_err(|error| BenchError::Write { path: path.to_path_buf(), error })
}

//! Why a benchmark could not be set up or its report not written.
//!
//! Failures of single requests are not errors of the run: they are counted by kind in the
//! statistics (`stats::ErrorKind`), because a failing server is a result, not a crash.

use std::path::PathBuf;

/// A benchmark that cannot start, or whose output cannot be written.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error("bad URL {url:?}: {reason}")]
    BadUrl { url: String, reason: &'static str },
    #[error("cannot resolve {host:?}: {error}")]
    Resolve { host: String, error: std::io::Error },
    #[error("bad duration {text:?}: expected a number with an optional unit (ms, s, m, h), e.g. 500ms or 10s")]
    BadDuration { text: String },
    #[error(
        "bad ramp {text:?}: expected START:STEP:EPOCH with START >= 1, STEP >= 1, e.g. 10:10:30s"
    )]
    BadRamp { text: String },
    #[error("invalid configuration: {0}")]
    Config(String),
    #[error("target {target:?}: {reason}")]
    Target { target: String, reason: String },
    #[error("the workload has no requests to send")]
    EmptyWorkload,
    #[error("cannot write {path}: {error}")]
    Write { path: PathBuf, error: std::io::Error },
}

//! The one error type of the crate.

use std::io;

/// Why loading, generating or writing a workload failed.
///
/// Dirty log lines are not errors (they are counted in a [`crate::LoadReport`]); these are
/// the failures that stop the whole operation.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// Reading or writing a file or stream failed; `context` names what and where. The
    /// I/O error is in the message only (not a `source()` too, or it would print twice).
    #[error("{context}: {error}")]
    Io { context: String, error: io::Error },
    /// A synthetic workload configuration that cannot be generated.
    #[error("invalid synthetic workload: {0}")]
    Config(String),
    /// A data set size that is not a positive number of MiB.
    #[error("--dataset-mb must be a positive number")]
    BadDatasetSize,
    /// More distinct targets or clients than a `u32` id can name.
    #[error("too many distinct {0} (more than u32::MAX)")]
    TooMany(&'static str),
    /// A target cannot be represented where it must go (a log line or a file name).
    #[error("target {target:?}: {reason}")]
    Target { target: String, reason: String },
}

impl TraceError {
    /// Wraps an I/O error with a human-readable context (usually a path).
    pub fn io(context: impl Into<String>, error: io::Error) -> Self {
        TraceError::Io { context: context.into(), error }
    }
}

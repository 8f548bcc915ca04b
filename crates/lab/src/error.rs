//! The one error type of the crate, and [`Context`] to say what was being done when a
//! lower error happened (the binary prints the whole chain).

use std::io;

/// Why a cluster or an experiment could not start, run or write its results.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// A plan or setting that cannot run; the text says which and why.
    #[error("{0}")]
    Invalid(String),
    /// A child process failed: the text names it and ends with its last stderr lines.
    #[error("{0}")]
    Child(String),
    /// A stop was requested (SIGINT or SIGTERM) before the work was done.
    #[error("interrupted")]
    Interrupted,
    #[error(transparent)]
    Io(#[from] io::Error),
    #[error(transparent)]
    Router(#[from] router::RouterError),
    #[error(transparent)]
    Trace(#[from] trace::TraceError),
    #[error(transparent)]
    Bench(#[from] bench::BenchError),
    #[error(transparent)]
    Sim(#[from] sim::SimError),
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    #[error("generating a TLS certificate: {0}")]
    Certificate(#[from] rcgen::Error),
    /// What was being done when `source` happened.
    #[error("{context}")]
    Context {
        context: String,
        #[source]
        source: Box<LabError>,
    },
}

/// `Result` with [`LabError`].
pub type Result<T, E = LabError> = std::result::Result<T, E>;

/// Adds what was being done to an error, as `anyhow::Context` does in the binary.
pub trait Context<T> {
    fn context(self, what: impl Into<String>) -> Result<T>;
    fn with_context(self, what: impl FnOnce() -> String) -> Result<T>;
}

impl<T, E: Into<LabError>> Context<T> for std::result::Result<T, E> {
    fn context(self, what: impl Into<String>) -> Result<T> {
        self.map_err(|e| LabError::Context { context: what.into(), source: Box::new(e.into()) })
    }

    fn with_context(self, what: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|e| LabError::Context { context: what(), source: Box::new(e.into()) })
    }
}

/// Stops with [`LabError::Invalid`] and a formatted message.
macro_rules! invalid {
    ($($arg:tt)*) => {
        return Err($crate::error::LabError::Invalid(format!($($arg)*)))
    };
}
pub(crate) use invalid;

//! The router's typed errors.

/// Why the router could not start or reload.
#[derive(Debug, thiserror::Error)]
pub enum RouterError {
    #[error("config: {0}")]
    Config(String),
    /// The I/O error is in the message, not also a `source()`: `larder: error: …` prints
    /// the chain, and would say it twice.
    #[error("{context}: {error}")]
    Io { context: String, error: std::io::Error },
}

impl RouterError {
    pub(crate) fn io(context: impl Into<String>, error: std::io::Error) -> Self {
        RouterError::Io { context: context.into(), error }
    }
}

//! The router's typed errors.

/// Why the router could not start or reload.
#[derive(Debug, thiserror::Error)]
pub enum RouterError {
    #[error("config: {0}")]
    Config(String),
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

impl RouterError {
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        RouterError::Io { context: context.into(), source }
    }
}

//! Why a node could not start or stopped on its own.

use crate::config::ConfigError;

#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    #[error("invalid configuration: {0}")]
    Config(#[from] ConfigError),
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
}

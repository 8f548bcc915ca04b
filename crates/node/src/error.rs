//! Why a node could not start or stopped on its own.
//!
//! Each message carries its I/O error in its text and not also as a `source()`: the binary
//! prints the whole chain, and would say the OS error twice.

use std::path::PathBuf;

use crate::config::ConfigError;

#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    #[error("invalid configuration: {0}")]
    Config(#[from] ConfigError),
    /// A file or directory the node was given could not be used.
    #[error("{what} {}: {error}", path.display())]
    Path { what: &'static str, path: PathBuf, error: std::io::Error },
    #[error("I/O error: {0}")]
    Io(std::io::Error),
}

impl From<std::io::Error> for NodeError {
    fn from(e: std::io::Error) -> Self {
        NodeError::Io(e)
    }
}

impl NodeError {
    /// The error for `path` (named `what`, as in "access log").
    pub(crate) fn path(
        what: &'static str,
        path: &std::path::Path,
    ) -> impl FnOnce(std::io::Error) -> NodeError {
        let path = path.to_path_buf();
        move |error| NodeError::Path { what, path, error }
    }
}

//! Why a simulation could not run.

/// A simulation error; the message says what to change.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error("invalid simulation settings: {0}")]
    Config(String),
    /// A flag's value or a combination of flags that cannot be run, in the flags' words.
    #[error("{0}")]
    Flag(String),
    #[error(transparent)]
    Policy(#[from] policy::SpecError),
    #[error(transparent)]
    Trace(#[from] trace::TraceError),
    #[error("reading {}: {error}", path.display())]
    Read { path: std::path::PathBuf, error: std::io::Error },
    #[error("the workload has no requests")]
    EmptyWorkload,
    #[error("request {index} names target {target}, but the workload has {targets} targets")]
    BadTarget { index: u64, target: u32, targets: usize },
    #[error("policy `{policy}` found no node for request {index} with every node up")]
    NoNode { policy: String, index: u64 },
    #[error("policy `{policy}` picked node {node} of a {nodes}-node cluster")]
    BadNode { policy: String, node: u32, nodes: usize },
}

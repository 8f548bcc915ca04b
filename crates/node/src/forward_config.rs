//! The limits of back-end forwarding (`forward.rs`): how many connections to each other
//! node, how long to wait for it, how much of a response to hold before answering.

use std::time::Duration;

/// Limits of forwarding later requests on an adopted connection to the nodes they belong
/// to. `ForwardConfig::default()` gives the defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForwardConfig {
    /// Requests forwarded to one node at once (each on a connection of its own, kept
    /// open for the next when idle); a request beyond it is served here. Default is 32.
    pub max_connections_per_node: usize,
    /// Bound on one forward from connect to the end of the response head, and on each
    /// wait for body bytes after it; beyond it the request is served here. Default is
    /// 1000 ms.
    pub timeout: Duration,
    /// Largest response body read whole before the client gets a byte, so that a node
    /// failing mid-body costs nothing (the request is served here). A larger body is
    /// relayed as it arrives, and a failure in it ends the client's connection. Default
    /// is 262144.
    pub max_buffered_bytes: u64,
}

impl Default for ForwardConfig {
    fn default() -> ForwardConfig {
        ForwardConfig {
            max_connections_per_node: 32,
            timeout: Duration::from_millis(1000),
            max_buffered_bytes: 256 * 1024,
        }
    }
}

//! What a node adopting handed-off connections is told (`--handoff-socket` and its
//! limits); `handoff.rs` does the adopting.

use crate::forward_config::ForwardConfig;
use crate::hand_on::SharedHandOn;
use crate::later_requests::LaterRequests;
use std::path::PathBuf;
use std::time::Duration;

/// Where and how much the node adopts. `HandoffConfig::new(socket)` gives the defaults.
#[derive(Clone, Debug)]
pub struct HandoffConfig {
    /// The Unix socket routers hand connections to; advertised in the load report.
    /// Created mode 0600 (only the node's user, and root, may hand it connections); a
    /// stale socket file left at the path is replaced, any other file is an error.
    pub socket: PathBuf,
    /// Handed-off connections served at once, beyond which the node refuses more (they
    /// also take the node's ordinary connection slots). Default is 4096.
    pub max_connections: usize,
    /// The most bytes a router may pass with a connection (a larger message is refused
    /// from its header). Default is 65536.
    pub max_message_bytes: usize,
    /// How long the exchange with a router may take, message to commit, before the node
    /// drops the connection it was offered. Default is 2000 ms.
    pub timeout: Duration,
    /// Where later requests on an adopted connection belong, when this node runs beside
    /// a distributor: one that belongs to another node is forwarded or handed on to it,
    /// as [`HandoffConfig::later`] says. Default is none: the node serves every request
    /// on a connection it adopted.
    pub hand_on: Option<SharedHandOn>,
    /// What is done with a later request that belongs to another node. Default is
    /// [`LaterRequests::Forward`].
    pub later: LaterRequests,
    /// The limits of forwarding such requests.
    pub forward: ForwardConfig,
}

impl HandoffConfig {
    pub fn new(socket: impl Into<PathBuf>) -> HandoffConfig {
        HandoffConfig {
            socket: socket.into(),
            max_connections: 4096,
            max_message_bytes: 64 * 1024,
            timeout: Duration::from_secs(2),
            hand_on: None,
            later: LaterRequests::default(),
            forward: ForwardConfig::default(),
        }
    }
}

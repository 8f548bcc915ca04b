//! What `/stats` and `/metrics` count of HTTP/2: its connections, open and in all, and
//! the requests its streams sent to nodes. HTTP/1.1's requests are the nodes' requests
//! less these, so the HTTP/1.1 path counts nothing more than it did.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

#[derive(Debug, Default)]
pub(crate) struct Http2Counts {
    connections_open: AtomicU64,
    connections: AtomicU64,
    requests: AtomicU64,
}

/// Counts a connection as open while it lives.
pub(crate) struct OpenConnection(Arc<Http2Counts>);

impl Drop for OpenConnection {
    fn drop(&mut self) {
        self.0.connections_open.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Http2Counts {
    pub(crate) fn connection_opened(self: &Arc<Self>) -> OpenConnection {
        self.connections_open.fetch_add(1, Ordering::Relaxed);
        self.connections.fetch_add(1, Ordering::Relaxed);
        OpenConnection(self.clone())
    }

    /// A stream's request went to a node (a retry counts again, as in the nodes' counts).
    pub(crate) fn dispatched(&self) {
        self.requests.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn connections_open(&self) -> u64 {
        self.connections_open.load(Ordering::Relaxed)
    }

    pub(crate) fn connections(&self) -> u64 {
        self.connections.load(Ordering::Relaxed)
    }

    pub(crate) fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }
}

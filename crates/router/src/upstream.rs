//! One back-end node's connections: a bounded pool of idle keep-alive connections, plain
//! TCP or TLS as the node speaks ([`NodeIo`] says how each kind connects and is checked).
//!
//! A pooled connection is checked before reuse (a read that must not wait finds nothing:
//! no bytes, no end of stream), which catches nearly all connections the node closed
//! while they sat idle, so a request is rarely written into a dead connection.

use std::net::SocketAddr;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use rustls::pki_types::ServerName;
use tokio::net::TcpStream;
use tokio::sync::Notify;
use tokio_rustls::client::TlsStream;

use crate::config::NodeAddr;
use crate::handoff::HandoffSocket;
use crate::node_io::{NodeAt, NodeIo};
use crate::poison::Recover;

/// Idle connections of one kind, oldest first.
type Idle<S> = Mutex<Vec<(S, Instant)>>;

/// A kind of node connection an [`Upstream`] pools.
pub(crate) trait Pooled: NodeIo {
    /// `upstream`'s idle connections of this kind.
    fn idle(upstream: &Upstream) -> &Idle<Self>;
}

impl Pooled for TcpStream {
    fn idle(upstream: &Upstream) -> &Idle<Self> {
        &upstream.plain
    }
}

impl Pooled for TlsStream<TcpStream> {
    fn idle(upstream: &Upstream) -> &Idle<Self> {
        &upstream.tls
    }
}

pub(crate) struct Upstream {
    pub addr: SocketAddr,
    /// For a node that speaks TLS: the name its certificate is checked against.
    pub server_name: Option<ServerName<'static>>,
    plain: Idle<TcpStream>,
    tls: Idle<TlsStream<TcpStream>>,
    /// Told when health checks take the node down, so requests waiting on it (a hung
    /// process answers nothing, ever) give up at once instead of at their timeout.
    down: Notify,
    /// Where the node takes handed-off connections, from its load reports.
    pub handoff: HandoffSocket,
}

fn lock<S>(idle: &Idle<S>) -> MutexGuard<'_, Vec<(S, Instant)>> {
    idle.lock().recover()
}

impl Upstream {
    pub(crate) fn new(at: &NodeAddr) -> Self {
        Upstream {
            addr: at.addr,
            // Checked when the address was read (`NodeAddr`).
            server_name: at.server_name.clone().and_then(|n| ServerName::try_from(n).ok()),
            plain: Mutex::new(Vec::new()),
            tls: Mutex::new(Vec::new()),
            down: Notify::new(),
            handoff: HandoffSocket::default(),
        }
    }

    /// True when this upstream is for the node at `at` (same address, same way of speaking).
    pub(crate) fn is_for(&self, at: &NodeAddr) -> bool {
        let name = at.server_name.clone().and_then(|n| ServerName::try_from(n).ok());
        self.addr == at.addr && self.server_name == name
    }

    /// A live idle connection not older than `max_idle` at `now`, if the pool has one.
    pub(crate) fn take<S: Pooled>(&self, max_idle: Duration, now: Instant) -> Option<S> {
        loop {
            let (mut stream, since) = lock(S::idle(self)).pop()?;
            if now.saturating_duration_since(since) > max_idle {
                continue;
            }
            if stream.idle_and_open() {
                return Some(stream);
            }
        }
    }

    /// Return a connection whose last exchange completed cleanly (about `now`).
    pub(crate) fn put<S: Pooled>(&self, stream: S, max_idle_conns: usize, now: Instant) {
        let mut idle = lock(S::idle(self));
        if idle.len() < max_idle_conns {
            idle.push((stream, now));
        }
    }

    /// Close every idle connection (the node went down or left).
    pub(crate) fn clear(&self) {
        lock(&self.plain).clear();
        lock(&self.tls).clear();
    }

    /// The node was taken down: close its idle connections and wake every request
    /// waiting for one of its responses ([`Upstream::went_down`]).
    pub(crate) fn take_down(&self) {
        self.clear();
        self.down.notify_waiters();
    }

    /// Completes when the node is taken down after this was called.
    pub(crate) fn went_down(&self) -> tokio::sync::futures::Notified<'_> {
        self.down.notified()
    }

    pub(crate) fn idle_count(&self) -> usize {
        lock(&self.plain).len() + lock(&self.tls).len()
    }

    /// Where the node is, for [`NodeIo::connect`].
    pub(crate) fn at(&self) -> NodeAt<'_> {
        NodeAt { addr: self.addr, server_name: self.server_name.as_ref() }
    }
}

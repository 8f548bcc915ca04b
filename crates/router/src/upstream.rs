//! One back-end node's connections: a bounded pool of idle keep-alive connections.
//!
//! A pooled connection is checked before reuse (a non-blocking read must find nothing:
//! no bytes, no end of stream), which catches nearly all connections the node closed
//! while they sat idle, so a request is rarely written into a dead connection.

use std::net::SocketAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tokio::net::TcpStream;
use tokio::sync::Notify;

pub(crate) struct Upstream {
    pub addr: SocketAddr,
    idle: Mutex<Vec<(TcpStream, Instant)>>,
    /// Told when health checks take the node down, so requests waiting on it (a hung
    /// process answers nothing, ever) give up at once instead of at their timeout.
    down: Notify,
}

impl Upstream {
    pub(crate) fn new(addr: SocketAddr) -> Self {
        Upstream { addr, idle: Mutex::new(Vec::new()), down: Notify::new() }
    }

    /// A live idle connection not older than `max_idle` at `now`, if the pool has one.
    pub(crate) fn take(&self, max_idle: Duration, now: Instant) -> Option<TcpStream> {
        loop {
            let (stream, since) = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop()?;
            if now.saturating_duration_since(since) > max_idle {
                continue;
            }
            let mut probe = [0u8; 1];
            match stream.try_read(&mut probe) {
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Some(stream),
                _ => continue, // closed, failed or sent unsolicited bytes
            }
        }
    }

    /// Return a connection whose last exchange completed cleanly (about `now`).
    pub(crate) fn put(&self, stream: TcpStream, max_idle_conns: usize, now: Instant) {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if idle.len() < max_idle_conns {
            idle.push((stream, now));
        }
    }

    /// Close every idle connection (the node went down or left).
    pub(crate) fn clear(&self) {
        self.idle.lock().unwrap_or_else(|e| e.into_inner()).clear();
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
        self.idle.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// A fresh connection, within `timeout`.
    pub(crate) async fn connect(&self, timeout: Duration) -> std::io::Result<TcpStream> {
        let stream = tokio::time::timeout(timeout, TcpStream::connect(self.addr)).await.map_err(
            |_| std::io::Error::new(std::io::ErrorKind::TimedOut, "connect timed out"),
        )??;
        stream.set_nodelay(true)?;
        Ok(stream)
    }
}

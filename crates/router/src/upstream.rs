//! One back-end node's connections: a bounded pool of idle keep-alive connections.
//!
//! A pooled connection is checked before reuse (a non-blocking read must find nothing:
//! no bytes, no end of stream), which catches nearly all connections the node closed
//! while they sat idle, so a request is rarely written into a dead connection.

use std::net::SocketAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tokio::net::TcpStream;

pub(crate) struct Upstream {
    pub addr: SocketAddr,
    idle: Mutex<Vec<(TcpStream, Instant)>>,
}

impl Upstream {
    pub(crate) fn new(addr: SocketAddr) -> Self {
        Upstream { addr, idle: Mutex::new(Vec::new()) }
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

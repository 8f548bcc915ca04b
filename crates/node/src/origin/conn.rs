//! Connections to origins: one connection with its unread bytes, the pool of idle ones a
//! client and the body readers it hands out share, and the traffic counters.

use super::config::OriginConfig;
use super::error::OriginError;
use std::cell::{Cell, RefCell};
use std::io;
use std::time::Duration;
use tokio::net::TcpStream;

/// Bytes asked of the socket per read.
pub(super) const READ_CHUNK: usize = 64 * 1024;

/// Counters of the origin traffic, for the load report.
#[derive(Debug, Default)]
pub struct OriginCounters {
    /// Requests sent to an origin (revalidations included).
    pub fetches: Cell<u64>,
    /// Response bytes received from origins (heads and bodies).
    pub bytes: Cell<u64>,
    /// Fetches that failed: unreachable, timed out, or a broken exchange.
    pub errors: Cell<u64>,
}

impl OriginCounters {
    pub(super) fn add(cell: &Cell<u64>, n: u64) {
        cell.set(cell.get().wrapping_add(n));
    }
}

/// One connection to an origin, with the bytes read past what has been consumed.
pub(super) struct OriginConn {
    pub stream: TcpStream,
    pub buf: Vec<u8>,
    pub origin: usize,
}

/// What the client and every body reader it hands out share: idle connections and
/// counters.
pub(super) struct Shared {
    pub idle: RefCell<Vec<Vec<OriginConn>>>,
    pub max_idle: usize,
    pub counters: OriginCounters,
    pub timeout: Duration,
    names: Vec<String>,
}

impl Shared {
    pub fn new(cfg: &OriginConfig) -> Shared {
        Shared {
            idle: RefCell::new(cfg.origins.iter().map(|_| Vec::new()).collect()),
            max_idle: cfg.max_idle_per_origin,
            counters: OriginCounters::default(),
            timeout: cfg.timeout,
            names: cfg.origins.iter().map(ToString::to_string).collect(),
        }
    }

    /// Keep a connection whose last response was read to its end, within the bound.
    pub fn put_back(&self, conn: OriginConn) {
        let mut idle = self.idle.borrow_mut();
        if let Some(list) = idle.get_mut(conn.origin) {
            if list.len() < self.max_idle && conn.buf.is_empty() {
                list.push(conn);
            }
        }
    }

    pub fn name(&self, origin: usize) -> String {
        self.names.get(origin).cloned().unwrap_or_default()
    }

    pub fn timeout_error(&self, origin: usize) -> OriginError {
        OriginError::Timeout { origin: self.name(origin), ms: self.timeout.as_millis() }
    }
}

/// An I/O error as the protocol error it is for the origin `name`.
pub(super) fn io_protocol(name: String, e: &io::Error) -> OriginError {
    OriginError::Protocol { origin: name, what: format!("reading the body: {e}") }
}

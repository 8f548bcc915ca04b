//! larder's front-end router: HACC's Smart Router mechanism, doing extended LARD's
//! per-request distribution on persistent HTTP/1.1 connections. The decisions are the
//! `policy` crate's; this crate moves the bytes.
//!
//! Map of the crate:
//! - [`config`]: the configuration ([`RouterConfig`]), from TOML or flags.
//! - [`overrides`]: command-line values over a config file ([`Overrides`]).
//! - `conn`: one client connection and the walk of each request on it: send the request,
//!   read the response head, relay the response; one writer for every error response.
//! - `head`: request and response heads, parsed strictly and rewritten (hop-by-hop
//!   fields, `X-Forwarded-For`, `Via`, `X-Larder-Node`, `X-Larder-Router`); framing
//!   comes from `http1`.
//! - `body`: streaming body relay in bounded memory (chunked re-encoded canonically).
//! - `buf`: the bounded read buffer, taken when bytes arrive and given back when idle.
//! - `drain`: the signal that ends idle keep-alive connections when the router stops.
//! - `cluster`: membership (nodes by address, weights, health flips) and the one
//!   placement (policy and load view) behind one lock; reload of both.
//! - `health`: one node's health, a pure state machine (ejection, return, slow start).
//! - `stats`, `ewma`: per-node counters and the time-decayed latency average.
//! - `hot`: the bounded hot-target counter behind `/targets` (its own lock).
//! - `upstream`: per-node pools of idle keep-alive connections.
//! - `background`: the loops off the request path: health checks and ticker, the load
//!   monitor (`monitor` reads the nodes' load reports), the access-log flush.
//! - `probe`: the tiny HTTP client the background loops use.
//! - `admin`: `/stats`, `/metrics`, `/targets?top=N`.
//! - `access_log`, `log`: Combined Log Format access log, JSON event lines ([`event`]).
//! - [`error`]: why starting or reloading failed ([`RouterError`]).
//!
//! Entry points: [`Router::new`], [`Router::handle`] (reload, stats) and
//! [`Router::serve`], which takes bound listeners and a shutdown future: the process
//! around it (runtime, binding, signals) is the caller's, so tests run it on 127.0.0.1:0.

#![forbid(unsafe_code)]

mod access_log;
mod admin;
mod background;
mod body;
mod buf;
mod cluster;
pub mod config;
mod conn;
mod drain;
pub mod error;
mod ewma;
mod head;
mod health;
mod hot;
mod log;
mod monitor;
pub mod overrides;
mod probe;
mod stats;
mod upstream;

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

pub use config::{NodeConfig, RouterConfig};
pub use error::RouterError;
pub use log::event;
pub use overrides::Overrides;

use crate::access_log::AccessLog;
use crate::cluster::Cluster;
use crate::config::ms;
use crate::drain::Drain;

/// A configured router, ready to serve.
pub struct Router {
    cluster: Arc<Cluster>,
    access_log: Option<Arc<AccessLog>>,
    /// Client connections open now.
    open: Arc<AtomicUsize>,
}

/// Control of a running router from elsewhere (signal handlers, tests).
#[derive(Clone)]
pub struct RouterHandle {
    cluster: Arc<Cluster>,
    open: Arc<AtomicUsize>,
}

impl RouterHandle {
    /// Apply a new config without dropping connections: nodes (by address), weights,
    /// policy parameters, mapping, limits and timeouts. Listen addresses, thread count and
    /// the access log file stay as they were started.
    pub fn reload(&self, config: RouterConfig) -> Result<(), RouterError> {
        self.cluster.reload(config)?;
        event("info", "config reloaded", &[]);
        Ok(())
    }

    /// Client connections open now (the process around the router watches it to give
    /// memory back after a burst of clients has left).
    pub fn client_connections(&self) -> usize {
        self.open.load(Ordering::Relaxed)
    }

    /// The admin `/stats` document.
    pub fn stats(&self) -> serde_json::Value {
        admin::stats(&self.cluster)
    }

    /// The admin `/targets?top=N` document.
    pub fn targets(&self, top: usize) -> serde_json::Value {
        admin::targets(&self.cluster, top)
    }
}

impl Router {
    pub fn new(config: RouterConfig) -> Result<Router, RouterError> {
        let access_log = match config.access_log.as_str() {
            "" => None,
            target => Some(Arc::new(AccessLog::open(target)?)),
        };
        let open = Arc::new(AtomicUsize::new(0));
        Ok(Router { cluster: Arc::new(Cluster::new(config)?), access_log, open })
    }

    pub fn handle(&self) -> RouterHandle {
        RouterHandle { cluster: self.cluster.clone(), open: self.open.clone() }
    }

    /// Serve clients on `listener` (and the admin API on `admin`) until `shutdown`
    /// completes; then stop accepting, let requests in flight finish (up to
    /// `timeouts.drain_ms`), close idle keep-alive connections, and return.
    pub async fn serve(
        self,
        listener: TcpListener,
        admin: Option<TcpListener>,
        shutdown: impl Future<Output = ()>,
    ) -> Result<(), RouterError> {
        let settings = self.cluster.settings();
        let max_conns = settings.config.limits.max_connections;
        let drain_for = ms(settings.config.timeouts.drain_ms);
        drop(settings);
        let permits = Arc::new(Semaphore::new(max_conns));
        let drain = Drain::default();

        let mut background = JoinSet::new();
        background::spawn(&mut background, &self.cluster, self.access_log.clone());
        if let Some(admin) = admin {
            background.spawn(admin::run(admin, self.cluster.clone()));
        }

        let mut connections = JoinSet::new();
        tokio::pin!(shutdown);
        // A finished connection's task keeps its memory until it is joined: join each as
        // it ends, not at the next accept, or a burst of clients that leaves holds it all.
        'serve: loop {
            let permit = tokio::select! {
                _ = &mut shutdown => break,
                Some(_) = connections.join_next() => continue,
                p = permits.clone().acquire_owned() => match p {
                    Ok(p) => p,
                    Err(_) => break,
                },
            };
            let accepted = loop {
                tokio::select! {
                    _ = &mut shutdown => break 'serve,
                    Some(_) = connections.join_next() => {}
                    a = listener.accept() => break a,
                }
            };
            let (stream, peer) = match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of descriptors and the like: say so, breathe, go on.
                    event("error", "accept failed", &[("error", &e)]);
                    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                    continue;
                }
            };
            let conn = conn::Connection::new(
                stream,
                peer,
                self.cluster.clone(),
                self.access_log.clone(),
                drain.wait(),
            );
            let open = self.open.clone();
            open.fetch_add(1, Ordering::Relaxed);
            connections.spawn(async move {
                conn.run().await;
                open.fetch_sub(1, Ordering::Relaxed);
                drop(permit);
            });
        }

        drop(listener);
        drain.raise();
        let all = u32::try_from(max_conns).unwrap_or(u32::MAX);
        let drained = tokio::time::timeout(drain_for, permits.acquire_many(all)).await.is_ok();
        if !drained {
            event("warn", "drain timed out; closing remaining connections", &[]);
        }
        connections.shutdown().await;
        background.shutdown().await;
        if let Some(log) = &self.access_log {
            log.flush();
        }
        Ok(())
    }
}

/// Build a router from `config` and serve until `shutdown` (see [`Router::serve`]).
pub async fn serve(
    listener: TcpListener,
    admin: Option<TcpListener>,
    config: RouterConfig,
    shutdown: impl Future<Output = ()>,
) -> Result<(), RouterError> {
    Router::new(config)?.serve(listener, admin, shutdown).await
}

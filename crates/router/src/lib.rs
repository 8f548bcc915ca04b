//! larder's front-end router: HACC's Smart Router mechanism, doing extended LARD's
//! per-request distribution on persistent HTTP/1.1 connections. The decisions are the
//! `policy` crate's; this crate moves the bytes.
//!
//! Map of the crate:
//! - [`config`]: the configuration ([`RouterConfig`]), from TOML or flags.
//! - [`overrides`]: command-line values over a config file ([`Overrides`]).
//! - `conn`: one HTTP/1.1 client connection and the walk of each request on it: send the
//!   request, read the response head, relay the response; one writer for every error
//!   response. A plain connection that starts with the HTTP/2 preface goes to `http2`.
//! - `handoff`: passing a plain HTTP/1.1 connection, after its first request is placed,
//!   to that node on this host over its Unix socket (SCM_RIGHTS, [`wire::Handoff`]).
//! - `http2`: HTTP/2 client connections (ALPN `h2`, or prior knowledge), each stream a
//!   request; its `[http2]` limits.
//! - `exchange`: the phases of a request both protocols share: map, connect or take a
//!   pooled connection, the node's head, account, retry, the status of a failed attempt.
//! - `head`: request and response heads, parsed strictly and rewritten (hop-by-hop
//!   fields, `X-Forwarded-For`, `Via`, `X-Larder-Node`, `X-Larder-Router`); framing
//!   comes from `http1`.
//! - `body`: streaming body relay in bounded memory (chunked re-encoded canonically).
//! - `buf`: the bounded read buffer, taken when bytes arrive and given back when idle.
//! - `pools`: the router's own spare read buffers (`buf_pool`) and splice pipes
//!   (`pipe_pool`), bounded stocks (`spares`) sized from its config and handed to each
//!   connection.
//! - `drain`: the signal that ends idle keep-alive connections when the router stops.
//! - `cluster`: membership (nodes by address, weights, health flips) and the one
//!   placement (policy and load view) behind one lock; reload of both. Its files: the
//!   compiled `settings`, the `membership` reconciled with config and discovery, the
//!   `placement` (pick, finish, load reports), a `node` slot's status, the `clock`.
//! - `poison`: the one recovery from a poisoned lock.
//! - `health`: one node's health, a pure state machine (ejection, return, slow start).
//! - `stats`, `ewma`: per-node counters and the time-decayed latency average.
//! - `hot`: the bounded hot-target counter behind `/targets` (its own lock).
//! - `upstream`: per-node pools of idle keep-alive connections.
//! - `turn`: writes wait for the reads of the same event-loop turn, so the node and the
//!   client each wake once for a batch.
//! - `background`: the loops off the request path: health checks and ticker, the load
//!   monitor (`monitor` reads the nodes' load reports), the access-log flush.
//! - `probe`: the tiny HTTP client of the router's own requests to nodes.
//! - `invalidate`: after an unsafe request for a target succeeded through one node, the
//!   other nodes are told to drop it ([`wire::Invalidation`]), off the client's path.
//! - `purge`: an operator's `PURGE` (traffic listener, `purge_from` networks) or admin
//!   `POST /purge`, sent to every node as an invalidation, answered with how many held it
//!   ([`wire::PurgeReport`]); `ip_network`: the networks `purge_from` lists.
//! - `discovery`: finding nodes through DNS (A/AAAA and SRV), applied through the
//!   cluster's reload: the loop, its `config`, `resolve` (asking the nameserver),
//!   `answers` (answers → named nodes), `state` (the last good answer kept through
//!   errors, TTL → next round) and `view` (its `/stats` part).
//! - `admin`: the admin listener: `/` (`dashboard`, the live page), `/stats`
//!   (`admin_stats`, [`wire::RouterStats`]), `/metrics` (`admin_metrics`, Prometheus
//!   text), `/targets?top=N`, `/healthz`, `POST /purge`.
//! - `access_log`, `log`: Combined Log Format access log, JSON event lines ([`event`]).
//! - `tls`: the TLS server configuration from PEM files (certificates by SNI).
//! - `client_io`: what a client connection runs over (plain TCP or TLS).
//! - `node_addr`: a node's address as written (`HOST:PORT`, `https://HOST:PORT`).
//! - `node_io`: what a connection to a node runs over (plain TCP or TLS); `node_tls`, the
//!   TLS client configuration from the CA file.
//! - [`error`]: why starting or reloading failed ([`RouterError`]).
//!
//! Entry points: [`Router::new`], [`Router::handle`] (reload, stats) and
//! [`Router::serve`], which takes bound listeners and a shutdown future: the process
//! around it (runtime, binding, signals) is the caller's, so tests run it on 127.0.0.1:0.

#![forbid(unsafe_code)]

mod access_log;
mod admin;
mod admin_metrics;
mod admin_stats;
mod agreement;
mod background;
mod body;
mod buf;
mod buf_pool;
mod client_io;
mod cluster;
pub mod config;
mod conn;
mod dashboard;
mod discovery;
mod drain;
pub mod error;
mod ewma;
mod exchange;
mod hand_on;
mod handoff;
mod head;
mod health;
mod hot;
mod http2;
mod invalidate;
pub mod ip_network;
mod log;
mod millis;
mod monitor;
mod node_addr;
mod node_io;
mod node_tls;
pub mod overrides;
mod pipe_pool;
mod poison;
mod pools;
mod probe;
mod purge;
mod spares;
mod splice;
mod stats;
mod tls;
mod tunnel;
mod turn;
mod upstream;

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

pub use config::{
    Http2Config, NodeAddr, NodeConfig, NodeTlsConfig, RouterConfig, SniCertificate, TlsConfig,
};
pub use error::RouterError;
pub use hand_on::PeerHandOn;
pub use log::event;
pub use overrides::Overrides;

use crate::access_log::AccessLog;
use crate::cluster::Cluster;
use crate::drain::Drain;
use crate::pools::Pools;

/// A configured router, ready to serve.
pub struct Router {
    cluster: Arc<Cluster>,
    access_log: Option<Arc<AccessLog>>,
    /// Client connections open now.
    open: Arc<AtomicUsize>,
    /// A second listener whose clients speak TLS ([`Router::with_tls_listener`]).
    tls_listener: Option<TcpListener>,
    /// This router's spare buffers and pipes, which its connections share.
    pools: Pools,
}

/// Control of a running router from elsewhere (signal handlers, tests).
#[derive(Clone)]
pub struct RouterHandle {
    cluster: Arc<Cluster>,
    open: Arc<AtomicUsize>,
    pools: Pools,
}

impl RouterHandle {
    /// Apply a new config without dropping connections: nodes (by address), weights,
    /// policy parameters, mapping, limits and timeouts. Listen addresses, thread count and
    /// the access log file stay as they were started.
    pub fn reload(&self, config: RouterConfig) -> Result<(), RouterError> {
        self.cluster.reload(config)?;
        self.pools.configure(&self.cluster.settings().config);
        event("info", "config reloaded", &[]);
        Ok(())
    }

    /// Answer `hand_on`'s questions (where a later request on a connection the peer's
    /// node adopted belongs) with this router's placement.
    pub fn place_hand_ons(&self, hand_on: &PeerHandOn) {
        hand_on.attach(Arc::clone(&self.cluster));
    }

    /// Client connections open now.
    pub fn client_connections(&self) -> usize {
        self.open.load(Ordering::Relaxed)
    }

    /// About how much memory client connections hold now, in bytes: their read buffers
    /// (this router's) and a few KiB of state each. The process
    /// around the router watches it to give memory back after a burst has passed.
    pub fn connection_memory(&self) -> usize {
        const STATE_PER_CONNECTION: usize = 4096;
        self.pools.bufs.held_bytes() + self.client_connections() * STATE_PER_CONNECTION
    }

    /// The admin `/stats` document.
    pub fn stats(&self) -> wire::RouterStats {
        admin_stats::stats(&self.cluster)
    }

    /// The admin `/targets?top=N` document.
    pub fn targets(&self, top: usize) -> serde_json::Value {
        admin_stats::targets(&self.cluster, top)
    }
}

impl Router {
    pub fn new(config: RouterConfig) -> Result<Router, RouterError> {
        let access_log = match &config.access_log {
            None => None,
            Some(target) => Some(Arc::new(AccessLog::open(target)?)),
        };
        let open = Arc::new(AtomicUsize::new(0));
        let pools = Pools::new(&config);
        let cluster = Arc::new(Cluster::new(config)?);
        Ok(Router { cluster, access_log, open, tls_listener: None, pools })
    }

    /// Also serve TLS clients on `listener`, with the certificates of the config's `[tls]`
    /// (which must name them: [`Router::serve`] refuses otherwise).
    pub fn with_tls_listener(mut self, listener: TcpListener) -> Router {
        self.tls_listener = Some(listener);
        self
    }

    pub fn handle(&self) -> RouterHandle {
        RouterHandle {
            cluster: self.cluster.clone(),
            open: self.open.clone(),
            pools: self.pools.clone(),
        }
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
        if self.tls_listener.is_some() && settings.tls.is_none() {
            return Err(RouterError::Config("tls: a TLS listener needs cert and key".into()));
        }
        let max_conns = settings.config.limits.max_connections;
        let drain_for = settings.config.timeouts.drain;
        drop(settings);
        let permits = Arc::new(Semaphore::new(max_conns));
        let drain = Drain::default();

        let mut background = JoinSet::new();
        let discovered = background::spawn(&mut background, &self.cluster, self.access_log.clone());
        if let Some(admin) = admin {
            background.spawn(admin::run(admin, self.cluster.clone()));
        }

        let mut connections = JoinSet::new();
        tokio::pin!(shutdown);
        // Nodes found through DNS are in the membership before the first client is
        // accepted (a round is bounded by the resolver's timeouts).
        let stopped = tokio::select! {
            _ = discovered => false,
            _ = &mut shutdown => true,
        };
        // A finished connection's task keeps its memory until it is joined: join each as
        // it ends, not at the next accept, or a burst of clients that leaves holds it all.
        'serve: loop {
            if stopped {
                break;
            }
            let permit = tokio::select! {
                _ = &mut shutdown => break,
                Some(_) = connections.join_next() => continue,
                p = permits.clone().acquire_owned() => match p {
                    Ok(p) => p,
                    Err(_) => break,
                },
            };
            let (accepted, tls) = loop {
                tokio::select! {
                    _ = &mut shutdown => break 'serve,
                    Some(_) = connections.join_next() => {}
                    a = listener.accept() => break (a, false),
                    a = accept_on(self.tls_listener.as_ref()) => break (a, true),
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
            if let Some(until) = self.cluster.calm_down().refused_now(peer.ip()) {
                // Cut off for abusing HTTP/2 a moment ago: held unread until its time is
                // up, or closed at once when the tarpit is full.
                let cluster = self.cluster.clone();
                connections.spawn(async move {
                    if let Some(_held) = cluster.calm_down().hold() {
                        tokio::time::sleep_until(until.into()).await;
                    }
                    drop(stream);
                });
                continue;
            }
            let _ = stream.set_nodelay(true);
            let (cluster, log, drain_wait) =
                (self.cluster.clone(), self.access_log.clone(), drain.wait());
            let (open, pools) = (self.open.clone(), self.pools.clone());
            open.fetch_add(1, Ordering::Relaxed);
            connections.spawn(async move {
                if tls {
                    // Boxed: a TLS session is several KiB, and a plain connection's task
                    // would otherwise be sized for it too.
                    let served =
                        handshake_then_serve(stream, peer, cluster, log, drain_wait, pools);
                    Box::pin(served).await;
                } else {
                    conn::Connection::new(stream, peer, cluster, log, drain_wait, pools)
                        .run()
                        .await;
                }
                open.fetch_sub(1, Ordering::Relaxed);
                drop(permit);
            });
        }

        drop(listener);
        drop(self.tls_listener);
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

/// The next client on `listener`; never, without one.
async fn accept_on(
    listener: Option<&TcpListener>,
) -> std::io::Result<(tokio::net::TcpStream, std::net::SocketAddr)> {
    match listener {
        Some(l) => l.accept().await,
        None => std::future::pending().await,
    }
}

/// A TLS client: the handshake (with the certificates current now, within the header
/// timeout), then HTTP/2 when ALPN chose it, else requests as on a plain connection.
async fn handshake_then_serve(
    stream: tokio::net::TcpStream,
    peer: std::net::SocketAddr,
    cluster: Arc<Cluster>,
    log: Option<Arc<AccessLog>>,
    drain: drain::DrainWait,
    pools: Pools,
) {
    let settings = cluster.settings();
    let Some(tls) = settings.tls.clone() else { return };
    let limit = settings.config.timeouts.header;
    drop(settings);
    let acceptor = tokio_rustls::TlsAcceptor::from(tls);
    // The handshake in a box of its own, freed once it is done, and each protocol in one
    // sized for it: a TLS session held inline here would be kept twice by every
    // connection (the handshake's copy beside the protocol's), for the connection's life.
    // Matched without a named result: a result kept in a variable and partly moved out of
    // would keep its slot (a whole TLS session) in this future while the protocol runs.
    let Ok(Ok(stream)) = Box::pin(tokio::time::timeout(limit, acceptor.accept(stream))).await
    else {
        return;
    };
    serve_alpn(stream, peer, cluster, log, drain, pools).await;
}

/// The protocol ALPN chose on `stream`, in a box sized for it. Not an `async fn`, and
/// apart from `handshake_then_serve`: a TLS session borrowed (to read its ALPN) in an
/// async function keeps its slot there for the function's life.
fn serve_alpn(
    stream: tokio_rustls::server::TlsStream<tokio::net::TcpStream>,
    peer: std::net::SocketAddr,
    cluster: Arc<Cluster>,
    log: Option<Arc<AccessLog>>,
    drain: drain::DrainWait,
    pools: Pools,
) -> Pin<Box<dyn Future<Output = ()> + Send>> {
    if stream.get_ref().1.alpn_protocol() == Some(tls::ALPN_H2) {
        Box::pin(http2::serve(stream, peer, cluster, log, drain, pools))
    } else {
        Box::pin(conn::Connection::new(stream, peer, cluster, log, drain, pools).run())
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

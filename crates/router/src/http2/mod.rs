//! HTTP/2 at the front door, on the `h2` crate (framing, HPACK, flow control, and the
//! defences against floods of resets, CONTINUATION frames and oversized header lists):
//! a client connection chooses it by ALPN `h2` on the TLS listener, or by starting with
//! the connection preface on the plain one (prior knowledge). Every stream is one request
//! (`stream`), driven beside the others inside the connection's task, so the streams of
//! one connection go to different nodes at once, each over the nodes' HTTP/1.1 pools,
//! without a task (its allocation, registration and scheduling) per stream.
//!
//! Its files: `config` (the `[http2]` section), `stream` (one request),
//! `response_head` (the response's fields built from the node's head),
//! `extended_connect` (a WebSocket over one stream, RFC 8441), `rewind` (the
//! bytes the HTTP/1.1 reader took before it saw the preface), `flood_guard` (a limit on
//! the `PING` and `SETTINGS` frames a client sends), `write_batch` (the frames of one
//! turn of the connection written together), `counts` (for `/stats`).

pub(crate) mod calm_down;
pub mod config;
pub(crate) mod counts;
mod extended_connect;
mod flood_guard;
mod response_head;
pub(crate) mod rewind;
mod stream;
mod write_batch;
mod write_through;

use std::future::{poll_fn, Future};
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::stream::{FuturesUnordered, StreamExt};
use tokio::io::{AsyncRead, AsyncWrite};

use crate::access_log::AccessLog;
use crate::cluster::Cluster;
use crate::drain::{Drain, DrainWait};
use crate::pools::Pools;

use counts::Http2Counts;
use flood_guard::FloodGuard;
use write_batch::{Turns, WriteBatch};

/// How an HTTP/2 connection starts (RFC 9113 §3.4); its first line is enough to tell it
/// from an HTTP/1.1 request.
pub(crate) const PREFACE_LINE: &[u8] = b"PRI * HTTP/2.0\r\n";

/// What every stream of one connection shares.
pub(crate) struct Shared {
    peer: SocketAddr,
    /// The client's address as written into `X-Forwarded-For`.
    client: Vec<u8>,
    cluster: Arc<Cluster>,
    access_log: Option<Arc<AccessLog>>,
    pools: Pools,
    counts: Arc<Http2Counts>,
    /// Raised when the router drains: a tunnel (extended CONNECT) ends then, where an
    /// ordinary stream runs to its end.
    tunnels_drain: Drain,
}

/// Serve one HTTP/2 client connection until it closes, breaks the protocol or a limit,
/// idles, or the router drains (then `GOAWAY`: streams already open finish, no new one
/// starts). The future returned ends once every stream has ended, so its requests are
/// accounted.
///
/// Not an `async fn`: an async function keeps its arguments for its whole life beside
/// what they are moved into, and `io` (a TLS session over TLS) would then be held once
/// more by every idle connection. Here it is moved, through the writer and the flood
/// guard, into h2's handshake, which is boxed apart and freed once the connection is up.
pub(crate) fn serve<T>(
    io: T,
    peer: SocketAddr,
    cluster: Arc<Cluster>,
    access_log: Option<Arc<AccessLog>>,
    drain: DrainWait,
    pools: Pools,
) -> impl Future<Output = ()>
where
    T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let turns = Turns::default();
    let settings = cluster.settings();
    let http2 = &settings.config.http2;
    let io = WriteBatch::new(io, http2.write_batch_bytes, turns.clone());
    let io = FloodGuard::new(io, http2.max_control_frames_per_second);
    let mut builder = http2.builder();
    if settings.config.limits.upgrades {
        builder.enable_connect_protocol();
    }
    let limits = Limits {
        header: settings.config.timeouts.header,
        idle: settings.config.timeouts.idle,
        max_streams: http2.max_concurrent_streams as usize,
    };
    drop(settings);
    let handshake = Box::pin(builder.handshake::<_, bytes::Bytes>(io));
    turns.counting(serve_streams(handshake, limits, peer, cluster, access_log, drain, pools))
}

/// The limits `serve` reads once, at the start.
struct Limits {
    /// How long the client has to complete h2's handshake (the header timeout).
    header: Duration,
    /// How long the connection may stay without streams before it is closed.
    idle: Duration,
    /// Streams running at most.
    max_streams: usize,
}

/// h2's handshake of a connection, before it is up.
type Handshake<T> = Pin<Box<h2::server::Handshake<FloodGuard<WriteBatch<T>>, bytes::Bytes>>>;

/// `serve` from h2's handshake on, over a writer that gathers each turn's frames.
async fn serve_streams<T>(
    handshake: Handshake<T>,
    limits: Limits,
    peer: SocketAddr,
    cluster: Arc<Cluster>,
    access_log: Option<Arc<AccessLog>>,
    mut drain: DrainWait,
    pools: Pools,
) where
    T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let Limits { header, idle, max_streams } = limits;
    // Matched without a named result: a result kept in a variable and partly moved out of
    // would keep a second connection-sized slot in this future for the connection's life.
    let Ok(Ok(mut connection)) = tokio::time::timeout(header, handshake).await else { return };
    let counts = cluster.http2_counts();
    let _open = counts.connection_opened();
    let shared = Arc::new(Shared {
        peer,
        client: peer.ip().to_string().into_bytes(),
        cluster,
        access_log,
        pools,
        counts,
        tunnels_drain: Drain::default(),
    });
    // Boxed: an empty set keeps a slot for one stream, which is then a pointer rather
    // than a whole stream's future, in every idle connection.
    let mut streams: FuturesUnordered<StreamFuture> = FuturesUnordered::new();
    let idle_timer = tokio::time::sleep(idle);
    tokio::pin!(idle_timer);
    let mut closing = false;
    loop {
        // Streams still running (a request at its node after the client reset it) are
        // not taken up past the stream limit: the connection is still driven,
        // and what the client opens and cancels meanwhile counts against
        // `max_pending_reset_streams` (Rapid Reset).
        let accepting = streams.len() < max_streams;
        tokio::select! {
            next = poll_fn(|cx| next_stream(&mut connection, accepting, cx)) => match next {
                Some(Ok((request, respond))) => {
                    streams.push(Box::pin(stream::serve(shared.clone(), request, respond)));
                }
                // Closed by the client, after GOAWAY, or for breaking the protocol or a
                // limit (h2 has sent the GOAWAY saying why).
                Some(Err(e)) => {
                    if abused(&e) {
                        let period = shared.cluster.settings().config.http2.calm_down;
                        let now = std::time::Instant::now();
                        shared.cluster.calm_down().penalise(peer.ip(), now, period);
                    }
                    break;
                }
                None => break,
            },
            Some(()) = streams.next(), if !streams.is_empty() => {
                if streams.is_empty() {
                    idle_timer.as_mut().reset(tokio::time::Instant::now() + idle);
                }
            }
            _ = &mut drain, if !closing => {
                closing = true;
                connection.graceful_shutdown();
                shared.tunnels_drain.raise();
            }
            _ = &mut idle_timer, if !closing && streams.is_empty() => {
                closing = true;
                connection.graceful_shutdown();
            }
        }
    }
    // Streams still running see the connection gone (their sends fail) and end, each
    // accounting its request.
    drop(connection);
    while streams.next().await.is_some() {}
}

/// One stream's future, as the connection drives it.
type StreamFuture = Pin<Box<dyn Future<Output = ()> + Send>>;

/// Whether the router closed the connection for abuse: a flood of resets (h2's own
/// `ENHANCE_YOUR_CALM`) or of control frames (the flood guard).
fn abused(e: &h2::Error) -> bool {
    let calm =
        e.is_go_away() && !e.is_remote() && e.reason() == Some(h2::Reason::ENHANCE_YOUR_CALM);
    calm || e.get_io().is_some_and(flood_guard::is_flood)
}

/// Drive `connection`: the next stream when `accepting`, else only its I/O (sending,
/// window updates, frames queued for later) until it closes.
fn next_stream<T, B>(
    connection: &mut h2::server::Connection<T, B>,
    accepting: bool,
    cx: &mut Context<'_>,
) -> Poll<Option<Result<Accepted<B>, h2::Error>>>
where
    T: AsyncRead + AsyncWrite + Unpin,
    B: bytes::Buf,
{
    if accepting {
        return connection.poll_accept(cx);
    }
    match connection.poll_closed(cx) {
        Poll::Ready(Ok(())) => Poll::Ready(None),
        Poll::Ready(Err(e)) => Poll::Ready(Some(Err(e))),
        Poll::Pending => Poll::Pending,
    }
}

/// A stream the client opened: its request, and where its response goes.
type Accepted<B> = (http::Request<h2::RecvStream>, h2::server::SendResponse<B>);

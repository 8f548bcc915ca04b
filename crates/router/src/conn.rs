//! One client connection, and the walk of each request on it, as a straight line:
//! read and parse the head → map the URL to a target → the policy picks a node → send the
//! request (pooled upstream connection, head, body) → read the response head → relay the
//! response → tell the cluster (in-flight count, latency, stats, the policy's `done`) →
//! next request. Every response the router writes itself goes through `send_error`.
//!
//! Every request on a keep-alive connection is dispatched on its own (extended LARD's
//! per-request distribution), so consecutive requests may go to different nodes.

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use http1::{BodyFraming, ParseError, Status};
use policy::{Outcome, Target};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::Sleep;
use tokio_rustls::client::TlsStream;

use crate::access_log::{AccessEntry, AccessLog, Protocol};
use crate::body::{self, BodyError, BodyPlan, SourceError};
use crate::buf::IoBuf;
use crate::client_io::ClientIo;
use crate::cluster::{Cluster, Dispatch, Finished, Settings};
use crate::drain::DrainWait;
use crate::exchange::{self, AttemptError, Fault};
use crate::handoff;
use crate::head::{self, ClientBody, Rejection, Request, Response, ResponseRules};
use crate::http2;
use crate::pipe_pool::PipePool;
use crate::pools::Pools;
use crate::purge;
use crate::tunnel;
use crate::turn;
use crate::upstream::Pooled;

/// Output capacity a connection keeps between requests: room for a response head.
const OUT_KEPT: usize = 1024;

/// Whether the client connection goes on after a request.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Flow {
    KeepAlive,
    Close,
    /// Close, but the client may still be sending (a body the router refused or the node
    /// answered early): drain its input for a while first (`Connection::linger`).
    Linger,
    /// A node took the connection (`handoff.rs`): let go of it untouched.
    HandedOff,
}

/// A request that got an upstream response.
struct Done {
    status: u16,
    bytes: u64,
    upstream_time: Duration,
    /// When the response was complete.
    at: Instant,
    flow: Flow,
}

/// A request sent to a node: the connection its response comes on.
struct Sent<N> {
    upstream: N,
    /// When the request went out (the start of upstream time).
    at: Instant,
    /// The connection came from the pool and the request can be replayed: silence before
    /// any response byte means the node had closed it ([`Fault::Stale`]).
    stale_if_silent: bool,
    /// The node answered (or stopped reading) before the request body was all sent: its
    /// response is relayed, then both connections close, the rest of the body unread.
    body_unfinished: bool,
    /// The response's first byte, when watching for an early answer took it off the
    /// connection (TLS cannot peek).
    first: Option<u8>,
}

pub(crate) struct Connection<S: ClientIo> {
    stream: S,
    peer: SocketAddr,
    cluster: Arc<Cluster>,
    access_log: Option<Arc<AccessLog>>,
    drain: DrainWait,
    /// The client's address as written into `X-Forwarded-For`, formatted once.
    client: Vec<u8>,
    client_buf: IoBuf,
    upstream_buf: IoBuf,
    /// The router's splice pipes (its read buffers are the two above's).
    pipes: Arc<PipePool>,
    out: Vec<u8>,
    /// The current request's normalised path, refilled per request.
    path: String,
    /// When the last request finished (or the connection opened): the idle deadline counts
    /// from here, so waiting for the next request reads no clock.
    last: Instant,
    /// Deadlines for the waits every request has: the client's next head, the node's
    /// response head. Each is one timer for the connection's life, pushed later per
    /// request (an atomic store while it stays registered), not a timer per wait.
    client_timer: Pin<Box<Sleep>>,
    upstream_timer: Pin<Box<Sleep>>,
}

impl<S: ClientIo> Connection<S> {
    pub(crate) fn new(
        stream: S,
        peer: SocketAddr,
        cluster: Arc<Cluster>,
        access_log: Option<Arc<AccessLog>>,
        drain: DrainWait,
        pools: Pools,
    ) -> Self {
        let limits = &cluster.settings().config.limits;
        let size = limits.buffer_bytes.max(limits.max_header_bytes + 1);
        Connection {
            stream,
            peer,
            access_log,
            drain,
            client: peer.ip().to_string().into_bytes(),
            client_buf: IoBuf::pooled(size, pools.bufs.clone()),
            upstream_buf: IoBuf::pooled(size, pools.bufs),
            pipes: pools.pipes,
            out: Vec::new(),
            path: String::new(),
            last: Instant::now(),
            client_timer: Box::pin(tokio::time::sleep(Duration::ZERO)),
            upstream_timer: Box::pin(tokio::time::sleep(Duration::ZERO)),
            cluster,
        }
    }

    /// Serve requests until the client leaves, an error closes the connection, or the
    /// router drains.
    pub(crate) async fn run(mut self) {
        let mut first = true;
        // Refilled for each request on the connection; its buffers are reused while they
        // stay small.
        let mut req = Request::default();
        let flow = loop {
            let settings = self.cluster.settings();
            match self.read_request(&settings, first, &mut req).await {
                Ok(true) => {}
                Ok(false) => return,
                Err(rejection) => {
                    if first && self.is_http2(&settings) {
                        // Boxed: an HTTP/1.1 connection's future stays its own size.
                        return Box::pin(self.into_http2()).await;
                    }
                    if first && self.is_bad_preface(&settings, &rejection) {
                        break Flow::Linger;
                    }
                    break self.reject(&settings, &rejection, None).await;
                }
            }
            let offer = first && settings.config.handoff.enabled;
            first = false;
            match self.exchange(&settings, &req, offer).await {
                Flow::KeepAlive => {}
                flow => break flow,
            }
        };
        if flow == Flow::HandedOff {
            return;
        }
        let linger = self.cluster.settings().config.timeouts.linger;
        if flow == Flow::Linger {
            self.linger(linger).await;
        } else {
            // End the stream properly (under TLS, close_notify: a client can tell the
            // end from a cut), within the linger time however slow the client is.
            let _ = tokio::time::timeout(linger, self.stream.shutdown()).await;
        }
    }

    /// The connection began with the HTTP/2 preface (prior knowledge), which the
    /// HTTP/1.1 parser refused: only then is it looked for, so HTTP/1.1 pays nothing.
    #[cold]
    fn is_http2(&self, settings: &Settings) -> bool {
        settings.config.http2.enabled && self.client_buf.filled().starts_with(http2::PREFACE_LINE)
    }

    /// The connection began with neither an HTTP/1 request line nor the HTTP/2 preface,
    /// on a listener that takes both: an invalid connection preface, closed without an
    /// answer (RFC 9113 §3.4 lets the GOAWAY be omitted, since the peer does not speak
    /// HTTP/2; an HTTP/1 400 would mean nothing to it either, and an HTTP/2 client reads
    /// it as a broken frame instead of the close). An HTTP/1 client that got its request
    /// wrong still names its version, and still gets its 400.
    #[cold]
    fn is_bad_preface(&self, settings: &Settings, rejection: &Rejection) -> bool {
        settings.config.http2.enabled
            && matches!(rejection, Rejection::Head(_))
            && http1::is_not_http1(self.client_buf.filled())
    }

    /// Serve the connection as HTTP/2, from the bytes already read. What only HTTP/1.1
    /// uses (the read buffers, the timers) is given back first: an idle HTTP/2
    /// connection would otherwise hold it for its whole life.
    async fn into_http2(self) {
        let Connection {
            stream,
            peer,
            cluster,
            access_log,
            drain,
            client,
            client_buf,
            upstream_buf,
            pipes,
            out,
            path,
            last: _,
            client_timer,
            upstream_timer,
        } = self;
        let prefix = client_buf.filled().to_vec();
        let bufs = client_buf.pool().cloned().unwrap_or_default();
        drop((client, client_buf, upstream_buf, out, path, client_timer, upstream_timer));
        let pools = Pools { bufs, pipes };
        let io = http2::rewind::Rewind::new(prefix, stream);
        http2::serve(io, peer, cluster, access_log, drain, pools).await;
    }

    /// Close without resetting a client that is still sending: closing a socket with
    /// unread input sends RST, and a client that gets RST may drop the answer it has not
    /// read yet (the 413 that told it to stop). So: end the response side (FIN), then
    /// read and discard whatever comes, until the client closes or `for_at_most` passes.
    async fn linger(&mut self, for_at_most: Duration) {
        if for_at_most.is_zero() || self.stream.shutdown().await.is_err() {
            return;
        }
        let deadline = tokio::time::Instant::now() + for_at_most;
        // On the heap, and only here: a buffer in the future would cost every connection.
        let mut sink = vec![0u8; 4096];
        while let Ok(Ok(n)) = tokio::time::timeout_at(deadline, self.stream.read(&mut sink)).await {
            if n == 0 {
                return;
            }
        }
    }

    /// Read the next request head into `req`. `Ok(false)`: the client left or went idle,
    /// or the router is draining. A head must complete within `header_ms` of its first byte,
    /// however slowly it trickles in.
    async fn read_request(
        &mut self,
        settings: &Settings,
        first: bool,
        req: &mut Request,
    ) -> Result<bool, Rejection> {
        let t = &settings.config.timeouts;
        let mut deadline: Option<tokio::time::Instant> = None;
        loop {
            if !self.client_buf.is_empty() {
                let parsed = head::parse_request(
                    self.client_buf.filled(),
                    &self.client,
                    &settings.head_limits,
                    &settings.config.via,
                    req,
                )?;
                if let Some(len) = parsed {
                    if first && settings.config.handoff.enabled {
                        // Kept: a handoff passes them on.
                        self.client_buf.consume_keeping(len);
                    } else {
                        self.client_buf.consume(len);
                    }
                    return Ok(true);
                }
                if self.client_buf.is_full() {
                    let limit = settings.head_limits.max_header_bytes;
                    return Err(Rejection::Head(ParseError::HeadTooLarge { limit }));
                }
                deadline.get_or_insert_with(|| tokio::time::Instant::now() + t.header);
            } else if self.drain.raised() {
                return Ok(false);
            }
            let wait = deadline.unwrap_or_else(|| {
                let since = tokio::time::Instant::from_std(self.last);
                since + if first { t.header } else { t.idle }
            });
            let idle = self.client_buf.is_empty();
            if idle {
                self.release_buffers(req);
            }
            self.client_timer.as_mut().reset(wait);
            let (buf, stream) = (&mut self.client_buf, &mut self.stream);
            let read = async move {
                match stream.tcp() {
                    Some(socket) if idle => buf.fill_when_readable(socket).await,
                    _ => buf.fill(stream).await,
                }
            };
            tokio::select! {
                biased;
                read = read => {
                    match read {
                        Ok(0) | Err(_) => return Ok(false),
                        Ok(_) => {}
                    }
                }
                _ = &mut self.client_timer => {
                    return if idle { Ok(false) } else { Err(Rejection::Timeout) };
                }
                _ = &mut self.drain, if idle => return Ok(false),
            }
        }
    }

    /// Give back what a connection between requests does not need: its read buffers and
    /// output, and any request buffer a large head grew. They are taken again when the
    /// next request arrives; an idle keep-alive connection then costs a few hundred bytes
    /// besides its socket.
    fn release_buffers(&mut self, req: &mut Request) {
        self.client_buf.release();
        self.upstream_buf.clear();
        self.upstream_buf.release();
        // The output of a head or two is kept (a few hundred bytes), not a body's worth.
        self.out.clear();
        self.out.shrink_to(OUT_KEPT);
        req.trim();
    }

    /// The one writer of the router's own responses (400, 408, 413, 414, 431, 502, 503,
    /// 504 …): `body` as plain text, `Connection: close` when `close`, logged for `req`
    /// once one was read. True when the response was written.
    async fn send_error(
        &mut self,
        settings: &Settings,
        req: Option<&Request>,
        status: Status,
        body: &str,
        close: bool,
        node: &str,
    ) -> bool {
        self.out.clear();
        head::simple_response(status, "text/plain", body.as_bytes(), close, &mut self.out);
        let timeout = settings.config.timeouts.body;
        let sent = body::flush(&mut self.stream, &mut self.out, timeout).await.is_ok();
        self.out.clear();
        if let Some(req) = req {
            self.log(req, status.code(), body.len() as u64, node, None);
        }
        sent
    }

    /// Answer a request the router refuses, and close (after a framing error nothing
    /// on this connection can be trusted), draining what the client still sends.
    async fn reject(
        &mut self,
        settings: &Settings,
        rejection: &Rejection,
        req: Option<&Request>,
    ) -> Flow {
        let body = format!("{rejection}\n");
        self.send_error(settings, req, rejection.status(), &body, true, "").await;
        Flow::Linger
    }

    /// No node can take the request: 503, keeping the connection when no body is pending.
    async fn unavailable(&mut self, settings: &Settings, req: &Request) -> Flow {
        let close = req.framing != BodyFraming::Empty || !req.keep_alive;
        let status = Status::SERVICE_UNAVAILABLE;
        let sent =
            self.send_error(settings, Some(req), status, "no node available\n", close, "").await;
        self.last = Instant::now();
        if sent && !close {
            Flow::KeepAlive
        } else {
            Flow::Close
        }
    }

    /// A `PURGE`: answered by the router itself (`purge.rs`), never forwarded; a body
    /// it came with is not read, so the connection then closes.
    async fn purge(&mut self, settings: &Settings, req: &Request) -> Flow {
        let (status, body) = purge::answer(&self.cluster, self.peer.ip(), req).await;
        let close = req.framing != BodyFraming::Empty || !req.keep_alive;
        let sent = self.send_error(settings, Some(req), status, &body, close, "").await;
        self.last = Instant::now();
        if sent && !close {
            Flow::KeepAlive
        } else {
            Flow::Close
        }
    }

    /// An attempt at `node` failed before its response started and is not retried: say
    /// why (502, 504, or the client's own fault) and close.
    async fn attempt_failed(
        &mut self,
        settings: &Settings,
        req: &Request,
        fault: Fault,
        node: &str,
    ) -> Flow {
        let status = match (fault.status(), fault) {
            (Some(status), _) => status,
            (None, Fault::Client(Some(r))) => return self.reject(settings, &r, Some(req)).await,
            (None, _) => return Flow::Close,
        };
        let body = format!("{status}\n");
        self.send_error(settings, Some(req), status, &body, true, node).await;
        Flow::Close
    }

    /// One request: map, pick, relay, record. A GET or HEAD that fails before its response
    /// starts, or any request whose connect fails, is tried once more on another node.
    /// `offer`: the connection may be handed to the picked node instead.
    async fn exchange(&mut self, settings: &Settings, req: &Request, offer: bool) -> Flow {
        let limits = &settings.config.limits;
        if let BodyFraming::Length(n) = req.framing {
            if limits.max_body_bytes > 0 && n > limits.max_body_bytes {
                return self.reject(settings, &Rejection::BodyTooLarge, Some(req)).await;
            }
        }
        if req.framing == BodyFraming::Chunked {
            let first_bytes = self.client_buf.filled();
            if let Err(e) = body::precheck_chunked(first_bytes, limits.chunk_limits()) {
                return self.reject(settings, &Rejection::Chunked(e), Some(req)).await;
            }
        }
        if req.method == wire::PURGE_METHOD {
            return self.purge(settings, req).await;
        }
        if req.upgrade && !limits.upgrades {
            let refused = Rejection::NotImplemented("protocol upgrades (limits.upgrades)");
            return self.reject(settings, &refused, Some(req)).await;
        }
        let start = Instant::now();
        let target = match exchange::map_target(settings, req, &mut self.path) {
            Ok(t) => t,
            Err(rejection) => return self.reject(settings, &rejection, Some(req)).await,
        };
        if req.expect_continue && req.framing != BodyFraming::Empty {
            let continue_line = b"HTTP/1.1 100 Continue\r\n\r\n";
            if self.stream.write_all(continue_line).await.is_err() {
                return Flow::Close;
            }
        }

        let to_local = exchange::pinned_node(settings, req);
        let mut exclude = None;
        // Why the first node failed: the answer when no other node can take the retry.
        let mut first_failure: Option<(Fault, Arc<str>)> = None;
        let began = start;
        let mut start = start;
        loop {
            let Some(dispatch) = self.cluster.pick(&target, &self.path, exclude, start, to_local)
            else {
                return match first_failure.take() {
                    Some((fault, node)) => self.attempt_failed(settings, req, fault, &node).await,
                    None => self.unavailable(settings, req).await,
                };
            };
            // Boxed: rare, and its state would otherwise grow every request's future.
            if offer
                && exclude.is_none()
                && Box::pin(self.hand_off(settings, req, &dispatch, &target)).await
            {
                return Flow::HandedOff;
            }
            let result = match dispatch.upstream.server_name {
                None => self.attempts::<TcpStream>(settings, req, &dispatch, start).await,
                // Boxed: a TLS node's attempt holds a session, and a plain connection's
                // task would otherwise be sized for it too.
                Some(_) => {
                    let attempts =
                        self.attempts::<TlsStream<TcpStream>>(settings, req, &dispatch, start);
                    Box::pin(attempts).await
                }
            };
            let e = match result {
                Ok(done) => {
                    let (status, t) = (done.status, done.upstream_time);
                    exchange::completed(
                        &self.cluster,
                        &dispatch,
                        &target,
                        req,
                        status,
                        t,
                        began,
                        done.at,
                    );
                    self.last = done.at;
                    self.log(req, status, done.bytes, &dispatch.name, Some(t));
                    return done.flow;
                }
                Err(e) => e,
            };
            self.last = Instant::now();
            let node_at_fault =
                exchange::attempt_failed(&self.cluster, &dispatch, &target, &e, began, self.last);
            if let Some(status) = e.response_started {
                self.log(req, status, 0, &dispatch.name, None);
                return Flow::Close;
            }
            if exchange::retry(req, &e, node_at_fault, exclude.is_some()) {
                exclude = Some(dispatch.node);
                // The retry is an exchange of its own: its timeouts count from now, not
                // from when the first node was tried (or it would time out at once).
                start = self.last;
                first_failure = Some((e.fault, dispatch.name.clone()));
                continue;
            }
            return self.attempt_failed(settings, req, e.fault, &dispatch.name).await;
        }
    }

    /// Offer the connection to the picked node when it takes handed-off connections
    /// (`handoff.rs`): plain TCP, a first request without a body or an upgrade, the bytes
    /// read so far passed on as they came. True when the node took it; otherwise the
    /// buffer is as it was and the request is relayed.
    #[cold]
    async fn hand_off(
        &mut self,
        settings: &Settings,
        req: &Request,
        dispatch: &Dispatch,
        target: &Target,
    ) -> bool {
        let Some(socket) = dispatch.upstream.handoff.get() else { return false };
        if req.framing != BodyFraming::Empty || req.upgrade || req.expect_continue {
            return false;
        }
        let Some(client) = self.stream.tcp() else { return false };
        let rest = self.client_buf.len();
        self.client_buf.unconsume_all();
        let bytes = self.client_buf.filled();
        let wait = settings.config.handoff.answer;
        let counts = self.cluster.handoff_counts();
        if handoff::origin_form(bytes)
            && handoff::offer(&socket, client, self.peer, bytes, wait, counts).await
        {
            let how = Finished {
                outcome: Outcome::Ok,
                upstream_time: None,
                answered: None,
                at: Instant::now(),
            };
            self.cluster.finish(dispatch.node, target, &how);
            return true;
        }
        let head = self.client_buf.len() - rest;
        self.client_buf.consume_keeping(head);
        false
    }

    /// The attempts at the picked node over connections of kind `N`: one, and one more on
    /// a fresh connection when a pooled one turned out closed.
    async fn attempts<N: Pooled>(
        &mut self,
        settings: &Settings,
        req: &Request,
        dispatch: &Dispatch,
        start: Instant,
    ) -> Result<Done, AttemptError> {
        let result = self.attempt::<N>(settings, req, dispatch, false, start).await;
        if matches!(&result, Err(e) if matches!(e.fault, Fault::Stale)) {
            return self.attempt::<N>(settings, req, dispatch, true, start).await;
        }
        result
    }

    /// One attempt at the picked node: send the request, read the response head, relay
    /// the response. `fresh` skips the pool; `start` is when the request was dispatched.
    async fn attempt<N: Pooled>(
        &mut self,
        settings: &Settings,
        req: &Request,
        dispatch: &Dispatch,
        fresh: bool,
        start: Instant,
    ) -> Result<Done, AttemptError> {
        let mut sent = self.send_request::<N>(settings, req, dispatch, fresh, start).await?;
        let response = self.read_response_head(settings, req, dispatch, &mut sent).await?;
        if response.is_switch() {
            // Boxed: rare, and its state would otherwise grow every attempt's future.
            return Ok(Box::pin(self.tunnel(settings, sent)).await);
        }
        self.relay_response(settings, dispatch, sent, &response).await
    }

    /// After a `101` to an upgrade request (its head in `out`): tunnel the client and the
    /// node until either side closes, the tunnel idles or the router drains; the request
    /// stays in flight on its node all the while.
    async fn tunnel<N: Pooled>(&mut self, settings: &Settings, mut sent: Sent<N>) -> Done {
        let t = &settings.config.timeouts;
        let times = tunnel::TunnelTimes { idle: t.tunnel_idle, half_closed: t.body };
        let tunnelled = tunnel::run(
            &mut self.stream,
            &mut self.client_buf,
            &mut sent.upstream,
            &mut self.upstream_buf,
            &self.out,
            times,
            &mut self.drain,
        )
        .await;
        self.out.clear();
        let at = Instant::now();
        let upstream_time = at.saturating_duration_since(sent.at);
        Done { status: 101, bytes: tunnelled.to_client, upstream_time, at, flow: Flow::Close }
    }

    /// Take a pooled connection (or connect) and send the request head, then its body as
    /// it comes from the client.
    async fn send_request<N: Pooled>(
        &mut self,
        settings: &Settings,
        req: &Request,
        dispatch: &Dispatch,
        fresh: bool,
        start: Instant,
    ) -> Result<Sent<N>, AttemptError> {
        let cfg = &settings.config;
        let t = &cfg.timeouts;
        let (mut upstream, at, reused) =
            exchange::upstream_connection::<N>(settings, dispatch, fresh, start).await?;
        // A request that cannot be replayed never meets a stale connection silently.
        let lost = if reused && req.retryable() { Fault::Stale } else { Fault::Upstream };
        exchange::write_upstream_head(req, dispatch, &mut self.out);
        let plan = BodyPlan {
            framing: req.framing,
            chunked_out: true,
            chunk_limits: cfg.limits.chunk_limits(),
            timeout: t.body,
            max_bytes: cfg.limits.max_body_bytes,
            splice_from: cfg.tuning.splice_min_bytes,
            pipes: Some(&self.pipes),
        };
        // The node may answer before the body is all in (an early 413) and stop reading:
        // its answer is what the client gets, so a byte from the node ends the upload, and
        // so does a node that stops taking it (it may have answered before it closed).
        let has_body = req.framing != BodyFraming::Empty;
        let mut first = [0u8; 1];
        turn::after_this_turns_reads(cfg.tuning.write_batching).await;
        let relayed = if has_body {
            let (watch, mut to_node) = upstream.watch_while_writing(&mut first);
            let (client, out) = (&mut self.client_buf, &mut self.out);
            let upload = body::relay(&mut self.stream, client, &mut to_node, out, &plan);
            tokio::select! {
                biased;
                r = upload => Ok(r),
                taken = watch => Err(taken),
            }
        } else {
            // Only the head goes out: nothing to watch (and a TLS stream need not split).
            let out = &mut self.out;
            Ok(body::relay(&mut self.stream, &mut self.client_buf, &mut upstream, out, &plan).await)
        };
        let stale_if_silent = matches!(lost, Fault::Stale);
        let sent =
            |body_unfinished, first| Sent { upstream, at, stale_if_silent, body_unfinished, first };
        match relayed {
            Ok(Ok(_)) => Ok(sent(false, None)),
            Ok(Err(BodyError::Sink)) => Ok(sent(has_body, None)),
            Err(taken) => Ok(sent(has_body, (taken > 0).then_some(first[0]))),
            Ok(Err(BodyError::Source(e))) => {
                let rejection = match e {
                    SourceError::Chunk(c) => Some(Rejection::Chunked(c)),
                    SourceError::TooLarge => Some(Rejection::BodyTooLarge),
                    SourceError::Closed | SourceError::Timeout => None,
                };
                Err(AttemptError::before(Fault::Client(rejection)))
            }
        }
    }

    /// Read the node's response head into `out` (rewritten for the client), relaying any
    /// 1xx interim responses first.
    async fn read_response_head<N: Pooled>(
        &mut self,
        settings: &Settings,
        req: &Request,
        dispatch: &Dispatch,
        sent: &mut Sent<N>,
    ) -> Result<Response, AttemptError> {
        let cfg = &settings.config;
        let t = &cfg.timeouts;
        self.upstream_buf.clear();
        if let Some(byte) = sent.first {
            self.upstream_buf.put_back(byte);
        }
        self.out.clear();
        // The node's time runs from the end of the request: a bodyless one ended as it was
        // dispatched (no clock read needed), a body took as long as it took.
        let request_end = if req.framing == BodyFraming::Empty { sent.at } else { Instant::now() };
        let deadline = tokio::time::Instant::from_std(request_end) + t.upstream_response;
        self.upstream_timer.as_mut().reset(deadline);
        let mut response_started = None;
        loop {
            // Read the drain flag late: a response that ends after SIGTERM closes.
            let rules = ResponseRules {
                max_headers: cfg.limits.max_headers,
                via: &cfg.via,
                head_request: req.is_head(),
                client_keep_alive: req.keep_alive && !self.drain.raised() && !sent.body_unfinished,
                client_minor: req.minor,
                node_name: cfg.node_header.then_some(&*dispatch.name),
                router_field: settings.router_field.as_deref(),
                upgrade: req.upgrade,
            };
            match head::parse_response(self.upstream_buf.filled(), &rules, &mut self.out) {
                Ok(Some((len, response))) => {
                    self.upstream_buf.consume(len);
                    if !response.is_interim() {
                        return Ok(response);
                    }
                    response_started = Some(response.status);
                    body::flush(&mut self.stream, &mut self.out, t.body).await.map_err(|_| {
                        AttemptError { fault: Fault::Client(None), response_started }
                    })?;
                    continue;
                }
                Ok(None) => {}
                Err(_) => return Err(AttemptError { fault: Fault::Upstream, response_started }),
            }
            if self.upstream_buf.is_full() {
                return Err(AttemptError { fault: Fault::Upstream, response_started });
            }
            let nothing_yet = self.upstream_buf.is_empty();
            tokio::select! {
                biased;
                read = self.upstream_buf.fill(&mut sent.upstream) => match read {
                    Ok(n) if n > 0 => {}
                    _ => {
                        let stale = sent.stale_if_silent && nothing_yet && response_started.is_none();
                        let fault = if stale { Fault::Stale } else { Fault::Upstream };
                        return Err(AttemptError { fault, response_started });
                    }
                },
                _ = &mut self.upstream_timer => {
                    return Err(AttemptError { fault: Fault::UpstreamTimeout, response_started })
                }
                _ = dispatch.upstream.went_down() => {
                    return Err(AttemptError { fault: Fault::NodeDown, response_started })
                }
            }
        }
    }

    /// Stream the response body to the client (the head in `out` goes with its first
    /// bytes), then pool the upstream connection if it can be reused.
    async fn relay_response<N: Pooled>(
        &mut self,
        settings: &Settings,
        dispatch: &Dispatch,
        mut sent: Sent<N>,
        response: &Response,
    ) -> Result<Done, AttemptError> {
        let cfg = &settings.config;
        let plan = BodyPlan {
            framing: response.framing,
            chunked_out: response.client_body == ClientBody::Same,
            chunk_limits: cfg.limits.chunk_limits(),
            timeout: cfg.timeouts.body,
            max_bytes: 0,
            splice_from: cfg.tuning.splice_min_bytes,
            pipes: Some(&self.pipes),
        };
        turn::after_this_turns_reads(cfg.tuning.write_batching).await;
        let relayed = body::relay(
            &mut sent.upstream,
            &mut self.upstream_buf,
            &mut self.stream,
            &mut self.out,
            &plan,
        )
        .await;
        let bytes = match relayed {
            Ok(n) => n,
            Err(BodyError::Source(_)) => {
                let response_started = Some(response.status);
                return Err(AttemptError { fault: Fault::Upstream, response_started });
            }
            Err(BodyError::Sink) => {
                let response_started = Some(response.status);
                return Err(AttemptError { fault: Fault::Client(None), response_started });
            }
        };
        let at = Instant::now();
        if response.upstream_reusable && self.upstream_buf.is_empty() && !sent.body_unfinished {
            dispatch.upstream.put(sent.upstream, cfg.limits.pool_idle_per_node, at);
        }
        let flow = match (sent.body_unfinished, response.close_client) {
            (true, _) => Flow::Linger,
            (false, true) => Flow::Close,
            (false, false) => Flow::KeepAlive,
        };
        let upstream_time = at.saturating_duration_since(sent.at);
        Ok(Done { status: response.status, bytes, upstream_time, at, flow })
    }

    fn log(&self, req: &Request, status: u16, bytes: u64, node: &str, upstream: Option<Duration>) {
        let Some(log) = &self.access_log else { return };
        log.record(&AccessEntry {
            client: self.peer.ip(),
            method: &req.method,
            uri: &req.target,
            protocol: Protocol::Http1 { minor: req.minor },
            status,
            bytes,
            referer: req.referer(),
            user_agent: req.user_agent(),
            node,
            upstream,
        });
    }
}

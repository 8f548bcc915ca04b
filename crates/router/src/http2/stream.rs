//! One HTTP/2 stream: one request, walked through the same phases as an HTTP/1.1
//! request (`exchange`): its head is read into the same [`Request`] through the same
//! rules (hop-by-hop fields dropped, `:authority` as `Host`, `X-Forwarded-For` and `Via`
//! extended, the body limit), the policy picks a node, the request goes to it over the
//! node's HTTP/1.1 pool, and the response comes back as HTTP/2 with the same rewrite as
//! for an HTTP/1.1 client. Bodies stream both ways under HTTP/2 flow control: request
//! bytes are released to the client's window only once the node has taken them, and
//! response bytes are sent only as the client's window grants room.

use std::future::poll_fn;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use h2::server::SendResponse;
use h2::{RecvStream, SendStream};
use http1::chunked::{encode_chunk_head, CHUNK_END};
use http1::{BodyFraming, ChunkEvent, ChunkLimits, ChunkedDecoder, ParseError, Status};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;

use crate::access_log::{AccessEntry, Protocol};
use crate::buf::IoBuf;
use crate::cluster::{Dispatch, Settings};
use crate::exchange::{self, AttemptError, Fault};
use crate::head::{self, Rejection, Request, ResponseRules};
use crate::http2::response_head::{Http2Head, HOP_BY_HOP};
use crate::http2::{extended_connect, Shared};
use crate::purge;
use crate::tunnel;
use crate::upstream::Pooled;

/// Room made at once for the head on its way to the node (`Stream::out`): a usual head
/// fits, so that it is not grown to its size step by step.
const OUT_BYTES: usize = 768;

/// A response relayed whole.
struct Relayed {
    status: u16,
    bytes: u64,
    upstream_time: Duration,
    at: Instant,
}

/// Why a body did not go through.
enum BodyFault {
    /// The sending side failed (closed early, stalled, malformed, over the limit).
    Source(Option<Rejection>),
    /// The receiving side stopped taking it.
    Sink,
}

struct Stream {
    conn: Arc<Shared>,
    settings: Arc<Settings>,
    req: Request,
    body: RecvStream,
    respond: SendResponse<Bytes>,
    /// The request's normalised path.
    path: String,
    upstream_buf: IoBuf,
    /// Heads and request-body bytes on their way to the node.
    out: Vec<u8>,
}

/// Serve one stream of `conn`: the request's answer, whatever happens, is sent on it.
pub(crate) async fn serve(
    conn: Arc<Shared>,
    request: http::Request<RecvStream>,
    mut respond: SendResponse<Bytes>,
) {
    // Opened and cancelled before it was first driven (Rapid Reset): nothing to do.
    let cancelled = poll_fn(|cx| std::task::Poll::Ready(respond.poll_reset(cx).is_ready())).await;
    if cancelled {
        return;
    }
    let settings = conn.cluster.settings();
    let (parts, body) = request.into_parts();
    let mut req = Request::default();
    // An extended CONNECT's stream carries the tunnel, not a body.
    let has_body = !body.is_end_stream() && extended_connect::protocol(&parts).is_none();
    let read = read_request(&parts, has_body, &conn.client, &settings, &mut req);
    if let Err(rejection) = read {
        let status = rejection.status();
        answer(&mut respond, status, &format!("{rejection}\n"));
        return;
    }
    let limits = &settings.config.limits;
    let size = limits.buffer_bytes.max(limits.max_header_bytes + 1);
    let upstream_buf = IoBuf::pooled(size, conn.pools.bufs.clone());
    let mut stream = Stream {
        conn,
        settings,
        req,
        body,
        respond,
        path: String::new(),
        upstream_buf,
        out: Vec::with_capacity(OUT_BYTES),
    };
    stream.exchange().await;
}

/// The request as an HTTP/1.1 head, read into `req` by the HTTP/1.1 rules: `:authority`
/// becomes `Host`, split `Cookie` fields are joined again (RFC 9113 §8.2.3), a body
/// without `Content-Length` goes to the node chunked, and an extended CONNECT becomes an
/// HTTP/1.1 upgrade (`extended_connect`).
fn read_request(
    parts: &http::request::Parts,
    has_body: bool,
    client: &[u8],
    settings: &Settings,
    req: &mut Request,
) -> Result<(), Rejection> {
    if let Some(read) = read_plain_request(parts, has_body, client, settings, req) {
        return read;
    }
    let mut text = Vec::with_capacity(512);
    let switch_to = extended_connect::protocol(parts);
    let method = if switch_to.is_some() { "GET" } else { parts.method.as_str() };
    text.extend_from_slice(method.as_bytes());
    text.push(b' ');
    let target = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    text.extend_from_slice(if target.is_empty() { b"/" } else { target.as_bytes() });
    text.extend_from_slice(b" HTTP/1.1\r\n");
    let authority = parts.uri.authority();
    if let Some(a) = authority {
        push_field(&mut text, b"host", a.as_str().as_bytes());
    }
    let mut cookies: Vec<&[u8]> = Vec::new();
    for (name, value) in &parts.headers {
        if name == http::header::COOKIE {
            cookies.push(value.as_bytes());
        } else if !(authority.is_some() && name == http::header::HOST) {
            push_field(&mut text, name.as_str().as_bytes(), value.as_bytes());
        }
    }
    if !cookies.is_empty() {
        push_field(&mut text, b"cookie", &cookies.join(&b"; "[..]));
    }
    if has_body && !parts.headers.contains_key(http::header::CONTENT_LENGTH) {
        push_field(&mut text, b"transfer-encoding", b"chunked");
    }
    if let Some(protocol) = switch_to {
        extended_connect::upgrade_fields(protocol, |name, value| {
            push_field(&mut text, name, value)
        });
    }
    text.extend_from_slice(b"\r\n");
    let via = &settings.config.via;
    match head::parse_request(&text, client, &settings.head_limits, via, req)? {
        Some(_) => Ok(()),
        None => Err(Rejection::Head(ParseError::Malformed("incomplete request"))),
    }
}

/// `read_request` for the usual request (not an extended CONNECT, at most one `Cookie`
/// field, `:authority` given, within the limits) straight from h2's parsed fields, as
/// the same head: `None` for any other, which `read_request` writes out and parses.
fn read_plain_request(
    parts: &http::request::Parts,
    has_body: bool,
    client: &[u8],
    settings: &Settings,
    req: &mut Request,
) -> Option<Result<(), Rejection>> {
    let authority = parts.uri.authority()?.as_str();
    if parts.method == http::Method::CONNECT
        || parts.headers.get_all(http::header::COOKIE).iter().nth(1).is_some()
    {
        return None;
    }
    let method = parts.method.as_str();
    let target = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let target = if target.is_empty() { "/" } else { target };
    let chunked = has_body && !parts.headers.contains_key(http::header::CONTENT_LENGTH);
    let te: &[(&str, &[u8])] = if chunked { &[("transfer-encoding", b"chunked")] } else { &[] };
    let fields = || {
        let host = std::iter::once(("host", authority.as_bytes()));
        let rest = parts.headers.iter().filter(|(name, _)| *name != http::header::HOST);
        host.chain(rest.map(|(name, value)| (name.as_str(), value.as_bytes())))
            .chain(te.iter().copied())
    };
    // The length of the head as text: request line, fields, blank line.
    let line = method.len() + 1 + target.len() + b" HTTP/1.1\r\n".len();
    let head_bytes = fields().fold(line + 2, |n, (name, value)| n + name.len() + value.len() + 4);
    let (limits, via) = (&settings.head_limits, &settings.config.via);
    // A stream's request is new: room for its head as the node gets it (the fields, then
    // `X-Forwarded-For` and `Via`), rather than growing to it step by step.
    req.upstream_head.reserve(head_bytes + client.len() + via.len() + 64);
    req.target.reserve(target.len());
    head::read_parsed_request(method, target, fields, head_bytes, client, limits, via, req)
}

fn push_field(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    out.extend_from_slice(name);
    out.extend_from_slice(b": ");
    out.extend_from_slice(value);
    out.extend_from_slice(b"\r\n");
}

/// A response the router writes itself, as plain text.
fn answer(respond: &mut SendResponse<Bytes>, status: Status, body: &str) {
    let response = http::Response::builder()
        .status(status.code())
        .header(http::header::CONTENT_TYPE, "text/plain")
        .header(http::header::CONTENT_LENGTH, body.len())
        .body(());
    let Ok(response) = response else { return };
    if let Ok(mut send) = respond.send_response(response, body.is_empty()) {
        if !body.is_empty() {
            // Small enough to queue whole (within the stream's send buffer).
            let _ = send.send_data(Bytes::copy_from_slice(body.as_bytes()), true);
        }
    }
}

impl Stream {
    /// Map, pick, send, relay, record; a GET or HEAD that fails before its response
    /// starts, or any request whose connect fails, is tried once more on another node.
    async fn exchange(&mut self) {
        let settings = self.settings.clone();
        let limits = &settings.config.limits;
        if let BodyFraming::Length(n) = self.req.framing {
            if limits.max_body_bytes > 0 && n > limits.max_body_bytes {
                return self.reject(&Rejection::BodyTooLarge);
            }
        }
        if self.req.method == wire::PURGE_METHOD {
            let (status, body) =
                purge::answer(&self.conn.cluster, self.conn.peer.ip(), &self.req).await;
            return self.send_error(status, &body, "");
        }
        let start = Instant::now();
        let target = match exchange::map_target(&settings, &self.req, &mut self.path) {
            Ok(t) => t,
            Err(rejection) => return self.reject(&rejection),
        };
        let cluster = self.conn.cluster.clone();
        let to_local = exchange::pinned_node(&settings, &self.req);
        let mut exclude = None;
        let mut first_failure: Option<(Fault, Arc<str>)> = None;
        let began = start;
        let mut start = start;
        loop {
            let Some(dispatch) = cluster.pick(&target, &self.path, exclude, start, to_local) else {
                return match first_failure.take() {
                    Some((fault, node)) => self.attempt_failed(fault, &node),
                    None => self.send_error(Status::SERVICE_UNAVAILABLE, "no node available\n", ""),
                };
            };
            self.conn.counts.dispatched();
            let result = match dispatch.upstream.server_name {
                None => self.attempts::<TcpStream>(&dispatch, start).await,
                Some(_) => Box::pin(self.attempts::<TlsStream<TcpStream>>(&dispatch, start)).await,
            };
            let e = match result {
                Ok(done) => {
                    let (status, t) = (done.status, done.upstream_time);
                    exchange::completed(
                        &cluster, &dispatch, &target, &self.req, status, t, began, done.at,
                    );
                    self.log(status, done.bytes, &dispatch.name, Some(t));
                    return;
                }
                Err(e) => e,
            };
            let now = Instant::now();
            let node_at_fault =
                exchange::attempt_failed(&cluster, &dispatch, &target, &e, began, now);
            if let Some(status) = e.response_started {
                self.log(status, 0, &dispatch.name, None);
                // The response is cut: the client must not take it as complete.
                self.respond.send_reset(h2::Reason::INTERNAL_ERROR);
                return;
            }
            if exchange::retry(&self.req, &e, node_at_fault, exclude.is_some()) {
                exclude = Some(dispatch.node);
                start = now;
                first_failure = Some((e.fault, dispatch.name.clone()));
                continue;
            }
            return self.attempt_failed(e.fault, &dispatch.name);
        }
    }

    /// An attempt failed before its response started and is not retried: 502, 504, or
    /// the client's own fault.
    fn attempt_failed(&mut self, fault: Fault, node: &str) {
        match (fault.status(), fault) {
            (Some(status), _) => self.send_error(status, &format!("{status}\n"), node),
            (None, Fault::Client(Some(r))) => self.reject(&r),
            (None, _) => self.respond.send_reset(h2::Reason::CANCEL),
        }
    }

    fn reject(&mut self, rejection: &Rejection) {
        self.send_error(rejection.status(), &format!("{rejection}\n"), "");
    }

    /// The one writer of the router's own answers on a stream, logged.
    fn send_error(&mut self, status: Status, body: &str, node: &str) {
        answer(&mut self.respond, status, body);
        self.log(status.code(), body.len() as u64, node, None);
    }

    /// The attempts at the picked node: one, and one more on a fresh connection when a
    /// pooled one turned out closed.
    async fn attempts<N: Pooled>(
        &mut self,
        dispatch: &Dispatch,
        start: Instant,
    ) -> Result<Relayed, AttemptError> {
        let result = self.attempt::<N>(dispatch, false, start).await;
        if matches!(&result, Err(e) if matches!(e.fault, Fault::Stale)) {
            return self.attempt::<N>(dispatch, true, start).await;
        }
        result
    }

    /// One attempt: send the request (head, then the body as the client sends it), read
    /// the response head, relay the response.
    async fn attempt<N: Pooled>(
        &mut self,
        dispatch: &Dispatch,
        fresh: bool,
        start: Instant,
    ) -> Result<Relayed, AttemptError> {
        let settings = self.settings.clone();
        let cfg = &settings.config;
        let t = &cfg.timeouts;
        let (mut upstream, at, reused) =
            exchange::upstream_connection::<N>(&settings, dispatch, fresh, start).await?;
        let stale_if_silent = reused && self.req.retryable();
        exchange::write_upstream_head(&self.req, dispatch, &mut self.out);
        let has_body = self.req.framing != BodyFraming::Empty;
        // Head write errors show as a node that does not answer, below.
        let _ = tokio::time::timeout(t.body, upstream.write_all(&self.out)).await;
        self.out.clear();
        let mut body_unfinished = false;
        let mut first = [0u8; 1];
        let mut first_byte = None;
        if has_body {
            // A byte from the node (an early answer) ends the upload, as on HTTP/1.1.
            let chunked = self.req.framing == BodyFraming::Chunked;
            let max = cfg.limits.max_body_bytes;
            let taken = {
                let (watch, mut to_node) = upstream.watch_while_writing(&mut first);
                let (body, out) = (&mut self.body, &mut self.out);
                let upload = upload(body, &mut to_node, out, chunked, t.body, max);
                tokio::select! {
                    biased;
                    r = upload => match r {
                        Ok(()) => None,
                        Err(BodyFault::Sink) => Some(0),
                        Err(BodyFault::Source(rejection)) => {
                            return Err(AttemptError::before(Fault::Client(rejection)));
                        }
                    },
                    taken = watch => Some(taken),
                }
            };
            if let Some(taken) = taken {
                body_unfinished = true;
                first_byte = (taken > 0).then_some(first[0]);
            }
        }

        self.upstream_buf.clear();
        if let Some(byte) = first_byte {
            self.upstream_buf.put_back(byte);
        }
        let request_end = if has_body { Instant::now() } else { at };
        let deadline = tokio::time::Instant::from_std(request_end) + t.upstream_response;
        let (response, head) = loop {
            let rules = ResponseRules {
                max_headers: cfg.limits.max_headers,
                via: &cfg.via,
                head_request: self.req.is_head(),
                client_keep_alive: true,
                client_minor: 1,
                node_name: cfg.node_header.then_some(&*dispatch.name),
                router_field: settings.router_field.as_deref(),
                upgrade: self.req.upgrade,
            };
            let mut head = Http2Head::new();
            match head::rewrite_response(self.upstream_buf.filled(), &rules, &mut head) {
                Ok(Some((len, response))) => {
                    self.upstream_buf.consume(len);
                    if response.is_interim() {
                        // 103 Early Hints and the like go ahead of the final response.
                        if let Some(interim) = head.into_response() {
                            let _ = self.respond.send_informational(interim);
                        }
                        continue;
                    }
                    break (response, head.into_response());
                }
                Ok(None) => {}
                Err(_) => return Err(AttemptError::before(Fault::Upstream)),
            }
            if self.upstream_buf.is_full() {
                return Err(AttemptError::before(Fault::Upstream));
            }
            let nothing_yet = self.upstream_buf.is_empty();
            let (respond, buf) = (&mut self.respond, &mut self.upstream_buf);
            // The buffer is taken once the node answers, not for the whole wait: the
            // streams waiting on their nodes at once can outnumber the pool's spares.
            let read = async {
                if nothing_yet {
                    upstream.answered().await;
                }
                buf.fill(&mut upstream).await
            };
            tokio::select! {
                biased;
                read = read => match read {
                    Ok(n) if n > 0 => {}
                    _ => {
                        let stale = stale_if_silent && nothing_yet;
                        let fault = if stale { Fault::Stale } else { Fault::Upstream };
                        return Err(AttemptError::before(fault));
                    }
                },
                _ = tokio::time::sleep_until(deadline) => {
                    return Err(AttemptError::before(Fault::UpstreamTimeout));
                }
                _ = dispatch.upstream.went_down() => {
                    return Err(AttemptError::before(Fault::NodeDown));
                }
                // The client cancelled the stream: nobody waits for the answer.
                _ = poll_fn(|cx| respond.poll_reset(cx)) => {
                    return Err(AttemptError::before(Fault::Client(None)));
                }
            }
        };

        let status = response.status;
        if self.req.upgrade {
            if response.is_switch() {
                // Boxed: rare, and its state would otherwise grow every attempt's future.
                return Ok(Box::pin(self.tunnel(upstream, head, at)).await);
            }
            if (200..300).contains(&status) {
                // A success would tell the client its tunnel is open: the node did not
                // switch, so it is not.
                return Err(AttemptError::before(Fault::Upstream));
            }
        }
        let started = |fault| AttemptError { fault, response_started: Some(status) };
        let head = head.ok_or_else(|| AttemptError::before(Fault::Upstream))?;
        let empty = response.framing == BodyFraming::Empty;
        let mut send = self
            .respond
            .send_response(head, empty)
            .map_err(|_| AttemptError::before(Fault::Client(None)))?;
        let bytes = if empty {
            0
        } else {
            let relayed = relay_response(
                &mut upstream,
                &mut self.upstream_buf,
                &mut send,
                response.framing,
                cfg.limits.chunk_limits(),
                t.body,
            )
            .await;
            match relayed {
                Ok(n) => n,
                Err(BodyFault::Source(_)) => return Err(started(Fault::Upstream)),
                Err(BodyFault::Sink) => return Err(started(Fault::Client(None))),
            }
        };
        let done = Instant::now();
        if response.upstream_reusable && self.upstream_buf.is_empty() && !body_unfinished {
            dispatch.upstream.put(upstream, cfg.limits.pool_idle_per_node, done);
        }
        let upstream_time = done.saturating_duration_since(at);
        Ok(Relayed { status, bytes, upstream_time, at: done })
    }

    /// After the node's `101` to an extended CONNECT: `200` to the client, then the
    /// stream and the node connection tunnelled until either side closes, the tunnel
    /// idles or the router drains; the request stays in flight on its node all the while.
    async fn tunnel<N: Pooled>(
        &mut self,
        mut upstream: N,
        head: Option<http::Response<()>>,
        at: Instant,
    ) -> Relayed {
        let t = &self.settings.config.timeouts;
        let times = tunnel::TunnelTimes { idle: t.tunnel_idle, half_closed: t.body };
        let mut end = Relayed { status: 502, bytes: 0, upstream_time: Duration::ZERO, at };
        let Some(mut head) = head else {
            self.respond.send_reset(h2::Reason::INTERNAL_ERROR);
            return end;
        };
        *head.status_mut() = http::StatusCode::OK;
        for name in extended_connect::HANDSHAKE_ONLY {
            head.headers_mut().remove(name);
        }
        let Ok(send) = self.respond.send_response(head, false) else { return end };
        let mut client =
            extended_connect::StreamIo { recv: &mut self.body, send, pending: Bytes::new() };
        let mut nothing_early = IoBuf::new(0);
        let mut drain = self.conn.tunnels_drain.wait();
        let tunnelled = tunnel::run(
            &mut client,
            &mut nothing_early,
            &mut upstream,
            &mut self.upstream_buf,
            b"",
            times,
            &mut drain,
        )
        .await;
        end.status = 200;
        end.bytes = tunnelled.to_client;
        end.at = Instant::now();
        end.upstream_time = end.at.saturating_duration_since(at);
        end
    }

    fn log(&self, status: u16, bytes: u64, node: &str, upstream: Option<Duration>) {
        let Some(log) = &self.conn.access_log else { return };
        log.record(&AccessEntry {
            client: self.conn.peer.ip(),
            method: &self.req.method,
            uri: &self.req.target,
            protocol: Protocol::Http2,
            status,
            bytes,
            referer: self.req.referer(),
            user_agent: self.req.user_agent(),
            node,
            upstream,
        });
    }
}

/// Send the client's body to the node as it arrives (chunked when it came without a
/// length, its trailers then passed on), giving the client more window only for bytes
/// the node has taken.
async fn upload<W: AsyncWrite + Unpin>(
    body: &mut RecvStream,
    to_node: &mut W,
    out: &mut Vec<u8>,
    chunked: bool,
    timeout: Duration,
    max_bytes: u64,
) -> Result<(), BodyFault> {
    let mut total = 0u64;
    loop {
        let data = match tokio::time::timeout(timeout, body.data()).await {
            Ok(Some(Ok(data))) => data,
            Ok(None) => break,
            Ok(Some(Err(_))) | Err(_) => return Err(BodyFault::Source(None)),
        };
        total += data.len() as u64;
        if max_bytes > 0 && total > max_bytes {
            return Err(BodyFault::Source(Some(Rejection::BodyTooLarge)));
        }
        if data.is_empty() {
            continue;
        }
        out.clear();
        if chunked {
            encode_chunk_head(data.len(), out);
            out.extend_from_slice(&data);
            out.extend_from_slice(CHUNK_END);
        } else {
            out.extend_from_slice(&data);
        }
        write(to_node, out, timeout).await?;
        let _ = body.flow_control().release_capacity(data.len());
    }
    out.clear();
    if chunked {
        out.extend_from_slice(b"0\r\n");
        let trailers = tokio::time::timeout(timeout, body.trailers()).await;
        if let Ok(Ok(Some(fields))) = trailers {
            for (name, value) in &fields {
                if !HOP_BY_HOP.contains(&name.as_str()) {
                    push_field(out, name.as_str().as_bytes(), value.as_bytes());
                }
            }
        }
        out.extend_from_slice(b"\r\n");
        write(to_node, out, timeout).await?;
    }
    out.clear();
    Ok(())
}

async fn write<W: AsyncWrite + Unpin>(
    to: &mut W,
    bytes: &[u8],
    timeout: Duration,
) -> Result<(), BodyFault> {
    match tokio::time::timeout(timeout, to.write_all(bytes)).await {
        Ok(Ok(())) => Ok(()),
        _ => Err(BodyFault::Sink),
    }
}

/// Relay the node's response body (decoded from chunked) to the client's stream and end
/// it; the bytes relayed.
async fn relay_response<N: AsyncRead + Unpin>(
    upstream: &mut N,
    buf: &mut IoBuf,
    send: &mut SendStream<Bytes>,
    framing: BodyFraming,
    limits: ChunkLimits,
    timeout: Duration,
) -> Result<u64, BodyFault> {
    let mut sent = 0u64;
    match framing {
        BodyFraming::Empty => {}
        BodyFraming::Length(n) => {
            let mut left = n;
            while left > 0 {
                if buf.is_empty() && !refill(upstream, buf, timeout).await? {
                    return Err(BodyFault::Source(None));
                }
                let take = (buf.len() as u64).min(left) as usize;
                left -= take as u64;
                // The last bytes end the stream in their own DATA frame.
                send_bytes(send, &buf.filled()[..take], left == 0, timeout).await?;
                buf.consume(take);
                sent += take as u64;
            }
            if n > 0 {
                return Ok(sent);
            }
        }
        BodyFraming::UntilClose => loop {
            if buf.is_empty() && !refill(upstream, buf, timeout).await? {
                break;
            }
            let take = buf.len();
            send_bytes(send, buf.filled(), false, timeout).await?;
            buf.consume(take);
            sent += take as u64;
        },
        BodyFraming::Chunked => {
            let mut decoder = ChunkedDecoder::keeping_trailers(limits);
            loop {
                if buf.is_empty() && !refill(upstream, buf, timeout).await? {
                    return Err(BodyFault::Source(None));
                }
                let (used, event) =
                    decoder.feed(buf.filled()).map_err(|_| BodyFault::Source(None))?;
                match event {
                    ChunkEvent::Data { start, len } => {
                        let data = &buf.filled()[start..start + len];
                        send_bytes(send, data, false, timeout).await?;
                        sent += len as u64;
                        buf.consume(used);
                    }
                    ChunkEvent::NeedMore => buf.consume(used),
                    ChunkEvent::End => {
                        buf.consume(used);
                        if let Some(trailers) = trailer_fields(decoder.trailer_section()) {
                            send.send_trailers(trailers).map_err(|_| BodyFault::Sink)?;
                            return Ok(sent);
                        }
                        break;
                    }
                }
            }
        }
    }
    send.send_data(Bytes::new(), true).map_err(|_| BodyFault::Sink)?;
    Ok(sent)
}

/// The node's trailer fields (a chunked body's trailer section, already checked by the
/// decoder) as HTTP/2 trailers: none when there are none to pass, and never a field
/// that frames or routes a message (RFC 9110 §6.5.1) or belongs to one HTTP/1.1 hop.
fn trailer_fields(section: &[u8]) -> Option<http::HeaderMap> {
    const NOT_IN_TRAILERS: [&str; 6] =
        ["content-length", "host", "content-type", "content-encoding", "content-range", "trailer"];
    if section.is_empty() {
        return None;
    }
    let mut lines = section.to_vec();
    lines.extend_from_slice(b"\r\n");
    let mut fields = [httparse::EMPTY_HEADER; 32];
    let httparse::Status::Complete((_, parsed)) =
        httparse::parse_headers(&lines, &mut fields).ok()?
    else {
        return None;
    };
    let mut map = http::HeaderMap::new();
    for field in parsed {
        let Ok(name) = http::HeaderName::from_bytes(field.name.as_bytes()) else { continue };
        let banned =
            HOP_BY_HOP.contains(&name.as_str()) || NOT_IN_TRAILERS.contains(&name.as_str());
        if let (false, Ok(value)) = (banned, http::HeaderValue::from_bytes(field.value)) {
            map.append(name, value);
        }
    }
    (!map.is_empty()).then_some(map)
}

/// Read more of the node's response; false at its end.
async fn refill<N: AsyncRead + Unpin>(
    upstream: &mut N,
    buf: &mut IoBuf,
    timeout: Duration,
) -> Result<bool, BodyFault> {
    match tokio::time::timeout(timeout, buf.fill(upstream)).await {
        Ok(Ok(0)) => Ok(false),
        Ok(Ok(_)) => Ok(true),
        Ok(Err(_)) | Err(_) => Err(BodyFault::Source(None)),
    }
}

/// Send `data` on the stream as the client's window grants room: never more than the
/// stream is given, so nothing piles up behind a slow reader. With `last`, the frame
/// carrying its final bytes ends the stream (no empty frame after it).
async fn send_bytes(
    send: &mut SendStream<Bytes>,
    mut data: &[u8],
    last: bool,
    timeout: Duration,
) -> Result<(), BodyFault> {
    while !data.is_empty() {
        send.reserve_capacity(data.len());
        let mut room = send.capacity();
        if room == 0 {
            let granted = tokio::time::timeout(timeout, poll_fn(|cx| send.poll_capacity(cx))).await;
            room = match granted {
                Ok(Some(Ok(n))) => n,
                _ => return Err(BodyFault::Sink),
            };
        }
        let n = room.min(data.len());
        if n == 0 {
            continue;
        }
        let piece = Bytes::copy_from_slice(&data[..n]);
        data = &data[n..];
        let end = last && data.is_empty();
        send.send_data(piece, end).map_err(|_| BodyFault::Sink)?;
    }
    Ok(())
}

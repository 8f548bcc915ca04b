//! One client connection: read, answer every complete (pipelined) request in order, batch
//! the answers into one write, and enforce the header, idle and send timeouts.

use crate::access_log::LogEntry;
use crate::disk;
use crate::forward::{forward, Forwarded};
use crate::hand_on::{Elsewhere, SharedHandOn};
use crate::later_requests::LaterRequests;
use crate::reply::{error, FileStream, Reply, ReplyCtx};
use crate::request_body::RequestBody;
use crate::respond::respond;
use crate::socket::{read_some, write_head_and_body};
use crate::state::NodeState;
use crate::stats::{Counters, Reading};
use http1::framing::request_framing;
use http1::{parse_head, BodyFraming, ChunkEvent, ChunkLimits, ChunkedDecoder, FramingError};
use http1::{Method, RequestHead, Status, Version};
use std::io;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};
use tokio::io::{AsyncReadExt, AsyncWriteExt, Interest};
use tokio::net::TcpStream;
use tokio::time::timeout_at;

/// Answers to pipelined requests are batched until this many bytes, then written.
const FLUSH_AT: usize = 64 * 1024;
/// Bytes of free buffer ensured before each read. Small on purpose: with 10,000 idle
/// keep-alive connections, per-connection buffers are what a node's memory is made of.
const READ_CHUNK: usize = 4 * 1024;
/// Large bodies go out in pieces of this size, each checked for page-cache residency.
const STREAM_CHUNK: usize = 256 * 1024;

/// Where a later request on an adopted connection is served.
enum Later {
    /// Here, as any request.
    Here,
    /// Here, with the response of the node it belongs to.
    Forward(Box<dyn Elsewhere>),
    /// By the node it belongs to, which took the connection.
    Taken,
}

/// How reading a request body ended.
enum BodyEnd {
    Done,
    Refused(Status),
    TimedOut,
    Closed,
}

struct Conn {
    node: Rc<NodeState>,
    stream: TcpStream,
    peer: SocketAddr,
    inbuf: Vec<u8>,
    /// Start of the unparsed bytes in `inbuf`.
    pos: usize,
    out: Vec<u8>,
    /// On an adopted connection whose first request has been answered, where later
    /// requests belong (`hand_on.rs`); none on every other connection.
    hand_on: Option<SharedHandOn>,
    /// The adopted connection's [`Conn::hand_on`], until its first request is answered.
    hand_on_later: Option<SharedHandOn>,
    /// Handed over by a router or another node: every byte on it is the client's, so its
    /// requests lose the fields only the cluster's own processes may send
    /// ([`wire::INTERNAL_FIELDS`]) as they are read.
    adopted: bool,
}

/// Keeps `in_flight` right on every exit path, errors included.
struct InFlight<'a>(&'a Counters);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        Counters::sub(&self.0.in_flight, 1);
    }
}

/// Serve one accepted connection until it closes.
pub async fn serve_connection(node: Rc<NodeState>, stream: TcpStream, peer: SocketAddr) {
    serve(node, stream, peer, Vec::new(), false).await;
}

/// Serve a connection whose first bytes, `read`, were read by someone else (a router that
/// handed it over), as if they had just arrived. Its first request is served here; a
/// later one that belongs to another node is handed on to it when the node has a
/// [`crate::HandOn`]. Every byte on it is the client's: the fields only the cluster's own
/// processes send ([`wire::INTERNAL_FIELDS`]) are dropped from each of its requests.
pub async fn serve_connection_from(
    node: Rc<NodeState>,
    stream: TcpStream,
    peer: SocketAddr,
    read: Vec<u8>,
) {
    serve(node, stream, peer, read, true).await;
}

async fn serve(
    node: Rc<NodeState>,
    stream: TcpStream,
    peer: SocketAddr,
    read: Vec<u8>,
    adopted: bool,
) {
    Counters::add(&node.counters.open_connections, 1);
    let mut conn = Conn {
        node: Rc::clone(&node),
        stream,
        peer,
        inbuf: read,
        pos: 0,
        out: Vec::new(),
        hand_on: None,
        hand_on_later: None,
        adopted,
    };
    if !conn.inbuf.is_empty() {
        // Served here whatever the placement says: nothing to ask.
        let asks = |h: &&crate::HandoffConfig| h.later != LaterRequests::Here;
        conn.hand_on_later =
            node.config.handoff.as_ref().filter(asks).and_then(|h| h.hand_on.clone());
    }
    // An I/O error only ends this connection; there is nobody to tell.
    let _ = conn.run().await;
    Counters::sub(&node.counters.open_connections, 1);
}

impl Conn {
    async fn run(&mut self) -> io::Result<()> {
        let header_timeout = self.node.config.header_timeout;
        let mut shutdown = self.node.shutting_down.clone();
        // One timer for the whole connection, moved to each wait's deadline: a moved timer
        // costs tokio an atomic update, a fresh one a trip through its timer wheel.
        let idle_timeout = self.node.config.idle_timeout;
        let mut timer = Box::pin(tokio::time::sleep(idle_timeout));
        // When the first byte of the request being read arrived.
        let mut request_start: Option<Instant> = None;
        loop {
            while self.pos < self.inbuf.len() {
                let started = *request_start.get_or_insert_with(Instant::now);
                // The node this request is fetched from, when it belongs to another.
                let mut forward_to = None;
                let head = match parse_head(&self.inbuf[self.pos..], &self.node.config.limits) {
                    Ok(None) => break,
                    Ok(Some((mut head, n))) => {
                        if self.adopted {
                            head.headers.retain(|h| !wire::is_internal_field(&h.name));
                        }
                        if self.hand_on.is_some() {
                            match Box::pin(self.later(&head)).await? {
                                Later::Taken => return Ok(()),
                                Later::Forward(to) => forward_to = Some(to),
                                Later::Here => {}
                            }
                        }
                        self.pos += n;
                        head
                    }
                    Err(e) => return self.refuse(e.status()).await,
                };
                let framing = match body_framing(&head, self.node.config.max_body_bytes) {
                    Ok(framing) => framing,
                    Err(status) => return self.refuse(status).await,
                };
                // A caching node passes every method but GET and HEAD to its origin, body
                // and all, read as it is sent; any other body is read and dropped first.
                let passed = self.node.origin.is_some()
                    && !matches!(head.method, Method::Get | Method::Head);
                let end = match framing {
                    _ if passed => BodyEnd::Done,
                    BodyFraming::Empty | BodyFraming::Length(0) => BodyEnd::Done,
                    // Boxed: reading a body is rare, and kept inline its future would make
                    // every connection larger.
                    framing => Box::pin(self.skip_body(framing, started + header_timeout)).await?,
                };
                match end {
                    BodyEnd::Done => {}
                    BodyEnd::Refused(status) => return self.refuse(status).await,
                    BodyEnd::TimedOut => return self.time_out().await,
                    BodyEnd::Closed => return Ok(()),
                }
                request_start = None;
                if self.answer(&head, passed.then_some(framing), forward_to).await? {
                    return self.flush().await;
                }
                if self.hand_on_later.is_some() {
                    self.hand_on = self.hand_on_later.take();
                }
                if self.out.len() >= FLUSH_AT {
                    self.flush().await?;
                }
            }
            self.flush().await?;
            self.inbuf.drain(..self.pos);
            self.pos = 0;
            let idle = self.inbuf.is_empty();
            if idle {
                self.node.buffers.give(std::mem::take(&mut self.inbuf));
            }
            if idle && *shutdown.borrow() {
                return Ok(());
            }
            let deadline = match request_start {
                Some(start) if !idle => start + header_timeout,
                _ => Instant::now() + self.node.config.idle_timeout,
            };
            timer.as_mut().reset(deadline.into());
            let node = &self.node;
            let read = tokio::select! {
                r = read_some(&self.stream, &mut self.inbuf, |b| reserve_read(node, b)) => Ok(r),
                () = timer.as_mut() => Err(()),
                changed = shutdown.changed(), if idle => {
                    if changed.is_err() {
                        return Ok(());
                    }
                    continue;
                }
            };
            match read {
                Err(()) if idle => return Ok(()),
                Err(()) => return self.time_out().await,
                Ok(Ok(0)) => return Ok(()),
                Ok(Ok(_)) => {
                    if idle {
                        request_start = Some(Instant::now());
                    }
                }
                Ok(Err(e)) => return Err(e),
            }
        }
    }

    /// Where the request `head` (at `pos`) on an adopted connection is served, when it
    /// belongs to another node: forwarded to it, or the connection offered to it from the
    /// first byte of the request on, once every earlier answer is written (`Taken` when
    /// that node took it: the caller then lets its copy go untouched). A request with a
    /// body, an upgrade or a target that is not origin-form stays here, and so does a
    /// HEAD that would be forwarded.
    #[cold]
    async fn later(&mut self, head: &RequestHead) -> io::Result<Later> {
        let Some(SharedHandOn(hand_on)) = self.hand_on.clone() else { return Ok(Later::Here) };
        let how = self.node.config.handoff.as_ref().map_or(LaterRequests::Here, |h| h.later);
        let method = match how {
            // Not asked: `hand_on` is never set for it (`serve_connection_from`).
            LaterRequests::Here => false,
            LaterRequests::Forward => head.method == Method::Get,
            LaterRequests::HandOn => matches!(head.method, Method::Get | Method::Head),
        };
        let plain = method
            && head.target.starts_with('/')
            && head.header("content-length").is_none()
            && head.header("transfer-encoding").is_none()
            && head.header("upgrade").is_none();
        if !plain {
            return Ok(Later::Here);
        }
        let host = head.header("host");
        let Some(elsewhere) = hand_on.elsewhere(&head.target, host) else {
            return Ok(Later::Here);
        };
        if how == LaterRequests::Forward {
            return Ok(Later::Forward(elsewhere));
        }
        // Earlier answers go first: the next node writes after them.
        self.flush().await?;
        let taken = elsewhere.offer(&self.stream, self.peer, &self.inbuf[self.pos..]).await;
        Ok(if taken { Later::Taken } else { Later::Here })
    }

    /// Answer one request, reading its body framed as `body` while answering when it is
    /// passed on, with the response of the node `forward_to` names when it belongs to
    /// another; true when the connection must close afterwards.
    async fn answer(
        &mut self,
        head: &RequestHead,
        body: Option<BodyFraming>,
        forward_to: Option<Box<dyn Elsewhere>>,
    ) -> io::Result<bool> {
        let node = Rc::clone(&self.node);
        let began = Instant::now();
        Counters::add(&node.counters.requests, 1);
        Counters::add(&node.counters.in_flight, 1);
        let _in_flight = InFlight(&node.counters);
        // Boxed: the response future is deep (translation, disk, dynamic content) and only
        // lives while a request does; kept inline it would make every idle connection as
        // large as the busiest request path.
        self.ensure_out();
        // A body left unread on the connection: close after the answer, lingering so the
        // client's unread input does not reset the answer away.
        let mut body_left = false;
        let forwarded = match forward_to {
            Some(to) => Box::pin(forward(&node, head, to.as_ref(), &mut self.out)).await,
            None => None,
        };
        // Held until the forwarded body is sent: it counts against the owner's bound.
        let (forwarded, _forwarding) = match forwarded {
            Some(Forwarded { reply, busy }) => (Some(reply), Some(busy)),
            None => (None, None),
        };
        let mut reply = match (forwarded, body) {
            (Some(reply), _) => reply,
            (None, None) => {
                Box::pin(respond(&node, head, None, self.peer.ip(), &mut self.out)).await
            }
            (None, Some(framing)) => {
                let cfg = &node.config;
                let expect = head.version == Version::Http11
                    && head
                        .header("expect")
                        .is_some_and(|v| v.trim_ascii().eq_ignore_ascii_case(b"100-continue"));
                let (max, wait) = (cfg.max_body_bytes, cfg.header_timeout);
                let (stream, inbuf, pos) = (&self.stream, &mut self.inbuf, &mut self.pos);
                let mut body = RequestBody::new(stream, inbuf, pos, framing, max, wait, expect);
                let peer = self.peer.ip();
                let mut reply =
                    Box::pin(respond(&node, head, Some(&mut body), peer, &mut self.out)).await;
                // What the origin did not read is read and dropped, so the next request
                // starts where it should; if that fails, the connection ends.
                if !Box::pin(body.skip_rest()).await {
                    reply.close = true;
                    body_left = true;
                }
                reply
            }
        };
        if let Some(body) = &reply.shared {
            if self.pos < self.inbuf.len() {
                // More pipelined requests are waiting: batch their answers into one write.
                self.out.extend_from_slice(body.bytes());
            } else {
                self.flush_with(body.bytes()).await?;
            }
        }
        if let Some(stream) = &reply.stream {
            self.flush().await?;
            Box::pin(self.send_file(stream)).await?;
        }
        if let Some(relay) = reply.relay.take() {
            self.flush().await?;
            let limit = node.config.send_timeout;
            reply.body_bytes = Box::pin(relay.send(&mut self.stream, limit)).await?;
        }
        self.account(Some(head), &reply);
        node.counters.request_duration.borrow_mut().observe(began.elapsed());
        if body_left {
            self.flush().await?;
            self.linger().await?;
        }
        Ok(reply.close)
    }

    fn account(&self, head: Option<&RequestHead>, reply: &Reply) {
        let c = &self.node.counters;
        c.count_status(reply.status.code());
        Counters::add(&c.bytes_sent, reply.body_bytes);
        let Some(log) = &self.node.log else {
            return;
        };
        let request_line = head
            .map(|h| format!("{} {} {}", h.method.as_str(), h.target, h.version.as_str()))
            .unwrap_or_default();
        let unix_secs =
            SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64);
        let entry = LogEntry {
            peer: self.peer.ip(),
            unix_secs,
            request_line: &request_line,
            status: reply.status.code(),
            body_bytes: reply.body_bytes,
            referer: head.and_then(|h| h.header("referer")),
            user_agent: head.and_then(|h| h.header("user-agent")),
        };
        log.borrow_mut().record(&entry);
    }

    /// Answer a request that cannot be served, then close.
    async fn refuse(&mut self, status: Status) -> io::Result<()> {
        self.ensure_out();
        let reply = error(&self.node, &mut self.out, status, &ReplyCtx::closing(), &[]);
        self.account(None, &reply);
        self.flush().await?;
        self.linger().await
    }

    /// Lingering close: send FIN, then read and drop what the client is still sending for
    /// a bounded time. Closing with unread input would send a reset, and a reset can
    /// destroy the error answer before the client reads it.
    async fn linger(&mut self) -> io::Result<()> {
        const MAX_DRAIN: usize = 256 * 1024;
        self.stream.shutdown().await?;
        let deadline = Instant::now() + self.node.config.linger_timeout;
        let mut drained = 0;
        let mut scratch = [0u8; 4096];
        while drained < MAX_DRAIN {
            match timeout_at(deadline.into(), self.stream.read(&mut scratch)).await {
                Ok(Ok(n)) if n > 0 => drained += n,
                _ => break,
            }
        }
        Ok(())
    }

    async fn time_out(&mut self) -> io::Result<()> {
        Counters::add(&self.node.counters.header_timeouts, 1);
        self.refuse(Status::REQUEST_TIMEOUT).await
    }

    /// Consume a request body framed as [`body_framing`] allowed (a body the node does not
    /// pass to an origin is read and dropped), within the size limit and the request deadline.
    async fn skip_body(&mut self, framing: BodyFraming, deadline: Instant) -> io::Result<BodyEnd> {
        let max = self.node.config.max_body_bytes;
        match framing {
            // Refused by `body_framing` before this is called.
            BodyFraming::Empty | BodyFraming::UntilClose => Ok(BodyEnd::Done),
            BodyFraming::Length(n) => {
                let n = n as usize;
                while self.inbuf.len() - self.pos < n {
                    if let Some(end) = self.read_before(deadline).await? {
                        return Ok(end);
                    }
                }
                self.pos += n;
                Ok(BodyEnd::Done)
            }
            BodyFraming::Chunked => {
                let mut decoder = ChunkedDecoder::new(ChunkLimits::default());
                let mut total = 0u64;
                loop {
                    let (used, event) = match decoder.feed(&self.inbuf[self.pos..]) {
                        Ok(r) => r,
                        Err(_) => return Ok(BodyEnd::Refused(Status::BAD_REQUEST)),
                    };
                    self.pos += used;
                    match event {
                        ChunkEvent::End => return Ok(BodyEnd::Done),
                        ChunkEvent::Data { len, .. } => {
                            total += len as u64;
                            if total > max {
                                return Ok(BodyEnd::Refused(Status::CONTENT_TOO_LARGE));
                            }
                        }
                        ChunkEvent::NeedMore => {
                            if let Some(end) = self.read_before(deadline).await? {
                                return Ok(end);
                            }
                        }
                    }
                }
            }
        }
    }

    /// Read more request bytes before `deadline`; `Some` says why reading ended instead.
    async fn read_before(&mut self, deadline: Instant) -> io::Result<Option<BodyEnd>> {
        if self.pos == self.inbuf.len() {
            self.inbuf.clear();
            self.pos = 0;
        }
        let node = &self.node;
        let read = read_some(&self.stream, &mut self.inbuf, |b| reserve_read(node, b));
        match timeout_at(deadline.into(), read).await {
            Err(_) => Ok(Some(BodyEnd::TimedOut)),
            Ok(Ok(0)) => Ok(Some(BodyEnd::Closed)),
            Ok(Ok(_)) => Ok(None),
            Ok(Err(e)) => Err(e),
        }
    }

    /// Give `out` a recycled buffer if it has none (it has none between flushes).
    fn ensure_out(&mut self) {
        if self.out.capacity() == 0 {
            self.out = self.node.buffers.take();
        }
    }

    async fn flush(&mut self) -> io::Result<()> {
        self.flush_with(&[]).await
    }

    /// Write the batched answers in `out`, then `body` (a cached body, sent from where it
    /// is cached instead of being copied into `out`).
    async fn flush_with(&mut self, body: &[u8]) -> io::Result<()> {
        if self.out.is_empty() && body.is_empty() {
            return Ok(());
        }
        let limit = self.node.config.send_timeout;
        let res = write_head_and_body(&self.stream, &self.out, body, limit).await;
        self.node.buffers.give(std::mem::take(&mut self.out));
        res
    }

    /// Stream a large body: ranges the page cache holds go out with sendfile from the
    /// loop; anything else is read by a helper (O_DIRECT under `--direct-io`) and written.
    async fn send_file(&mut self, s: &FileStream) -> io::Result<()> {
        let node = Rc::clone(&self.node);
        let _reading = Reading::start(&node.counters, s.len);
        let direct_io = self.node.config.direct_io;
        let send_timeout = self.node.config.send_timeout;
        let fd = self.stream.as_raw_fd();
        let (mut off, end) = (s.start, s.start + s.len);
        while off < end {
            let chunk = (end - off).min(STREAM_CHUNK as u64) as usize;
            let deadline = tokio::time::Instant::from(Instant::now() + send_timeout);
            if !direct_io && disk::resident(&s.meta.file, off, chunk) {
                let stop = off + chunk as u64;
                while off < stop {
                    timeout_at(deadline, self.stream.writable())
                        .await
                        .map_err(|_| io::Error::from(io::ErrorKind::TimedOut))??;
                    let want = (stop - off) as usize;
                    let sent = self.stream.try_io(Interest::WRITABLE, || {
                        disk::sendfile(fd, &s.meta.file, &mut off, want)
                    });
                    match sent {
                        Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                        Ok(_) => {}
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                        Err(e) => return Err(e),
                    }
                }
            } else {
                let meta = Arc::clone(&s.meta);
                let at = off;
                let data = self
                    .node
                    .disk
                    .run(move || disk::read_miss(&meta, direct_io, at, chunk))
                    .await
                    .map_err(|e| io::Error::other(e.to_string()))??;
                timeout_at(deadline, self.stream.write_all(&data))
                    .await
                    .map_err(|_| io::Error::from(io::ErrorKind::TimedOut))??;
                off += chunk as u64;
            }
        }
        Ok(())
    }
}

/// How the body of `head` is framed, or the status that refuses it: codings the node does
/// not know, framing that is ambiguous, or a declared length above `max`.
fn body_framing(head: &RequestHead, max: u64) -> Result<BodyFraming, Status> {
    let minor = if head.version == Version::Http10 { 0 } else { 1 };
    let fields = head.headers.iter().map(|h| (h.name.as_str(), h.value.as_slice()));
    match request_framing(fields, minor) {
        Err(FramingError::UnsupportedCoding) => Err(Status::NOT_IMPLEMENTED),
        Err(_) | Ok(BodyFraming::UntilClose) => Err(Status::BAD_REQUEST),
        Ok(BodyFraming::Length(n)) if n > max => Err(Status::CONTENT_TOO_LARGE),
        Ok(framing) => Ok(framing),
    }
}

/// Room for one read, taken only once the socket is readable: an idle connection waits
/// without holding a buffer.
fn reserve_read(node: &NodeState, buf: &mut Vec<u8>) {
    if buf.capacity() == 0 {
        *buf = node.buffers.take();
    }
    if buf.capacity() - buf.len() < READ_CHUNK {
        buf.reserve(READ_CHUNK);
    }
}

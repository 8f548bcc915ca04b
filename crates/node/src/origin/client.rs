//! The origin client: HTTP/1.1 over pooled keep-alive connections, origins tried in order,
//! every wait bounded. It sends one request (a GET of the cache's own, or a client's
//! request of any method with its body streamed from the client) and returns the response
//! head with a reader for the body (`body.rs`), which hands the connection back to the
//! pool once the body has been read to its end. A connection goes back only after a
//! request sent whole and a response read whole: a failure on the way drops it.

use super::body::OriginBody;
use super::config::{OriginConfig, OriginUrl};
use super::conn::{OriginConn, OriginCounters, Shared, READ_CHUNK};
use super::error::OriginError;
use super::fields::Field;
use crate::request_body::RequestBody;
use http1::chunked::{encode_chunk_head, CHUNK_END, LAST_CHUNK};
use http1::framing::response_framing;
use http1::{HeaderSlots, ResponseHeadError, ResponseLimits};
use std::net::SocketAddr;
use std::rc::Rc;
use std::time::Instant;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::timeout_at;

/// A response head from the origin.
#[derive(Clone, Debug)]
pub struct OriginHead {
    pub status: u16,
    pub fields: Vec<Field>,
    /// The interim responses (1xx but 100 and 101: 102 Processing, 103 Early Hints) that
    /// came before this one, as written to a client, for the client whose request fetched
    /// it (RFC 9110 §15.2: passed on, never stored). Bounded by the head size limit.
    pub interim: Vec<u8>,
}

/// The origin client of one node's event loop.
pub struct OriginClient {
    origins: Vec<OriginUrl>,
    /// The configured bounds on a response head (`max_head_bytes`, `max_head_fields`).
    limits: ResponseLimits,
    shared: Rc<Shared>,
}

/// Why one attempt failed, and whether a fresh connection may try again.
struct Attempt {
    error: OriginError,
    /// The connection was a pooled one that failed before any response byte: the
    /// origin had closed it while idle, so the request was never seen.
    stale_pooled: bool,
}

impl OriginClient {
    pub fn new(cfg: &OriginConfig) -> OriginClient {
        let shared = Shared::new(cfg);
        OriginClient {
            origins: cfg.origins.clone(),
            limits: ResponseLimits {
                max_head_bytes: cfg.max_head_bytes,
                max_fields: cfg.max_head_fields,
            },
            shared: Rc::new(shared),
        }
    }

    /// A client of another node of the cluster, listening at `addr` (peer fills,
    /// forwarded requests), with `cfg`'s limits; `None` for an address no URL names.
    pub fn for_node(addr: SocketAddr, cfg: &OriginConfig) -> Option<OriginClient> {
        let url = OriginUrl::parse(&format!("http://{addr}")).ok()?;
        Some(OriginClient::new(&OriginConfig { origins: vec![url], ..cfg.clone() }))
    }

    pub fn counters(&self) -> &OriginCounters {
        &self.shared.counters
    }

    /// GET `target` (origin-form, `/path?query`) on the site `host` (`None`: the origin's
    /// own authority) with `fields` from the origins in order, the first that answers
    /// winning; the whole exchange up to the response head is bounded by the configured
    /// timeout.
    pub async fn get(
        &self,
        target: &str,
        host: Option<&[u8]>,
        fields: &[(&str, &[u8])],
    ) -> Result<(OriginHead, OriginBody), OriginError> {
        let c = &self.shared.counters;
        OriginCounters::add(&c.fetches, 1);
        let deadline = Instant::now() + self.shared.timeout;
        let mut last = None;
        for (i, origin) in self.origins.iter().enumerate() {
            let request = render_request(origin, "GET", (target, host), fields, None);
            match self.try_origin(i, &request, deadline).await {
                Ok(r) => return Ok(r),
                Err(e) => {
                    let timed_out = matches!(e, OriginError::Timeout { .. });
                    last = Some(e);
                    if timed_out {
                        break;
                    }
                }
            }
        }
        OriginCounters::add(&c.errors, 1);
        Err(last.unwrap_or_else(|| OriginError::Protocol {
            origin: String::new(),
            what: "no origin configured".into(),
        }))
    }

    /// Send a client's `method` request for `target` on the site `host` (`None`: the
    /// origin's own authority) with `fields` and its `body`,
    /// streamed piece by piece (re-framed: `Content-Length` when the client declared one,
    /// else chunked). Always on a fresh connection: a request that may not be idempotent,
    /// or whose body is read as it is sent, cannot be replayed, so it is not risked on a
    /// pooled connection the origin may have closed meanwhile. The next origin is tried
    /// only when one cannot be reached (nothing was sent). Each wait for body bytes is
    /// bounded by the client's timeout, each write and the wait for the head by the origin
    /// timeout.
    pub async fn send(
        &self,
        method: &str,
        (target, host): (&str, Option<&[u8]>),
        fields: &[(&str, &[u8])],
        mut body: Option<&mut RequestBody<'_>>,
    ) -> Result<(OriginHead, OriginBody), OriginError> {
        let c = &self.shared.counters;
        OriginCounters::add(&c.fetches, 1);
        let declared = body.as_ref().map_or(Some(0), |b| b.declared_len());
        let framing = match declared {
            Some(0) if !matches!(method, "POST" | "PUT" | "PATCH") => None,
            Some(n) => Some(format!("Content-Length: {n}")),
            None => Some("Transfer-Encoding: chunked".to_string()),
        };
        let mut last = None;
        for (i, origin) in self.origins.iter().enumerate() {
            let deadline = Instant::now() + self.shared.timeout;
            let mut conn = match self.connect(i, deadline).await {
                Ok(conn) => conn,
                Err(e) => {
                    last = Some(e);
                    continue;
                }
            };
            let request =
                render_request(origin, method, (target, host), fields, framing.as_deref());
            let sent = self.write_request(&mut conn, &request, body.as_deref_mut(), declared).await;
            if let Err(e) = sent {
                if !matches!(e, OriginError::Client(_)) {
                    OriginCounters::add(&c.errors, 1);
                }
                return Err(e);
            }
            let deadline = Instant::now() + self.shared.timeout;
            let got = self.exchange(conn, &[], deadline, false).await.map_err(|a| a.error);
            if got.is_err() {
                OriginCounters::add(&c.errors, 1);
            }
            return got;
        }
        OriginCounters::add(&c.errors, 1);
        Err(last.unwrap_or_else(|| OriginError::Protocol {
            origin: String::new(),
            what: "no origin configured".into(),
        }))
    }

    /// The request head, then the body as it arrives from the client.
    async fn write_request(
        &self,
        conn: &mut OriginConn,
        head: &[u8],
        body: Option<&mut RequestBody<'_>>,
        declared: Option<u64>,
    ) -> Result<(), OriginError> {
        self.write(conn, head).await?;
        let Some(body) = body else {
            return Ok(());
        };
        let chunked = declared.is_none();
        while let Some(piece) = body.next().await.map_err(OriginError::Client)? {
            if piece.is_empty() {
                continue;
            }
            let data = if chunked {
                let mut framed = Vec::with_capacity(piece.len() + 16);
                encode_chunk_head(piece.len(), &mut framed);
                framed.extend_from_slice(&piece);
                framed.extend_from_slice(CHUNK_END);
                framed
            } else {
                piece
            };
            self.write(conn, &data).await?;
        }
        if chunked {
            self.write(conn, LAST_CHUNK).await?;
        }
        Ok(())
    }

    /// Write `data` to the origin within the origin timeout.
    async fn write(&self, conn: &mut OriginConn, data: &[u8]) -> Result<(), OriginError> {
        let i = conn.origin;
        match tokio::time::timeout(self.shared.timeout, conn.stream.write_all(data)).await {
            Err(_) => Err(self.shared.timeout_error(i)),
            Ok(Err(e)) => Err(OriginError::Protocol {
                origin: self.shared.name(i),
                what: format!("writing the request: {e}"),
            }),
            Ok(Ok(())) => Ok(()),
        }
    }

    /// A fresh connection to origin `i` before `deadline`.
    async fn connect(&self, i: usize, deadline: Instant) -> Result<OriginConn, OriginError> {
        let o = &self.origins[i];
        let stream = match timeout_at(
            deadline.into(),
            TcpStream::connect((o.host.as_str(), o.port)),
        )
        .await
        {
            Err(_) => return Err(self.shared.timeout_error(i)),
            Ok(Err(source)) => return Err(OriginError::Connect { origin: o.to_string(), source }),
            Ok(Ok(s)) => s,
        };
        let _ = stream.set_nodelay(true);
        Ok(OriginConn { stream, buf: Vec::new(), origin: i })
    }

    async fn try_origin(
        &self,
        i: usize,
        request: &[u8],
        deadline: Instant,
    ) -> Result<(OriginHead, OriginBody), OriginError> {
        let pooled = self.shared.idle.borrow_mut()[i].pop();
        if let Some(conn) = pooled {
            match self.exchange(conn, request, deadline, true).await {
                Ok(r) => return Ok(r),
                Err(a) if !a.stale_pooled => return Err(a.error),
                Err(_) => {}
            }
        }
        let conn = self.connect(i, deadline).await?;
        self.exchange(conn, request, deadline, false).await.map_err(|a| a.error)
    }

    /// Send `request` on `conn` (nothing when it went already) and read the response head
    /// (skipping 1xx heads).
    async fn exchange(
        &self,
        mut conn: OriginConn,
        request: &[u8],
        deadline: Instant,
        pooled: bool,
    ) -> Result<(OriginHead, OriginBody), Attempt> {
        let i = conn.origin;
        let protocol =
            |what: &str| OriginError::Protocol { origin: self.shared.name(i), what: what.into() };
        let fail = |error: OriginError, got_bytes: bool| Attempt {
            stale_pooled: pooled && !got_bytes && !matches!(error, OriginError::Timeout { .. }),
            error,
        };
        if !request.is_empty() {
            match timeout_at(deadline.into(), conn.stream.write_all(request)).await {
                Err(_) => return Err(fail(self.shared.timeout_error(i), false)),
                Ok(Err(e)) => {
                    return Err(fail(protocol(&format!("writing the request: {e}")), false))
                }
                Ok(Ok(())) => {}
            }
        }
        let mut received = 0u64;
        let mut interim = Vec::new();
        loop {
            match parse_response_head(&conn.buf, &self.limits) {
                Err(e) => return Err(fail(protocol(&e.to_string()), true)),
                Ok(Some((mut head, n, close))) => {
                    conn.buf.drain(..n);
                    if (100..200).contains(&head.status) {
                        if head.status == 101 {
                            return Err(fail(protocol("unexpected 101 Switching Protocols"), true));
                        }
                        if head.status != 100 && interim.len() + n <= self.limits.max_head_bytes {
                            write_interim(&head, &mut interim);
                        }
                        continue;
                    }
                    head.interim = interim;
                    let framing = response_framing(
                        head.fields.iter().map(|(n, v)| (n.as_str(), v.as_slice())),
                        head.status,
                        false,
                    )
                    .map_err(|e| fail(protocol(&format!("response framing: {e}")), true))?;
                    let body = OriginBody::new(conn, framing, !close, Rc::clone(&self.shared));
                    return Ok((head, body));
                }
                Ok(None) => {}
            }
            conn.buf.reserve(READ_CHUNK);
            match timeout_at(deadline.into(), conn.stream.read_buf(&mut conn.buf)).await {
                Err(_) => return Err(fail(self.shared.timeout_error(i), received > 0)),
                Ok(Ok(0)) => {
                    return Err(fail(protocol("connection closed before a response"), received > 0))
                }
                Ok(Ok(n)) => {
                    received += n as u64;
                    OriginCounters::add(&self.shared.counters.bytes, n as u64);
                }
                Ok(Err(e)) => return Err(fail(protocol(&format!("reading: {e}")), received > 0)),
            }
        }
    }
}

/// The request line and fields of a `method` request for `target` to `origin`, on the
/// site `host` (`None`: the origin's authority), with `framing` (the body's
/// `Content-Length` or `Transfer-Encoding` line, without its CRLF) when it has one.
fn render_request(
    origin: &OriginUrl,
    method: &str,
    (target, host): (&str, Option<&[u8]>),
    fields: &[(&str, &[u8])],
    framing: Option<&str>,
) -> Vec<u8> {
    let mut r = Vec::with_capacity(256);
    r.extend_from_slice(method.as_bytes());
    r.push(b' ');
    r.extend_from_slice(origin.base.as_bytes());
    r.extend_from_slice(target.as_bytes());
    r.extend_from_slice(b" HTTP/1.1\r\nHost: ");
    match host {
        Some(host) => r.extend_from_slice(host),
        None => r.extend_from_slice(origin.authority().as_bytes()),
    }
    r.extend_from_slice(b"\r\n");
    for (name, value) in fields {
        r.extend_from_slice(name.as_bytes());
        r.extend_from_slice(b": ");
        r.extend_from_slice(value);
        r.extend_from_slice(b"\r\n");
    }
    if let Some(line) = framing {
        r.extend_from_slice(line.as_bytes());
        r.extend_from_slice(b"\r\n");
    }
    r.extend_from_slice(b"Via: 1.1 larder\r\n\r\n");
    r
}

/// Append the interim response `head` as a client gets it (its hop-by-hop fields left out).
fn write_interim(head: &OriginHead, out: &mut Vec<u8>) {
    let Some(status) = http1::Status::new(head.status) else { return };
    let mut w = http1::ResponseHead::new(out, status);
    for (name, value) in super::fields::end_to_end(&head.fields) {
        w.header(&name, &value);
    }
    w.finish();
}

/// A complete response head in `buf` within `limits`: the head (its fields copied out, to
/// outlive the buffer they came in), its length, and whether the origin will close the
/// connection after this response.
fn parse_response_head(
    buf: &[u8],
    limits: &ResponseLimits,
) -> Result<Option<(OriginHead, usize, bool)>, ResponseHeadError> {
    let mut slots = HeaderSlots::new();
    let Some(head) = http1::parse_response_head(buf, &mut slots, limits)? else {
        return Ok(None);
    };
    let fields = head.fields().map(|(name, value)| (name.to_string(), value.to_vec())).collect();
    let head_out = OriginHead { status: head.status, fields, interim: Vec::new() };
    Ok(Some((head_out, head.len, !head.keep_alive())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn response_heads() {
        let parse_response_head = |buf: &[u8], max_fields| {
            let limits = ResponseLimits { max_head_bytes: 1024, max_fields };
            parse_response_head(buf, &limits)
        };
        let (h, n, close) = parse_response_head(b"HTTP/1.1 200 OK\r\nETag: \"a\"\r\n\r\nbody", 64)
            .unwrap()
            .unwrap();
        assert_eq!((h.status, n, close), (200, 30, false));
        assert_eq!(h.fields, vec![("ETag".to_string(), b"\"a\"".to_vec())]);
        let (_, _, close) = parse_response_head(b"HTTP/1.0 200 OK\r\n\r\n", 64).unwrap().unwrap();
        assert!(close, "HTTP/1.0 closes unless keep-alive");
        let (_, _, close) =
            parse_response_head(b"HTTP/1.1 200 OK\r\nConnection: x, Close\r\n\r\n", 64)
                .unwrap()
                .unwrap();
        assert!(close);
        assert!(parse_response_head(b"HTTP/1.1 200 OK\r\n", 64).unwrap().is_none());
        assert!(parse_response_head(b"HTTP/9 nonsense\r\n\r\n", 64).is_err());
        let crowded = b"HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n";
        assert!(parse_response_head(crowded, 3).unwrap().is_some());
        assert!(parse_response_head(crowded, 2).is_err(), "more fields than allowed");
        let big = format!("HTTP/1.1 200 OK\r\nX: {}\r\n", "v".repeat(1024));
        let e = parse_response_head(big.as_bytes(), 64).unwrap_err();
        assert_eq!(e.to_string(), "response head larger than 1024 bytes");
    }

    #[test]
    fn request_rendering() {
        let o = OriginUrl::parse("http://127.0.0.1:81/base").unwrap();
        let r = render_request(&o, "GET", ("/a?b", None), &[("Accept", b"*/*")], None);
        assert_eq!(
            String::from_utf8(r).unwrap(),
            "GET /base/a?b HTTP/1.1\r\nHost: 127.0.0.1:81\r\nAccept: */*\r\nVia: 1.1 larder\r\n\r\n"
        );
        let framing = Some("Transfer-Encoding: chunked");
        let r = render_request(&o, "PATCH", ("/a", Some(b"Shop.example")), &[], framing);
        assert_eq!(
            String::from_utf8(r).unwrap(),
            "PATCH /base/a HTTP/1.1\r\nHost: Shop.example\r\nTransfer-Encoding: chunked\r\nVia: 1.1 larder\r\n\r\n"
        );
    }
}

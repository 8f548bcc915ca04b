//! A lean HTTP/1.1 client on one raw TCP connection.
//!
//! The load generator must never be the bottleneck, so this does only what measuring needs:
//! write a prebuilt request, parse the response head in place (`http1`'s parser, framing
//! and keep-alive rules: the ones the router and the node use), and skip the body
//! (Content-Length, chunked, or until close) while counting every byte received. Bodies are
//! never stored.

use std::io;
use std::net::SocketAddr;

use http1::{
    BodyFraming, ChunkEvent, ChunkLimits, ChunkedDecoder, FramingError, HeaderSlots, ResponseLimits,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Room for a response head; a longer one is a protocol error. Kept small because a ramp
/// may hold ten thousand connections, each with its own buffer.
const BUFFER_BYTES: usize = 16 * 1024;
/// Headers parsed per response; more is a protocol error.
const MAX_HEADERS: usize = 64;
const LIMITS: ResponseLimits =
    ResponseLimits { max_head_bytes: BUFFER_BYTES, max_fields: MAX_HEADERS };
/// The header a larder router adds to name the node that served a request.
pub const NODE_HEADER: &str = "x-larder-node";
/// The header a larder router adds to name itself (several routers may share an address).
pub const ROUTER_HEADER: &str = "x-larder-router";

/// What one exchange returned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    /// Bytes received for this response: head, body and chunk framing.
    pub wire_bytes: u64,
    /// Bytes of the body after removing chunk framing.
    pub body_bytes: u64,
    /// The `X-Larder-Node` header, when present.
    pub node: Option<String>,
    /// The `X-Larder-Router` header, when present.
    pub router: Option<String>,
    /// Whether the connection may carry another request.
    pub keep_alive: bool,
}

/// Why an exchange failed.
#[derive(Debug, thiserror::Error)]
pub enum ExchangeError {
    /// The connection was reset or closed before the response was complete.
    #[error("connection reset or closed mid-response")]
    Reset,
    /// The bytes received are not an HTTP/1.x response this client can frame.
    #[error("malformed response: {0}")]
    Protocol(&'static str),
}

/// Build the bytes of a `GET` for `path`; `close` asks the server to close afterwards.
pub fn request_bytes(host: &str, path: &str, close: bool) -> Vec<u8> {
    http1::get_request(host, path, Some("larder-bench"), close)
}

/// [`request_bytes`] asking for `range` only, when given.
pub fn ranged_request_bytes(
    host: &str,
    path: &str,
    close: bool,
    range: Option<crate::plan::ByteRange>,
) -> Vec<u8> {
    let mut out = request_bytes(host, path, close);
    if let Some(r) = range {
        // Before the blank line that ends the head.
        out.truncate(out.len() - 2);
        out.extend_from_slice(format!("Range: bytes={}-{}\r\n\r\n", r.first, r.last).as_bytes());
    }
    out
}

/// One client connection with its read buffer (`buf[start..end]` is unread data).
pub struct HttpConnection {
    stream: TcpStream,
    buf: Box<[u8]>,
    start: usize,
    end: usize,
    /// Bytes consumed from the stream since the current response began.
    consumed: u64,
}

impl HttpConnection {
    /// Open a TCP connection to `addr` with Nagle's algorithm off.
    pub async fn connect(addr: SocketAddr) -> io::Result<Self> {
        let stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        Ok(HttpConnection {
            stream,
            buf: vec![0; BUFFER_BYTES].into_boxed_slice(),
            start: 0,
            end: 0,
            consumed: 0,
        })
    }

    /// Send `request` and read one full response.
    pub async fn exchange(&mut self, request: &[u8]) -> Result<Response, ExchangeError> {
        self.stream.write_all(request).await.map_err(|_| ExchangeError::Reset)?;
        self.consumed = 0;
        let (mut response, framing) = self.read_head().await?;
        response.body_bytes = match framing {
            BodyFraming::Empty => 0,
            BodyFraming::Length(n) => {
                self.skip(n).await?;
                n
            }
            BodyFraming::Chunked => self.skip_chunked().await?,
            BodyFraming::UntilClose => {
                response.keep_alive = false;
                self.skip_until_close().await?
            }
        };
        response.wire_bytes = self.consumed;
        Ok(response)
    }

    /// Parse the status line and headers; skips interim (1xx) responses. The response's
    /// byte counts are the caller's to fill.
    async fn read_head(&mut self) -> Result<(Response, BodyFraming), ExchangeError> {
        loop {
            let Some((response, framing, len)) = parse_head(&self.buf[self.start..self.end])?
            else {
                self.fill().await?;
                continue;
            };
            self.consume(len);
            if (100..200).contains(&response.status) && response.status != 101 {
                continue;
            }
            return Ok((response, framing));
        }
    }

    /// Read more bytes into the buffer; end of stream is a reset mid-response.
    async fn fill(&mut self) -> Result<(), ExchangeError> {
        match self.fill_or_eof().await? {
            0 => Err(ExchangeError::Reset),
            _ => Ok(()),
        }
    }

    /// Read more bytes into the buffer, returning how many (0 at end of stream).
    async fn fill_or_eof(&mut self) -> Result<usize, ExchangeError> {
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        } else if self.end == self.buf.len() {
            if self.start == 0 {
                return Err(ExchangeError::Protocol("response head too long"));
            }
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        let n =
            self.stream.read(&mut self.buf[self.end..]).await.map_err(|_| ExchangeError::Reset)?;
        self.end += n;
        Ok(n)
    }

    fn consume(&mut self, n: usize) {
        self.start += n;
        self.consumed += n as u64;
    }

    /// Discard exactly `n` body bytes.
    async fn skip(&mut self, mut n: u64) -> Result<(), ExchangeError> {
        while n > 0 {
            if self.start == self.end {
                self.fill().await?;
            }
            let k = n.min((self.end - self.start) as u64);
            self.consume(k as usize);
            n -= k;
        }
        Ok(())
    }

    /// Discard everything until the server closes; returns the body length.
    async fn skip_until_close(&mut self) -> Result<u64, ExchangeError> {
        let mut body = (self.end - self.start) as u64;
        self.consume(self.end - self.start);
        loop {
            let n = self.fill_or_eof().await?;
            if n == 0 {
                return Ok(body);
            }
            body += n as u64;
            self.consume(n);
        }
    }

    /// Discard a chunked body with its trailers (`http1`'s decoder: the chunks end where
    /// the router and the node say they do); returns the body length.
    async fn skip_chunked(&mut self) -> Result<u64, ExchangeError> {
        let mut decoder = ChunkedDecoder::new(ChunkLimits::default());
        let mut body = 0u64;
        loop {
            if self.start == self.end {
                self.fill().await?;
            }
            let (used, event) = decoder
                .feed(&self.buf[self.start..self.end])
                .map_err(|_| ExchangeError::Protocol("bad chunked body"))?;
            self.consume(used);
            match event {
                ChunkEvent::Data { len, .. } => body += len as u64,
                ChunkEvent::NeedMore => {}
                ChunkEvent::End => return Ok(body),
            }
        }
    }
}

/// A complete response head at the start of `bytes`: what an exchange reports of it (byte
/// counts left to fill), where its body ends, and the head's length.
fn parse_head(bytes: &[u8]) -> Result<Option<(Response, BodyFraming, usize)>, ExchangeError> {
    let mut slots = HeaderSlots::new();
    let head = http1::parse_response_head(bytes, &mut slots, &LIMITS)
        .map_err(|_| ExchangeError::Protocol("bad status line or header"))?;
    let Some(head) = head else { return Ok(None) };
    let framing = match head.framing(false) {
        Ok(framing) => framing,
        // `gzip, chunked`: a relay could not decode it, but skipping needs only the chunks.
        Err(FramingError::UnsupportedCoding) => BodyFraming::Chunked,
        Err(_) => return Err(ExchangeError::Protocol("bad Content-Length or Transfer-Encoding")),
    };
    let (mut node, mut router) = (None, None);
    for (name, value) in head.fields() {
        if name.eq_ignore_ascii_case(NODE_HEADER) {
            node = Some(String::from_utf8_lossy(value).into_owned());
        } else if name.eq_ignore_ascii_case(ROUTER_HEADER) {
            router = Some(String::from_utf8_lossy(value).into_owned());
        }
    }
    let keep_alive = head.keep_alive();
    let response =
        Response { status: head.status, wire_bytes: 0, body_bytes: 0, node, router, keep_alive };
    Ok(Some((response, framing, head.len)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_say_who_served_how_the_body_ends_and_whether_the_connection_stays() {
        let raw = b"HTTP/1.1 200 OK\r\nX-Larder-Node: n1\r\nx-larder-router: r1\r\n\
                    Transfer-Encoding: chunked\r\n\r\n5\r\n";
        let (r, framing, len) = parse_head(raw).unwrap().unwrap();
        assert_eq!((r.status, framing, &raw[len..]), (200, BodyFraming::Chunked, &b"5\r\n"[..]));
        assert_eq!(
            (r.node.as_deref(), r.router.as_deref(), r.keep_alive),
            (Some("n1"), Some("r1"), true)
        );
        assert!(parse_head(b"HTTP/1.1 200 OK\r\n").unwrap().is_none());
        let old = parse_head(b"HTTP/1.0 304 Not Modified\r\nContent-Length: 9\r\n\r\n");
        let (r, framing, _) = old.unwrap().unwrap();
        assert_eq!((r.keep_alive, framing), (false, BodyFraming::Empty));
        let gzip = parse_head(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n");
        assert_eq!(gzip.unwrap().unwrap().1, BodyFraming::Chunked);
        let both = b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n";
        assert!(matches!(parse_head(both), Err(ExchangeError::Protocol(_))));
    }

    #[test]
    fn request_asks_to_close_only_when_told() {
        let keep = String::from_utf8(request_bytes("h:1", "/a", false)).unwrap();
        assert!(keep.starts_with("GET /a HTTP/1.1\r\nHost: h:1\r\n"));
        assert!(!keep.contains("close"));
        assert!(keep.ends_with("\r\n\r\n"));
        let close = String::from_utf8(request_bytes("h:1", "/a", true)).unwrap();
        assert!(close.contains("Connection: close\r\n"));
        let range = crate::plan::ByteRange { first: 0, last: 1023 };
        let ranged = String::from_utf8(ranged_request_bytes("h:1", "/a", false, Some(range)));
        let ranged = ranged.unwrap();
        assert!(ranged.starts_with("GET /a HTTP/1.1\r\nHost: h:1\r\n"), "{ranged}");
        assert!(ranged.ends_with("\r\nRange: bytes=0-1023\r\n\r\n"), "{ranged}");
        assert_eq!(ranged_request_bytes("h:1", "/a", true, None), request_bytes("h:1", "/a", true));
    }
}

//! A lean HTTP/1.1 client on one raw TCP connection.
//!
//! The load generator must never be the bottleneck, so this does only what measuring needs:
//! write a prebuilt request, parse the response head with `httparse`, and skip the body
//! (Content-Length, chunked, or until close) while counting every byte received. Bodies are
//! never stored.

use std::io;
use std::net::SocketAddr;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Room for a response head or a chunk-size line; a longer one is a protocol error. Kept
/// small because a ramp may hold ten thousand connections, each with its own buffer.
const BUFFER_BYTES: usize = 16 * 1024;
/// Headers parsed per response; more is a protocol error.
const MAX_HEADERS: usize = 64;
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
    let connection = if close { "Connection: close\r\n" } else { "" };
    format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: larder-bench\r\n{connection}\r\n")
        .into_bytes()
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

/// How the body of a response is delimited.
enum Framing {
    None,
    Length(u64),
    Chunked,
    UntilClose,
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
            Framing::None => 0,
            Framing::Length(n) => {
                self.skip(n).await?;
                n
            }
            Framing::Chunked => self.skip_chunked().await?,
            Framing::UntilClose => {
                response.keep_alive = false;
                self.skip_until_close().await?
            }
        };
        response.wire_bytes = self.consumed;
        Ok(response)
    }

    /// Parse the status line and headers; skips interim (1xx) responses. The response's
    /// byte counts are the caller's to fill.
    async fn read_head(&mut self) -> Result<(Response, Framing), ExchangeError> {
        loop {
            let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
            let mut head = httparse::Response::new(&mut headers);
            let parsed = head
                .parse(&self.buf[self.start..self.end])
                .map_err(|_| ExchangeError::Protocol("bad status line or header"))?;
            let httparse::Status::Complete(len) = parsed else {
                self.fill().await?;
                continue;
            };
            let status = head.code.unwrap_or(0);
            let http11 = head.version == Some(1);
            let mut length = None;
            let mut chunked = false;
            let mut close = !http11;
            let mut node = None;
            let mut router = None;
            for h in head.headers.iter() {
                if h.name.eq_ignore_ascii_case("content-length") {
                    let text = std::str::from_utf8(h.value).ok();
                    let n = text.and_then(|t| t.trim().parse::<u64>().ok());
                    length = Some(n.ok_or(ExchangeError::Protocol("bad Content-Length"))?);
                } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
                    chunked = h.value.to_ascii_lowercase().ends_with(b"chunked");
                } else if h.name.eq_ignore_ascii_case("connection") {
                    let v = h.value.to_ascii_lowercase();
                    if v.windows(5).any(|w| w == b"close") {
                        close = true;
                    } else if v.windows(10).any(|w| w == b"keep-alive") {
                        close = false;
                    }
                } else if h.name.eq_ignore_ascii_case(NODE_HEADER) {
                    node = Some(String::from_utf8_lossy(h.value).into_owned());
                } else if h.name.eq_ignore_ascii_case(ROUTER_HEADER) {
                    router = Some(String::from_utf8_lossy(h.value).into_owned());
                }
            }
            self.consume(len);
            if (100..200).contains(&status) && status != 101 {
                continue;
            }
            let framing = if status == 204 || status == 304 || (100..200).contains(&status) {
                Framing::None
            } else if chunked {
                Framing::Chunked
            } else if let Some(n) = length {
                Framing::Length(n)
            } else {
                Framing::UntilClose
            };
            let keep_alive = !close;
            let response =
                Response { status, wire_bytes: 0, body_bytes: 0, node, router, keep_alive };
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
                return Err(ExchangeError::Protocol("response head or chunk line too long"));
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

    /// One CRLF-terminated line (without the CRLF), consumed.
    async fn line(&mut self) -> Result<Vec<u8>, ExchangeError> {
        loop {
            let data = &self.buf[self.start..self.end];
            if let Some(i) = data.windows(2).position(|w| w == b"\r\n") {
                let line = data[..i].to_vec();
                self.consume(i + 2);
                return Ok(line);
            }
            self.fill().await?;
        }
    }

    /// Discard a chunked body with its trailers; returns the body length.
    async fn skip_chunked(&mut self) -> Result<u64, ExchangeError> {
        let mut body = 0u64;
        loop {
            let line = self.line().await?;
            let size = chunk_size(&line).ok_or(ExchangeError::Protocol("bad chunk size"))?;
            if size == 0 {
                while !self.line().await?.is_empty() {}
                return Ok(body);
            }
            self.skip(size).await?;
            if !self.line().await?.is_empty() {
                return Err(ExchangeError::Protocol("chunk not followed by CRLF"));
            }
            body += size;
        }
    }
}

/// The size in a chunk-size line (`1a;ext=x` is 26).
fn chunk_size(line: &[u8]) -> Option<u64> {
    let hex = line.split(|&b| b == b';').next()?;
    let text = std::str::from_utf8(hex).ok()?.trim();
    if text.is_empty() || text.len() > 15 {
        return None;
    }
    u64::from_str_radix(text, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_sizes() {
        assert_eq!(chunk_size(b"1a"), Some(26));
        assert_eq!(chunk_size(b"0"), Some(0));
        assert_eq!(chunk_size(b"FF;name=value"), Some(255));
        assert_eq!(chunk_size(b""), None);
        assert_eq!(chunk_size(b"zz"), None);
        assert_eq!(chunk_size(b"ffffffffffffffffff"), None);
    }

    #[test]
    fn request_asks_to_close_only_when_told() {
        let keep = String::from_utf8(request_bytes("h:1", "/a", false)).unwrap();
        assert!(keep.starts_with("GET /a HTTP/1.1\r\nHost: h:1\r\n"));
        assert!(!keep.contains("close"));
        assert!(keep.ends_with("\r\n\r\n"));
        let close = String::from_utf8(request_bytes("h:1", "/a", true)).unwrap();
        assert!(close.contains("Connection: close\r\n"));
    }
}

//! Status codes and the response-head writer.

use std::fmt;

/// An HTTP status code. The constants are the ones larder sends; any code can be made with
/// [`Status::new`] (a router relays whatever its upstream said).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Status(u16);

impl Status {
    pub const OK: Status = Status(200);
    pub const PARTIAL_CONTENT: Status = Status(206);
    pub const MOVED_PERMANENTLY: Status = Status(301);
    pub const NOT_MODIFIED: Status = Status(304);
    pub const BAD_REQUEST: Status = Status(400);
    pub const FORBIDDEN: Status = Status(403);
    pub const NOT_FOUND: Status = Status(404);
    pub const METHOD_NOT_ALLOWED: Status = Status(405);
    pub const REQUEST_TIMEOUT: Status = Status(408);
    pub const LENGTH_REQUIRED: Status = Status(411);
    pub const PRECONDITION_FAILED: Status = Status(412);
    pub const CONTENT_TOO_LARGE: Status = Status(413);
    pub const URI_TOO_LONG: Status = Status(414);
    pub const RANGE_NOT_SATISFIABLE: Status = Status(416);
    pub const REQUEST_HEADER_FIELDS_TOO_LARGE: Status = Status(431);
    pub const INTERNAL_SERVER_ERROR: Status = Status(500);
    pub const NOT_IMPLEMENTED: Status = Status(501);
    pub const BAD_GATEWAY: Status = Status(502);
    pub const SERVICE_UNAVAILABLE: Status = Status(503);
    pub const GATEWAY_TIMEOUT: Status = Status(504);
    pub const HTTP_VERSION_NOT_SUPPORTED: Status = Status(505);

    /// `None` outside 100..=999, the range a status line can carry.
    pub fn new(code: u16) -> Option<Status> {
        (100..=999).contains(&code).then_some(Status(code))
    }

    pub fn code(self) -> u16 {
        self.0
    }

    /// The reason phrase of RFC 9110 (empty for codes it does not name).
    pub fn reason(self) -> &'static str {
        match self.0 {
            100 => "Continue",
            102 => "Processing",
            103 => "Early Hints",
            200 => "OK",
            201 => "Created",
            204 => "No Content",
            206 => "Partial Content",
            301 => "Moved Permanently",
            302 => "Found",
            304 => "Not Modified",
            400 => "Bad Request",
            403 => "Forbidden",
            404 => "Not Found",
            405 => "Method Not Allowed",
            408 => "Request Timeout",
            411 => "Length Required",
            412 => "Precondition Failed",
            413 => "Content Too Large",
            414 => "URI Too Long",
            416 => "Range Not Satisfiable",
            431 => "Request Header Fields Too Large",
            500 => "Internal Server Error",
            501 => "Not Implemented",
            502 => "Bad Gateway",
            503 => "Service Unavailable",
            504 => "Gateway Timeout",
            505 => "HTTP Version Not Supported",
            _ => "",
        }
    }

    /// Whether a response with this status never has a body (RFC 9110 §6.4.1).
    pub fn forbids_body(self) -> bool {
        self.0 < 200 || self.0 == 204 || self.0 == 304
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.0, self.reason())
    }
}

/// Writes a response head into a caller-owned buffer, so a connection can batch the answers
/// to pipelined requests into one write.
pub struct ResponseHead<'a> {
    buf: &'a mut Vec<u8>,
}

impl<'a> ResponseHead<'a> {
    /// Start with the status line. larder always answers as HTTP/1.1, its highest version,
    /// as RFC 9110 §2.5 asks, also to HTTP/1.0 clients.
    pub fn new(buf: &'a mut Vec<u8>, status: Status) -> Self {
        buf.extend_from_slice(b"HTTP/1.1 ");
        push_decimal(buf, u64::from(status.0));
        buf.push(b' ');
        buf.extend_from_slice(status.reason().as_bytes());
        buf.extend_from_slice(b"\r\n");
        ResponseHead { buf }
    }

    /// Add a header field. CR and LF in `value` become spaces, so a value built from client
    /// input can never split the head.
    pub fn header(&mut self, name: &str, value: &[u8]) -> &mut Self {
        self.buf.extend_from_slice(name.as_bytes());
        self.buf.extend_from_slice(b": ");
        self.buf.extend(value.iter().map(|&b| if b == b'\r' || b == b'\n' { b' ' } else { b }));
        self.buf.extend_from_slice(b"\r\n");
        self
    }

    /// Add a header field with a decimal value (Content-Length and friends).
    pub fn header_u64(&mut self, name: &str, value: u64) -> &mut Self {
        self.buf.extend_from_slice(name.as_bytes());
        self.buf.extend_from_slice(b": ");
        push_decimal(self.buf, value);
        self.buf.extend_from_slice(b"\r\n");
        self
    }

    /// Add header lines rendered earlier (each ending in CRLF): the response-header cache
    /// renders a file's fixed fields once and replays them here.
    pub fn raw_lines(&mut self, lines: &[u8]) -> &mut Self {
        self.buf.extend_from_slice(lines);
        self
    }

    /// End the head with the blank line.
    pub fn finish(self) {
        self.buf.extend_from_slice(b"\r\n");
    }
}

/// Append `n` in decimal without going through `fmt` (this runs for every response).
pub fn push_decimal(buf: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    buf.extend_from_slice(&digits[i..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_head() {
        let mut buf = Vec::new();
        let mut h = ResponseHead::new(&mut buf, Status::NOT_FOUND);
        h.header("X", b"a\r\nInjected: 1").header_u64("Content-Length", 0);
        h.finish();
        assert_eq!(
            buf,
            b"HTTP/1.1 404 Not Found\r\nX: a  Injected: 1\r\nContent-Length: 0\r\n\r\n".to_vec()
        );
    }

    #[test]
    fn decimals() {
        for n in [0u64, 7, 10, 12345, u64::MAX] {
            let mut b = Vec::new();
            push_decimal(&mut b, n);
            assert_eq!(String::from_utf8(b).unwrap(), n.to_string());
        }
    }

    #[test]
    fn status_range() {
        assert!(Status::new(99).is_none());
        assert_eq!(Status::new(418).unwrap().code(), 418);
        assert!(Status::NOT_MODIFIED.forbids_body());
    }
}

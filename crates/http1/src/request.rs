//! Request-head parsing: `httparse` does the tokenising, this module adds the limits, the
//! version and Host rules of RFC 9112, and errors that carry the status to answer with.

use crate::limits::Limits;
use crate::response::Status;
pub use crate::version::Version;

/// Request methods a server must tell apart: the ones RFC 9110 defines are known (a server
/// answers 405 for those it does not allow), anything else is unknown (501).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Method {
    Get,
    Head,
    Post,
    Put,
    Delete,
    Connect,
    Options,
    Trace,
    Patch,
    /// A syntactically valid method this crate does not know.
    Other(String),
}

impl Method {
    fn from_token(token: &str) -> Method {
        match token {
            "GET" => Method::Get,
            "HEAD" => Method::Head,
            "POST" => Method::Post,
            "PUT" => Method::Put,
            "DELETE" => Method::Delete,
            "CONNECT" => Method::Connect,
            "OPTIONS" => Method::Options,
            "TRACE" => Method::Trace,
            "PATCH" => Method::Patch,
            other => Method::Other(other.to_string()),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            Method::Get => "GET",
            Method::Head => "HEAD",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Delete => "DELETE",
            Method::Connect => "CONNECT",
            Method::Options => "OPTIONS",
            Method::Trace => "TRACE",
            Method::Patch => "PATCH",
            Method::Other(s) => s,
        }
    }
}

/// One header field as received (the name keeps its case; lookups ignore it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    pub name: String,
    pub value: Vec<u8>,
}

/// A parsed request head. The body, if any, follows in the caller's buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestHead {
    pub method: Method,
    /// The request target exactly as sent (origin-form, absolute-form, authority or `*`).
    pub target: String,
    pub version: Version,
    pub headers: Vec<Header>,
}

/// Why a head was refused; [`ParseError::status`] is the answer a server should send.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("malformed request: {0}")]
    Malformed(&'static str),
    #[error("request target longer than {limit} bytes")]
    UriTooLong { limit: usize },
    #[error("request head larger than {limit} bytes")]
    HeadTooLarge { limit: usize },
    #[error("more than {limit} header fields")]
    TooManyHeaders { limit: usize },
    #[error("HTTP version not supported")]
    VersionNotSupported,
    #[error("HTTP/1.1 request without exactly one Host header")]
    BadHost,
}

impl ParseError {
    pub fn status(&self) -> Status {
        match self {
            ParseError::Malformed(_) | ParseError::BadHost => Status::BAD_REQUEST,
            ParseError::UriTooLong { .. } => Status::URI_TOO_LONG,
            ParseError::HeadTooLarge { .. } | ParseError::TooManyHeaders { .. } => {
                Status::REQUEST_HEADER_FIELDS_TOO_LARGE
            }
            ParseError::VersionNotSupported => Status::HTTP_VERSION_NOT_SUPPORTED,
        }
    }
}

/// Header arrays up to this size live on the stack; larger limits fall back to the heap.
const STACK_HEADERS: usize = 64;

/// Parse one request head from the start of `buf`.
///
/// `Ok(None)` means the head is not complete yet and the caller may read more: the limits
/// are checked on partial input too, so a client cannot grow the buffer past them.
/// `Ok(Some((head, n)))` means the head took the first `n` bytes of `buf`.
pub fn parse_head(buf: &[u8], limits: &Limits) -> Result<Option<(RequestHead, usize)>, ParseError> {
    if let Some(at) = check_request_line(buf, limits)? {
        // HTTP/1.2 and later minors: parsed as the 1.1 they must be served as (rare, so a
        // copy of the head is fine).
        let mut copy = buf[..buf.len().min(limits.max_header_bytes + 1)].to_vec();
        copy[at] = b'1';
        return parse_checked(&copy, limits);
    }
    parse_checked(buf, limits)
}

/// [`parse_head`] once the request line's version is one httparse reads.
fn parse_checked(buf: &[u8], limits: &Limits) -> Result<Option<(RequestHead, usize)>, ParseError> {
    let mut stack = [httparse::EMPTY_HEADER; STACK_HEADERS];
    let mut heap;
    let slots: &mut [httparse::Header<'_>] = if limits.max_headers <= STACK_HEADERS {
        &mut stack[..limits.max_headers]
    } else {
        heap = vec![httparse::EMPTY_HEADER; limits.max_headers];
        &mut heap
    };
    let mut req = httparse::Request::new(slots);
    let status = req.parse(buf).map_err(|e| match e {
        httparse::Error::TooManyHeaders => ParseError::TooManyHeaders { limit: limits.max_headers },
        httparse::Error::Version => ParseError::Malformed("bad protocol version"),
        httparse::Error::Token => ParseError::Malformed("bad token"),
        httparse::Error::HeaderName => ParseError::Malformed("bad header name"),
        httparse::Error::HeaderValue => ParseError::Malformed("bad header value"),
        httparse::Error::NewLine => ParseError::Malformed("bad line ending"),
        httparse::Error::Status => ParseError::Malformed("bad request line"),
    })?;
    let len = match status {
        httparse::Status::Partial => {
            if buf.len() > limits.max_header_bytes {
                return Err(ParseError::HeadTooLarge { limit: limits.max_header_bytes });
            }
            return Ok(None);
        }
        httparse::Status::Complete(len) => len,
    };
    if len > limits.max_header_bytes {
        return Err(ParseError::HeadTooLarge { limit: limits.max_header_bytes });
    }
    let (Some(method), Some(target), Some(minor)) = (req.method, req.path, req.version) else {
        return Err(ParseError::Malformed("incomplete request line"));
    };
    if target.len() > limits.max_uri_len {
        return Err(ParseError::UriTooLong { limit: limits.max_uri_len });
    }
    let version = if minor == 0 { Version::Http10 } else { Version::Http11 };
    let headers: Vec<Header> = req
        .headers
        .iter()
        .map(|h| Header { name: h.name.to_string(), value: h.value.to_vec() })
        .collect();
    let head = RequestHead {
        method: Method::from_token(method),
        target: target.to_string(),
        version,
        headers,
    };
    let hosts = head.header_values("host").count();
    if hosts > 1 || (version == Version::Http11 && hosts == 0) {
        return Err(ParseError::BadHost);
    }
    Ok(Some((head, len)))
}

/// Look at the request line before `httparse` does, for the answers it cannot give: 414
/// for an overlong target (even before the line is complete), 505 for a well-formed
/// `HTTP/x.y` of another major version, and, for `HTTP/1.y` with y above 1, where that
/// minor digit is in `buf`: RFC 9112 §2.3 has a server treat a later minor version as the
/// highest it supports (1.1), which httparse would refuse.
fn check_request_line(buf: &[u8], limits: &Limits) -> Result<Option<usize>, ParseError> {
    let start = buf.iter().position(|&b| b != b'\r' && b != b'\n').unwrap_or(buf.len());
    let rest = &buf[start..];
    // Method and version add a few dozen bytes at most around the target.
    const LINE_SLACK: usize = 64;
    let Some(end) = rest.iter().position(|&b| b == b'\n') else {
        if rest.len() > limits.max_uri_len + LINE_SLACK {
            return Err(ParseError::UriTooLong { limit: limits.max_uri_len });
        }
        return Ok(None);
    };
    let line = rest[..end].strip_suffix(b"\r").unwrap_or(&rest[..end]);
    let mut parts = line.split(|&b| b == b' ');
    let (_method, target, version) = (parts.next(), parts.next(), parts.next());
    if target.is_some_and(|t| t.len() > limits.max_uri_len) {
        return Err(ParseError::UriTooLong { limit: limits.max_uri_len });
    }
    if let Some(v) = version {
        let is_versioned = v.len() == 8
            && v.starts_with(b"HTTP/")
            && v[5].is_ascii_digit()
            && v[6] == b'.'
            && v[7].is_ascii_digit();
        if is_versioned && v[5] != b'1' {
            return Err(ParseError::VersionNotSupported);
        }
        if is_versioned && v[7] > b'1' && parts.next().is_none() {
            let minor_at = start + line.len() - 1;
            return Ok(Some(minor_at));
        }
    }
    Ok(None)
}

/// Whether `buf` begins with a whole first line that neither ends in a protocol named
/// `HTTP/…` (in any case, well-formed or not) nor is HTTP/0.9's `GET /path`: the peer
/// does not speak HTTP/1 at all (an HTTP/1 client that got its request wrong still names
/// its protocol), so an HTTP/1 error response means nothing to it. A server that also
/// takes HTTP/2 by prior knowledge treats such bytes as an invalid connection preface.
/// False while the first line is incomplete.
pub fn is_not_http1(buf: &[u8]) -> bool {
    let start = buf.iter().position(|&b| b != b'\r' && b != b'\n').unwrap_or(buf.len());
    let rest = &buf[start..];
    let Some(end) = rest.iter().position(|&b| b == b'\n') else {
        return false;
    };
    let line = rest[..end].strip_suffix(b"\r").unwrap_or(&rest[..end]);
    let words: Vec<&[u8]> =
        line.split(|&b| b == b' ' || b == b'\t').filter(|w| !w.is_empty()).collect();
    let http09 = matches!(words.as_slice(), [b"GET", path] if path.starts_with(b"/"));
    let names_http =
        words.last().is_some_and(|w| w.len() >= 5 && w[..5].eq_ignore_ascii_case(b"HTTP/"));
    !http09 && !names_http
}

impl RequestHead {
    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&[u8]> {
        self.headers.iter().find(|h| h.name.eq_ignore_ascii_case(name)).map(|h| h.value.as_slice())
    }

    /// Every value of header `name`, in the order received.
    pub fn header_values<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a [u8]> + 'a {
        self.headers
            .iter()
            .filter(move |h| h.name.eq_ignore_ascii_case(name))
            .map(|h| h.value.as_slice())
    }

    /// Whether the comma-separated list header `name` contains `token` (case-insensitive),
    /// across all its field lines ([`crate::tokens::has_token`]).
    pub fn has_token(&self, name: &str, token: &str) -> bool {
        crate::tokens::has_token(self.fields(), name, token)
    }

    /// Whether the connection stays open after the response: HTTP/1.1 persists unless the
    /// client says `close`; HTTP/1.0 closes unless it says `keep-alive`.
    pub fn keep_alive(&self) -> bool {
        crate::tokens::keep_alive(self.version, || self.fields())
    }

    /// The fields in the order received, as (name, value) pairs.
    pub fn fields(&self) -> impl Iterator<Item = (&str, &[u8])> + '_ {
        self.headers.iter().map(|h| (h.name.as_str(), h.value.as_slice()))
    }

    /// The target's path, without the query (for origin-form and absolute-form targets).
    pub fn path(&self) -> &str {
        let t = self.target.as_str();
        let t = match t.find("://") {
            Some(i) if !t.starts_with('/') => {
                let after = &t[i + 3..];
                after.find('/').map_or("/", |j| &after[j..])
            }
            _ => t,
        };
        t.split_once('?').map_or(t, |(p, _)| p)
    }

    /// The query string after `?`, if any.
    pub fn query(&self) -> Option<&str> {
        self.target.split_once('?').map(|(_, q)| q)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Option<(RequestHead, usize)>, ParseError> {
        parse_head(s.as_bytes(), &Limits::default())
    }

    #[test]
    fn a_first_line_that_names_no_http_is_not_http1() {
        assert!(is_not_http1(b"INVALID CONNECTION PREFACE\r\n\r\n"));
        assert!(is_not_http1(b"\r\nhello\n"));
        assert!(is_not_http1(b"GET\r\n"));
        // HTTP/0.9's request is HTTP's too.
        assert!(!is_not_http1(b"GET /\r\n\r\n"));
        // HTTP/1 clients that got their request wrong still name their version.
        assert!(!is_not_http1(b"GET /a b HTTP/1.1\r\nHost: x\r\n\r\n"));
        assert!(!is_not_http1(b"G@T / HTTP/1.1 \r\n"));
        assert!(!is_not_http1(b"GET / HTTP/2.0\r\n\r\n"));
        assert!(!is_not_http1(b"GET / http/1.10\r\n"));
        // Not known until the line is whole.
        assert!(!is_not_http1(b"INVALID CONNECTION"));
        assert!(!is_not_http1(b""));
    }

    #[test]
    fn simple_get() {
        let (h, n) = parse("GET /a?b=1 HTTP/1.1\r\nHost: x\r\n\r\nrest").unwrap().unwrap();
        assert_eq!(n, "GET /a?b=1 HTTP/1.1\r\nHost: x\r\n\r\n".len());
        assert_eq!(h.method, Method::Get);
        assert_eq!(h.path(), "/a");
        assert_eq!(h.query(), Some("b=1"));
        assert_eq!(h.header("HOST"), Some(&b"x"[..]));
        assert!(h.keep_alive());
    }

    #[test]
    fn partial_is_none() {
        assert_eq!(parse("GET / HTTP/1.1\r\nHost: x\r\n"), Ok(None));
        assert_eq!(parse("GE"), Ok(None));
    }

    #[test]
    fn keep_alive_rules() {
        let ka = |s: &str| parse(s).unwrap().unwrap().0.keep_alive();
        assert!(!ka("GET / HTTP/1.0\r\n\r\n"));
        assert!(ka("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n"));
        assert!(!ka("GET / HTTP/1.1\r\nHost: x\r\nConnection: foo, close\r\n\r\n"));
        assert!(ka("GET / HTTP/1.1\r\nHost: x\r\nConnection: foo\r\n\r\n"));
    }

    #[test]
    fn statuses() {
        let st = |s: &str| parse(s).unwrap_err().status().code();
        assert_eq!(st("GET / HTTP/2.0\r\n\r\n"), 505);
        assert_eq!(st("GET / HTTP/0.9\r\n\r\n"), 505);
        assert_eq!(st("GET / HTTP/1.1\r\n\r\n"), 400);
        assert_eq!(st("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"), 400);
        assert_eq!(st("GET\x01 / HTTP/1.1\r\n\r\n"), 400);
        assert_eq!(st("GET / FOO\r\n\r\n"), 400);
        let long = format!("GET /{} HTTP/1.1\r\nHost: x\r\n\r\n", "a".repeat(9000));
        assert_eq!(st(&long), 414);
        let unterminated = format!("GET /{}", "a".repeat(9000));
        assert_eq!(st(&unterminated), 414);
        let many: String = (0..65).map(|i| format!("X-{i}: v\r\n")).collect();
        assert_eq!(st(&format!("GET / HTTP/1.1\r\nHost: x\r\n{many}\r\n")), 431);
        let big = format!("GET / HTTP/1.1\r\nHost: x\r\nX: {}\r\n", "v".repeat(17000));
        assert_eq!(st(&big), 431);
    }

    #[test]
    fn a_later_minor_version_is_read_as_1_1() {
        // RFC 9112 §2.3: a server that gets a higher minor version answers as for 1.1.
        let raw = "GET /a HTTP/1.2\r\nHost: x\r\n\r\nrest";
        let (h, n) = parse(raw).unwrap().unwrap();
        assert_eq!((h.version, &raw[n..]), (Version::Http11, "rest"));
        let (h, _) = parse("GET / HTTP/1.9\r\nHost: x\r\n\r\n").unwrap().unwrap();
        assert_eq!(h.version, Version::Http11);
        assert_eq!(parse("GET / HTTP/1.2\r\n\r\n").unwrap_err(), ParseError::BadHost);
    }

    #[test]
    fn absolute_form_path() {
        let (h, _) = parse("GET http://h/x/y?q HTTP/1.1\r\nHost: h\r\n\r\n").unwrap().unwrap();
        assert_eq!(h.path(), "/x/y");
        let (h, _) = parse("GET http://h HTTP/1.1\r\nHost: h\r\n\r\n").unwrap().unwrap();
        assert_eq!(h.path(), "/");
    }

    #[test]
    fn unknown_method_kept() {
        let (h, _) = parse("BREW /pot HTTP/1.1\r\nHost: h\r\n\r\n").unwrap().unwrap();
        assert_eq!(h.method, Method::Other("BREW".into()));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(128))]
        #[test]
        fn never_panics_and_respects_limits(bytes in proptest::collection::vec(0u8..=255, 0..512)) {
            let limits = Limits { max_header_bytes: 256, max_headers: 4, max_uri_len: 64 };
            if let Ok(Some((head, n))) = parse_head(&bytes, &limits) {
                proptest::prop_assert!(n <= 256);
                proptest::prop_assert!(head.target.len() <= 64);
                proptest::prop_assert!(head.headers.len() <= 4);
            }
        }
    }
}

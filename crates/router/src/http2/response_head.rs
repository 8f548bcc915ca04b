//! The HTTP/2 response head, built straight from the node's HTTP/1.1 head as the router
//! rewrites it for any client (`head::rewrite_response`): the same fields as an HTTP/1.1
//! client gets, but the connection-specific ones, put into the response's header map
//! without writing them as text first and parsing that text again.

use bytes::Bytes;
use http::header::{HeaderName, HeaderValue, CONTENT_LENGTH, VIA};

use crate::head::ResponseHeadOut;

/// Fields that mean something for one HTTP/1.1 connection only, never sent in HTTP/2
/// (RFC 9113 §8.2.2).
pub(super) const HOP_BY_HOP: [&str; 6] =
    ["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "te"];

/// Room for the fields the router adds to the node's (`Via`, `Content-Length`, its own).
const ADDED_FIELDS: usize = 4;

/// A response head for an HTTP/2 client, filled by `head::rewrite_response`.
pub(super) struct Http2Head {
    response: http::Response<()>,
    /// One copy of the node's head: the values passed on are slices of it, rather than an
    /// allocation each.
    shared: Bytes,
    /// Where the node's head lay when it was copied, to find a value's place in the copy.
    whole: std::ops::Range<usize>,
    /// A field HTTP/2 cannot carry: the response is not sent.
    invalid: bool,
}

impl Http2Head {
    pub(super) fn new() -> Self {
        Http2Head {
            response: http::Response::new(()),
            shared: Bytes::new(),
            whole: 0..0,
            invalid: false,
        }
    }

    /// The head, unless one of its fields could not be carried by HTTP/2.
    pub(super) fn into_response(self) -> Option<http::Response<()>> {
        (!self.invalid).then_some(self.response)
    }

    /// `part` as the same bytes of the copy of the node's head, or a copy of its own if
    /// it lies outside that head.
    fn shared_slice(&self, part: &[u8]) -> Bytes {
        let start = (part.as_ptr() as usize).wrapping_sub(self.whole.start);
        match start.checked_add(part.len()) {
            Some(end) if start <= self.whole.len() && end <= self.whole.len() => {
                self.shared.slice(start..end)
            }
            _ => Bytes::copy_from_slice(part),
        }
    }

    fn append(&mut self, name: Result<HeaderName, http::header::InvalidHeaderName>, value: Bytes) {
        match (name, HeaderValue::from_maybe_shared(value)) {
            (Ok(name), Ok(value)) => {
                self.response.headers_mut().append(name, value);
            }
            _ => self.invalid = true,
        }
    }
}

impl ResponseHeadOut for Http2Head {
    fn begin(&mut self, head: &[u8], fields: usize) {
        self.shared = Bytes::copy_from_slice(head);
        let start = head.as_ptr() as usize;
        self.whole = start..start + head.len();
        self.response.headers_mut().reserve(fields + ADDED_FIELDS);
    }

    fn status_line(&mut self, status: u16, _reason: &str) {
        match http::StatusCode::from_u16(status) {
            Ok(status) => *self.response.status_mut() = status,
            Err(_) => self.invalid = true,
        }
    }

    fn field(&mut self, name: &str, value: &[u8]) {
        if HOP_BY_HOP.iter().any(|h| name.eq_ignore_ascii_case(h)) {
            return;
        }
        let value = self.shared_slice(value);
        self.append(HeaderName::from_bytes(name.as_bytes()), value);
    }

    fn content_length(&mut self, n: u64) {
        self.response.headers_mut().append(CONTENT_LENGTH, HeaderValue::from(n));
    }

    fn via<'a>(&mut self, fields: impl Iterator<Item = (&'a str, &'a [u8])>, minor: u8, via: &str) {
        let mut value = Vec::with_capacity(via.len() + 4);
        for (_, v) in fields.filter(|(n, _)| n.eq_ignore_ascii_case("via")) {
            let v = v.trim_ascii();
            if !v.is_empty() {
                value.extend_from_slice(v);
                value.extend_from_slice(b", ");
            }
        }
        value.extend_from_slice(if minor == 0 { b"1.0 " } else { b"1.1 " });
        value.extend_from_slice(via.as_bytes());
        self.append(Ok(VIA), Bytes::from(value));
    }

    fn field_line(&mut self, line: &[u8]) {
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            self.invalid = true;
            return;
        };
        let name = HeaderName::from_bytes(line[..colon].trim_ascii());
        self.append(name, Bytes::copy_from_slice(line[colon + 1..].trim_ascii()));
    }

    fn end(&mut self) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::head::{parse_response, rewrite_response, ResponseRules};

    fn rules<'a>(router_field: Option<&'a [u8]>) -> ResponseRules<'a> {
        ResponseRules {
            max_headers: 100,
            via: "larder",
            head_request: false,
            client_keep_alive: true,
            client_minor: 1,
            node_name: Some("n1"),
            router_field,
            upgrade: false,
        }
    }

    /// The fields an HTTP/2 client gets: those of the HTTP/1.1 rewrite, as pairs.
    fn h2_fields(raw: &[u8], rules: &ResponseRules<'_>) -> (u16, Vec<(String, String)>) {
        let mut head = Http2Head::new();
        rewrite_response(raw, rules, &mut head).unwrap().unwrap();
        let response = head.into_response().unwrap();
        let fields = response
            .headers()
            .iter()
            .map(|(n, v)| (n.as_str().to_owned(), v.to_str().unwrap().to_owned()))
            .collect();
        (response.status().as_u16(), fields)
    }

    /// The same from the HTTP/1.1 text, less the connection-specific fields.
    fn http1_fields(raw: &[u8], rules: &ResponseRules<'_>) -> (u16, Vec<(String, String)>) {
        let mut text = Vec::new();
        parse_response(raw, rules, &mut text).unwrap().unwrap();
        let mut slots = [httparse::EMPTY_HEADER; 32];
        let mut parsed = httparse::Response::new(&mut slots);
        assert!(parsed.parse(&text).unwrap().is_complete());
        let fields = parsed
            .headers
            .iter()
            .filter(|f| !HOP_BY_HOP.iter().any(|h| f.name.eq_ignore_ascii_case(h)))
            .map(|f| (f.name.to_ascii_lowercase(), String::from_utf8(f.value.to_vec()).unwrap()))
            .collect();
        (parsed.code.unwrap(), fields)
    }

    #[test]
    fn the_fields_are_those_of_the_http1_rewrite_less_the_connection_ones() {
        let heads: [&[u8]; 4] = [
            b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\nVia: 1.1 edge\r\nX-A: 1\r\nX-A: 2\r\n\r\nhello",
            b"HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\nConnection: close, x-b\r\nX-B: dropped\r\nKeep-Alive: timeout=5\r\n\r\n",
            b"HTTP/1.0 200 OK\r\nServer: n\r\n\r\n",
            b"HTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\n\r\n",
        ];
        for router_field in [None, Some(&b"X-Larder-Router: r1\r\n"[..])] {
            let rules = rules(router_field);
            for raw in heads {
                assert_eq!(h2_fields(raw, &rules), http1_fields(raw, &rules), "{raw:?}");
            }
        }
    }

    #[test]
    fn a_value_http2_cannot_carry_is_refused() {
        let mut head = Http2Head::new();
        head.begin(b"", 1);
        head.field("x-bad", b"a\0b");
        assert!(head.into_response().is_none());
    }
}

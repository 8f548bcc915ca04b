//! Response-head parsing, for every client larder has (the router reading a node, the
//! node reading an origin, the load generator, the tests): `httparse` does the
//! tokenising, this module adds the limits and a typed error, and hands back a head that
//! borrows the received bytes, so a client on a hot path copies nothing it does not keep.
//! What a client does with the head (relay it, store it, skip the body) stays its own;
//! where the body ends is [`crate::framing`]'s, and whether the connection stays open is
//! [`crate::tokens`]'s.

use crate::framing::{self, BodyFraming, FramingError};
use crate::header_slots::HeaderSlots;
use crate::limits::ResponseLimits;
use crate::tokens;
use crate::version::Version;

/// A complete response head, borrowing the bytes it was parsed from (`'b`) and the
/// caller's header slots (`'h`).
#[derive(Debug)]
pub struct ReceivedHead<'h, 'b> {
    /// The status code (100..=999: httparse reads exactly three digits).
    pub status: u16,
    /// The reason phrase as sent (possibly empty).
    pub reason: &'b str,
    pub version: Version,
    /// Bytes of the head, blank line included: the body (if any) starts there.
    pub len: usize,
    fields: &'h [httparse::Header<'b>],
}

/// Why a response head was refused. A client answers all of them the same way (a bad
/// gateway, a protocol error); the variants say why in its logs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ResponseHeadError {
    #[error("malformed response head: {0}")]
    Malformed(httparse::Error),
    #[error("response head larger than {limit} bytes")]
    TooLarge { limit: usize },
    #[error("more than {limit} header fields in a response head")]
    TooManyFields { limit: usize },
}

/// Parse one response head from the start of `buf`, its fields in `slots`.
///
/// `Ok(None)` means the head is not complete yet and the caller may read more: the byte
/// limit is checked on partial input too, so a peer cannot grow the buffer past it.
/// `#[inline]`: the router parses every response it relays with this, from its crate.
#[inline]
pub fn parse_response_head<'h, 'b>(
    buf: &'b [u8],
    slots: &'h mut HeaderSlots<'b>,
    limits: &ResponseLimits,
) -> Result<Option<ReceivedHead<'h, 'b>>, ResponseHeadError> {
    let mut resp = httparse::Response::new(&mut []);
    let parsed = httparse::ParserConfig::default().parse_response_with_uninit_headers(
        &mut resp,
        buf,
        slots.get(limits.max_fields),
    );
    let too_large = ResponseHeadError::TooLarge { limit: limits.max_head_bytes };
    let len = match parsed {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) if buf.len() > limits.max_head_bytes => {
            return Err(too_large)
        }
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => {
            return Err(ResponseHeadError::TooManyFields { limit: limits.max_fields })
        }
        Err(e) => return Err(ResponseHeadError::Malformed(e)),
    };
    if len > limits.max_head_bytes {
        return Err(too_large);
    }
    // httparse fills code and version whenever it says Complete.
    let version = if resp.version == Some(0) { Version::Http10 } else { Version::Http11 };
    Ok(Some(ReceivedHead {
        status: resp.code.unwrap_or(0),
        reason: resp.reason.unwrap_or(""),
        version,
        len,
        fields: resp.headers,
    }))
}

impl<'h, 'b> ReceivedHead<'h, 'b> {
    /// The fields in the order received: name as the server spelled it, raw value.
    #[inline]
    pub fn fields(&self) -> impl Iterator<Item = (&'b str, &'b [u8])> + Clone + 'h {
        self.fields.iter().map(|h| (h.name, h.value))
    }

    /// A 1xx interim response: the final response follows it on the same connection.
    #[inline]
    pub fn is_interim(&self) -> bool {
        (100..200).contains(&self.status)
    }

    /// Where the body ends, for a response to a `HEAD` request or another
    /// ([`framing::response_framing`]: ambiguities are refused).
    #[inline]
    pub fn framing(&self, head_request: bool) -> Result<BodyFraming, FramingError> {
        framing::response_framing(self.fields(), self.status, head_request)
    }

    /// Whether the server keeps the connection open after this response (RFC 9112 §9.3);
    /// a body delimited by the close ends it anyway.
    pub fn keep_alive(&self) -> bool {
        tokens::keep_alive(self.version, || self.fields())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: ResponseLimits = ResponseLimits { max_head_bytes: 256, max_fields: 4 };

    fn parse(raw: &[u8]) -> Result<Option<(u16, String, Version, usize)>, ResponseHeadError> {
        parse_with(raw, &LIMITS)
    }

    fn parse_with(
        raw: &[u8],
        limits: &ResponseLimits,
    ) -> Result<Option<(u16, String, Version, usize)>, ResponseHeadError> {
        let mut slots = HeaderSlots::new();
        let head = parse_response_head(raw, &mut slots, limits)?;
        Ok(head.map(|h| (h.status, h.reason.to_string(), h.version, h.len)))
    }

    #[test]
    fn a_head_borrows_its_bytes_and_says_where_the_body_starts() {
        let raw = b"HTTP/1.1 404 Not Found\r\nETag: \"a\"\r\nContent-Length: 4\r\n\r\nbody";
        let mut slots = HeaderSlots::new();
        let head = parse_response_head(raw, &mut slots, &LIMITS).unwrap().unwrap();
        assert_eq!((head.status, head.reason, head.version), (404, "Not Found", Version::Http11));
        assert_eq!(&raw[head.len..], b"body");
        let fields: Vec<_> = head.fields().collect();
        assert_eq!(fields, vec![("ETag", &b"\"a\""[..]), ("Content-Length", &b"4"[..])]);
        assert_eq!(head.framing(false), Ok(BodyFraming::Length(4)));
        assert_eq!(head.framing(true), Ok(BodyFraming::Empty));
        assert!(head.keep_alive() && !head.is_interim());
    }

    #[test]
    fn partial_heads_wait_for_more() {
        assert_eq!(parse(b""), Ok(None));
        assert_eq!(parse(b"HTTP/1.1 200 OK\r\nA: b\r\n"), Ok(None));
        assert_eq!(
            parse(b"HTTP/1.0 200 \r\n\r\n"),
            Ok(Some((200, String::new(), Version::Http10, 17)))
        );
    }

    #[test]
    fn limits_hold_on_complete_and_partial_heads() {
        let crowded = b"HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\n\r\n";
        assert!(parse(crowded).unwrap().is_some());
        let fewer = ResponseLimits { max_fields: 3, ..LIMITS };
        assert_eq!(parse_with(crowded, &fewer), Err(ResponseHeadError::TooManyFields { limit: 3 }));
        let big = format!("HTTP/1.1 200 OK\r\nX: {}\r\n\r\n", "v".repeat(300));
        let too_large = Err(ResponseHeadError::TooLarge { limit: 256 });
        assert_eq!(parse(big.as_bytes()), too_large);
        assert_eq!(parse(&big.as_bytes()[..280]), too_large, "a partial head past the limit");
        let unbounded = ResponseLimits { max_head_bytes: usize::MAX, ..LIMITS };
        assert!(parse_with(big.as_bytes(), &unbounded).unwrap().is_some());
    }

    #[test]
    fn malformed_heads_are_refused() {
        for raw in [
            &b"HTTP/9 nonsense\r\n\r\n"[..],
            b"NOT HTTP\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nX : y\r\n\r\n",
        ] {
            assert!(matches!(parse(raw), Err(ResponseHeadError::Malformed(_))), "{raw:?}");
        }
        let e = parse(b"HTTP/1.1 2x0 OK\r\n\r\n").unwrap_err();
        assert_eq!(e.to_string(), "malformed response head: invalid response status");
    }

    #[test]
    fn interim_and_persistence() {
        let mut slots = HeaderSlots::new();
        let head = parse_response_head(b"HTTP/1.1 100 Continue\r\n\r\n", &mut slots, &LIMITS);
        assert!(head.unwrap().unwrap().is_interim());
        let mut slots = HeaderSlots::new();
        let old = parse_response_head(b"HTTP/1.0 200 OK\r\n\r\n", &mut slots, &LIMITS);
        assert!(!old.unwrap().unwrap().keep_alive(), "HTTP/1.0 closes unless keep-alive");
        let mut slots = HeaderSlots::new();
        let raw = b"HTTP/1.1 200 OK\r\nConnection: x, Close\r\n\r\n";
        let closing = parse_response_head(raw, &mut slots, &LIMITS).unwrap().unwrap();
        assert!(!closing.keep_alive());
        assert_eq!(closing.framing(false), Ok(BodyFraming::UntilClose));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(128))]
        #[test]
        fn never_panics_and_respects_limits(bytes in proptest::collection::vec(0u8..=255, 0..512)) {
            let mut slots = HeaderSlots::new();
            if let Ok(Some(head)) = parse_response_head(&bytes, &mut slots, &LIMITS) {
                proptest::prop_assert!(head.len <= 256);
                proptest::prop_assert!(head.fields().count() <= 4);
            }
        }
    }
}

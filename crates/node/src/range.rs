//! The `Range` header, single byte ranges only (RFC 9110 §14): parsed here once for every
//! representation the node answers ranges of (files, stored origin responses).

use crate::conditional::{if_range_allows, Validators};
use http1::RequestHead;

/// What to send for a `Range` request on a representation of a given length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RangeRequest {
    /// No usable range: send the whole representation with 200. Multiple ranges land here
    /// too; RFC 9110 lets a server ignore Range, and multipart bodies buy nothing here.
    Full,
    /// Send bytes `start..=end` with 206.
    Partial { start: u64, end: u64 },
    /// 416 with `Content-Range: bytes */len`.
    Unsatisfiable,
}

fn digits(s: &str) -> Option<u64> {
    (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.parse().ok())?
}

/// Interpret a `Range` header value for a representation of `len` bytes.
pub fn parse_range(value: &[u8], len: u64) -> RangeRequest {
    let Ok(value) = std::str::from_utf8(value) else {
        return RangeRequest::Full;
    };
    let value = value.trim();
    let Some(spec) = value.get(..6).filter(|u| u.eq_ignore_ascii_case("bytes=")) else {
        return RangeRequest::Full;
    };
    let spec = value[spec.len()..].trim();
    if spec.contains(',') {
        return RangeRequest::Full;
    }
    let Some((first, last)) = spec.split_once('-') else {
        return RangeRequest::Full;
    };
    let (first, last) = (first.trim(), last.trim());
    if first.is_empty() {
        return match digits(last) {
            None => RangeRequest::Full,
            Some(0) => RangeRequest::Unsatisfiable,
            Some(_) if len == 0 => RangeRequest::Unsatisfiable,
            Some(n) => RangeRequest::Partial { start: len.saturating_sub(n), end: len - 1 },
        };
    }
    let Some(start) = digits(first) else {
        return RangeRequest::Full;
    };
    let end = if last.is_empty() {
        u64::MAX
    } else {
        match digits(last) {
            Some(e) if e >= start => e,
            _ => return RangeRequest::Full,
        }
    };
    if start >= len {
        return RangeRequest::Unsatisfiable;
    }
    RangeRequest::Partial { start, end: end.min(len - 1) }
}

/// The range `head` asks of a representation of `len` bytes with validators `v`: `Full`
/// without `Range`, or when its `If-Range` does not match (the client's partial copy is of
/// another version, so it gets the whole of this one). The caller decides which methods
/// ranges apply to.
pub fn requested(head: &RequestHead, v: Validators<'_>, len: u64) -> RangeRequest {
    match head.header("range") {
        Some(r) if if_range_allows(head, v) => parse_range(r, len),
        _ => RangeRequest::Full,
    }
}

/// The `Content-Range` of a 206 carrying bytes `start..=end` of `len`.
pub fn content_range(start: u64, end: u64, len: u64) -> String {
    format!("bytes {start}-{end}/{len}")
}

/// The `Content-Range` of a 416: the length the range missed.
pub fn unsatisfied(len: u64) -> String {
    format!("bytes */{len}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use RangeRequest::*;

    #[test]
    fn forms() {
        let r = |s: &str| parse_range(s.as_bytes(), 100);
        assert_eq!(r("bytes=0-9"), Partial { start: 0, end: 9 });
        assert_eq!(r("bytes=90-"), Partial { start: 90, end: 99 });
        assert_eq!(r("bytes=90-1000"), Partial { start: 90, end: 99 });
        assert_eq!(r("bytes=-10"), Partial { start: 90, end: 99 });
        assert_eq!(r("bytes=-1000"), Partial { start: 0, end: 99 });
        assert_eq!(r("bytes=100-"), Unsatisfiable);
        assert_eq!(r("bytes=-0"), Unsatisfiable);
        assert_eq!(r("bytes=5-1"), Full);
        assert_eq!(r("bytes=0-1,5-6"), Full);
        assert_eq!(r("items=0-1"), Full);
        assert_eq!(r("bytes=x-1"), Full);
        assert_eq!(parse_range(b"bytes=-5", 0), Unsatisfiable);
    }
}

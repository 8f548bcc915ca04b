//! Conditional requests (RFC 9110 §13): If-None-Match, If-Modified-Since and If-Range.

use http1::{parse_http_date, RequestHead};
use std::time::UNIX_EPOCH;

/// The validators of one representation.
#[derive(Clone, Copy, Debug)]
pub struct Validators<'a> {
    /// The entity-tag, quotes included.
    pub etag: &'a str,
    /// Last modification, in whole seconds since the epoch (HTTP dates have no fraction).
    pub modified_secs: u64,
}

fn opaque(tag: &str) -> &str {
    tag.strip_prefix("W/").unwrap_or(tag)
}

fn date_secs(value: &[u8]) -> Option<u64> {
    let t = parse_http_date(std::str::from_utf8(value).ok()?).ok()?;
    t.duration_since(UNIX_EPOCH).ok().map(|d| d.as_secs())
}

/// Whether a GET or HEAD should be answered 304. If-None-Match (weak comparison) decides
/// when present; only without it does If-Modified-Since count, as §13.2.2 orders.
pub fn not_modified(head: &RequestHead, v: Validators<'_>) -> bool {
    let mut saw_inm = false;
    for value in head.header_values("if-none-match") {
        saw_inm = true;
        let Ok(list) = std::str::from_utf8(value) else {
            continue;
        };
        for tag in list.split(',').map(str::trim) {
            if tag == "*" || opaque(tag) == opaque(v.etag) {
                return true;
            }
        }
    }
    if saw_inm {
        return false;
    }
    head.header("if-modified-since")
        .and_then(date_secs)
        .is_some_and(|since| v.modified_secs <= since)
}

/// Whether a Range may be honoured under If-Range: it must match with a strong comparison
/// (a weak tag never matches) or be exactly the Last-Modified date.
pub fn if_range_allows(head: &RequestHead, v: Validators<'_>) -> bool {
    let Some(value) = head.header("if-range") else {
        return true;
    };
    let value = value.trim_ascii();
    if value.starts_with(b"\"") || value.starts_with(b"W/") {
        return !value.starts_with(b"W/") && value == v.etag.as_bytes();
    }
    date_secs(value) == Some(v.modified_secs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use http1::{parse_head, Limits};

    fn head(extra: &str) -> RequestHead {
        let text = format!("GET / HTTP/1.1\r\nHost: h\r\n{extra}\r\n");
        parse_head(text.as_bytes(), &Limits::default()).unwrap().unwrap().0
    }

    const V: Validators<'static> = Validators { etag: "\"abc\"", modified_secs: 784_111_777 };

    #[test]
    fn none_match() {
        assert!(not_modified(&head("If-None-Match: \"x\", \"abc\"\r\n"), V));
        assert!(not_modified(&head("If-None-Match: W/\"abc\"\r\n"), V));
        assert!(not_modified(&head("If-None-Match: *\r\n"), V));
        assert!(!not_modified(&head("If-None-Match: \"x\"\r\n"), V));
        // If-None-Match wins over a matching If-Modified-Since.
        let both = "If-None-Match: \"x\"\r\nIf-Modified-Since: Sun, 06 Nov 1994 08:49:37 GMT\r\n";
        assert!(!not_modified(&head(both), V));
    }

    #[test]
    fn modified_since() {
        assert!(not_modified(&head("If-Modified-Since: Sun, 06 Nov 1994 08:49:37 GMT\r\n"), V));
        assert!(!not_modified(&head("If-Modified-Since: Sun, 06 Nov 1994 08:49:36 GMT\r\n"), V));
        assert!(!not_modified(&head("If-Modified-Since: garbage\r\n"), V));
        assert!(!not_modified(&head(""), V));
    }

    #[test]
    fn if_range() {
        assert!(if_range_allows(&head(""), V));
        assert!(if_range_allows(&head("If-Range: \"abc\"\r\n"), V));
        assert!(!if_range_allows(&head("If-Range: W/\"abc\"\r\n"), V));
        assert!(!if_range_allows(&head("If-Range: \"x\"\r\n"), V));
        assert!(if_range_allows(&head("If-Range: Sun, 06 Nov 1994 08:49:37 GMT\r\n"), V));
        assert!(!if_range_allows(&head("If-Range: Sun, 06 Nov 1994 08:49:38 GMT\r\n"), V));
    }
}

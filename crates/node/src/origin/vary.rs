//! `Vary` (RFC 9111 §4.1): a stored response answers only requests that carry the same
//! values, for the header fields it names, as the request that fetched it. larder keys on
//! them: each combination of values is its own cache entry (see `store.rs`). `Vary: *`
//! is never stored (`freshness.rs`).

use super::fields::{values, Field};
use http1::RequestHead;

/// The lower-cased field names a response varies on, without duplicates, in order.
pub fn names(fields: &[Field]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for v in values(fields, "vary") {
        for t in v.split(|&b| b == b',') {
            let name = String::from_utf8_lossy(t.trim_ascii()).to_ascii_lowercase();
            if !name.is_empty() && !out.contains(&name) {
                out.push(name);
            }
        }
    }
    out
}

/// The part of a cache key that the request's values of `names` make: each value with
/// its fields joined by ", " (as §4.1 normalises), one line per name; empty without
/// names.
pub fn secondary_key(names: &[String], req: &RequestHead) -> String {
    let mut key = String::new();
    for name in names {
        let joined: Vec<String> = req
            .header_values(name)
            .map(|v| String::from_utf8_lossy(v.trim_ascii()).into_owned())
            .collect();
        key.push('\n');
        key.push_str(name);
        key.push(':');
        key.push_str(&joined.join(", "));
    }
    key
}

#[cfg(test)]
mod tests {
    use super::*;
    use http1::{parse_head, Limits};

    fn req(extra: &str) -> RequestHead {
        let text = format!("GET / HTTP/1.1\r\nHost: h\r\n{extra}\r\n");
        parse_head(text.as_bytes(), &Limits::default()).unwrap().unwrap().0
    }

    #[test]
    fn names_are_normalised() {
        let f: Vec<Field> = vec![
            ("Vary".into(), b"Accept-Encoding, ACCEPT".to_vec()),
            ("vary".into(), b"accept-encoding".to_vec()),
        ];
        assert_eq!(names(&f), ["accept-encoding", "accept"]);
    }

    #[test]
    fn key_distinguishes_values_and_absence() {
        let n = vec!["accept-encoding".to_string()];
        let gzip = secondary_key(&n, &req("Accept-Encoding: gzip\r\n"));
        assert_eq!(gzip, "\naccept-encoding:gzip");
        assert_ne!(gzip, secondary_key(&n, &req("Accept-Encoding: br\r\n")));
        assert_ne!(gzip, secondary_key(&n, &req("")));
        assert_eq!(secondary_key(&[], &req("Accept-Encoding: gzip\r\n")), "");
    }
}

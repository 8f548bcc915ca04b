//! `Vary` (RFC 9111 §4.1): a stored response answers only requests that carry the same
//! values, for the header fields it names, as the request that fetched it. larder keys on
//! them: each combination of values is its own cache entry (see `store.rs`). `Vary: *`
//! is never stored (`freshness.rs`).
//!
//! Values are normalised before keying, so requests that differ only in how they spell
//! the same thing share an entry (what the cache-tests suite asks of an optimal cache):
//! list items are trimmed and joined by ", " for every field, and the items of
//! `Accept-Encoding` and `Accept-Language`, whose order carries no preference beside their
//! q-values, are lower-cased, stripped of spaces and sorted.

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

/// Fields whose list items are a set: order, case and spaces do not change what they ask.
const UNORDERED: &[&str] = &["accept-encoding", "accept-language"];

/// The part of a cache key that the request's values of `names` make: each value with
/// its fields joined by ", " (as §4.1 normalises) and normalised (`normalise`), one line
/// per name; empty without names.
pub fn secondary_key(names: &[String], req: &RequestHead) -> String {
    let mut key = String::new();
    for name in names {
        key.push('\n');
        key.push_str(name);
        key.push(':');
        key.push_str(&normalise(name, req.header_values(name)));
    }
    key
}

/// The items of every line of the field `name` (lower-cased), trimmed and joined by ", ";
/// for [`UNORDERED`] fields also lower-cased, without spaces, and sorted.
fn normalise<'a>(name: &str, lines: impl Iterator<Item = &'a [u8]>) -> String {
    let unordered = UNORDERED.contains(&name);
    let mut items: Vec<String> = lines
        .flat_map(|v| v.split(|&b| b == b','))
        .map(|item| {
            let text = String::from_utf8_lossy(item.trim_ascii());
            match unordered {
                true => text.to_ascii_lowercase().replace([' ', '\t'], ""),
                false => text.into_owned(),
            }
        })
        .filter(|item| !item.is_empty())
        .collect();
    if unordered {
        items.sort();
    }
    items.join(", ")
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

    #[test]
    fn equivalent_values_share_a_key() {
        let key = |name: &str, extra: &str| secondary_key(&[name.to_string()], &req(extra));
        let lang = |v: &str| key("accept-language", &format!("Accept-Language: {v}\r\n"));
        assert_eq!(lang("en, de"), lang("de, en"));
        assert_eq!(lang("en, de"), lang("eN, De"));
        assert_eq!(lang("en, de"), lang(" en ,   de"));
        assert_ne!(lang("en, de"), lang("en"));
        let enc = |v: &str| key("accept-encoding", &format!("Accept-Encoding: {v}\r\n"));
        assert_eq!(enc("gzip, br;q=0.5"), enc("BR; q=0.5,gzip"));
        assert_eq!(key("foo", "Foo: 1,2\r\n"), key("foo", "Foo:  1, 2 \r\n"));
        assert_eq!(key("foo", "Foo: 1\r\nFoo: 2\r\n"), key("foo", "Foo: 1, 2\r\n"));
        assert_ne!(key("foo", "Foo: 1, 2\r\n"), key("foo", "Foo: 2, 1\r\n"), "order counts");
        assert_ne!(key("foo", "Foo: a\r\n"), key("foo", "Foo: A\r\n"), "case counts");
    }
}

//! Header fields of origin messages: a name and raw value each, looked up without regard
//! to case, and the hop-by-hop fields a cache must not store or forward (RFC 9110 §7.6.1).

/// One header field as received (name as the origin spelled it, value unparsed).
pub type Field = (String, Vec<u8>);

/// Fields that describe one connection, not the message: never stored, never forwarded.
const HOP_BY_HOP: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// Every value of the field `name`, in order.
pub fn values<'a>(fields: &'a [Field], name: &'a str) -> impl Iterator<Item = &'a [u8]> + 'a {
    fields.iter().filter(move |(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_slice())
}

/// The first value of the field `name`.
pub fn first<'a>(fields: &'a [Field], name: &str) -> Option<&'a [u8]> {
    fields.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_slice())
}

/// Whether `name` is hop-by-hop, by the fixed list or by being named in a `Connection`
/// field of the same message.
pub fn is_hop_by_hop(fields: &[Field], name: &str) -> bool {
    HOP_BY_HOP.iter().any(|h| h.eq_ignore_ascii_case(name))
        || values(fields, "connection")
            .flat_map(|v| v.split(|&b| b == b','))
            .any(|t| t.trim_ascii().eq_ignore_ascii_case(name.as_bytes()))
}

/// The fields of `req` to forward to the origin: neither hop-by-hop nor named in
/// `not_forwarded` (lower-case names the node sets itself).
pub fn forwarded<'a>(
    req: &'a http1::RequestHead,
    not_forwarded: &[&str],
) -> Vec<(&'a str, &'a [u8])> {
    let req_fields: Vec<Field> =
        req.headers.iter().map(|h| (h.name.clone(), h.value.clone())).collect();
    req.headers
        .iter()
        .filter(|h| {
            !not_forwarded.iter().any(|n| n.eq_ignore_ascii_case(&h.name))
                && !is_hop_by_hop(&req_fields, &h.name)
        })
        .map(|h| (h.name.as_str(), h.value.as_slice()))
        .collect()
}

/// `fields` without the hop-by-hop ones: what a cache may store and pass on.
pub fn end_to_end(fields: &[Field]) -> Vec<Field> {
    fields.iter().filter(|(n, _)| !is_hop_by_hop(fields, n)).cloned().collect()
}

/// Replace, in `stored`, every field the `update` carries (RFC 9111 §3.2: a 304 or a
/// HEAD response updates the stored header fields it names), keeping the rest.
pub fn update(stored: &[Field], update: &[Field]) -> Vec<Field> {
    let mut out: Vec<Field> = stored
        .iter()
        .filter(|(n, _)| !update.iter().any(|(u, _)| u.eq_ignore_ascii_case(n)))
        .cloned()
        .collect();
    out.extend(update.iter().filter(|(n, _)| !n.eq_ignore_ascii_case("content-length")).cloned());
    out
}

/// Fields from name/value pairs, as tests write them.
#[cfg(test)]
pub(super) fn from_pairs(pairs: &[(&str, &str)]) -> Vec<Field> {
    pairs.iter().map(|(n, v)| (n.to_string(), v.as_bytes().to_vec())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hop_by_hop_dropped_including_connection_named() {
        let fields = from_pairs(&[
            ("Connection", "keep-alive, X-Secret"),
            ("x-secret", "1"),
            ("Transfer-Encoding", "chunked"),
            ("ETag", "\"a\""),
        ]);
        assert_eq!(end_to_end(&fields), from_pairs(&[("ETag", "\"a\"")]));
        assert_eq!(first(&fields, "etag"), Some(&b"\"a\""[..]));
    }

    #[test]
    fn update_replaces_named_fields_only() {
        let stored = from_pairs(&[("ETag", "\"a\""), ("Cache-Control", "max-age=1"), ("X-A", "1")]);
        let upd = from_pairs(&[("cache-control", "max-age=9"), ("Content-Length", "0")]);
        let merged = update(&stored, &upd);
        assert_eq!(
            merged,
            from_pairs(&[("ETag", "\"a\""), ("X-A", "1"), ("cache-control", "max-age=9")])
        );
    }
}

//! Tokens of list fields (RFC 9110 §5.6.1), and what `Connection` says about keeping a
//! connection open (RFC 9112 §9.3), for requests and responses alike.

use crate::version::Version;

/// Whether the comma-separated list field `name` contains `token` (case-insensitive),
/// across all its field lines, as RFC 9110 §5.3 says lists may be split. Generic over
/// the fields, so each caller's hot path gets its own inlined copy.
#[inline]
pub fn has_token<'a>(
    mut fields: impl Iterator<Item = (&'a str, &'a [u8])>,
    name: &str,
    token: &str,
) -> bool {
    fields.any(|(n, v)| {
        n.eq_ignore_ascii_case(name)
            && v.split(|&b| b == b',')
                .any(|t| t.trim_ascii().eq_ignore_ascii_case(token.as_bytes()))
    })
}

/// Whether the connection stays open after this message: HTTP/1.1 persists unless
/// `Connection` says `close`; HTTP/1.0 closes unless it says `keep-alive`.
pub fn keep_alive<'a, I>(version: Version, fields: impl Fn() -> I) -> bool
where
    I: Iterator<Item = (&'a str, &'a [u8])>,
{
    if has_token(fields(), "connection", "close") {
        return false;
    }
    match version {
        Version::Http11 => true,
        Version::Http10 => has_token(fields(), "connection", "keep-alive"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields<'a>(
        list: &'a [(&'a str, &'a str)],
    ) -> impl Fn() -> std::vec::IntoIter<(&'a str, &'a [u8])> + 'a {
        move || list.iter().map(|(n, v)| (*n, v.as_bytes())).collect::<Vec<_>>().into_iter()
    }

    #[test]
    fn tokens_across_lines_in_any_case() {
        let f = [("Connection", "a, Close"), ("connection", " upgrade ")];
        assert!(has_token(fields(&f)(), "connection", "close"));
        assert!(has_token(fields(&f)(), "CONNECTION", "Upgrade"));
        assert!(!has_token(fields(&f)(), "connection", "clos"));
        assert!(!has_token(fields(&[("X", "close")])(), "connection", "close"));
    }

    #[test]
    fn persistence_by_version() {
        assert!(keep_alive(Version::Http11, fields(&[])));
        assert!(!keep_alive(Version::Http11, fields(&[("Connection", "x, close")])));
        assert!(!keep_alive(Version::Http10, fields(&[])));
        assert!(keep_alive(Version::Http10, fields(&[("Connection", "Keep-Alive")])));
        assert!(!keep_alive(Version::Http10, fields(&[("Connection", "keep-alive, close")])));
    }
}

//! The authority a request names: the `Host` field value, or the `host[:port]` of an
//! absolute-form target (RFC 9112 §3.2.2, §3.2; RFC 3986 §3.2).
//!
//! A proxy that forwards a `Host` it did not check lets a client put spaces, slashes or
//! other delimiters into what the next hop takes for a host name (cache keys, virtual
//! hosts, redirects built from it), so the grammar is checked byte by byte here.

/// Why an absolute-form target cannot be forwarded.
#[derive(Copy, Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AuthorityError {
    #[error("only http and https targets can be forwarded")]
    Scheme,
    #[error("the target's authority is empty or not a valid host[:port]")]
    Host,
}

/// An absolute-form target split for forwarding in origin-form.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Absolute<'a> {
    /// `host[:port]`, checked with [`is_valid_host`].
    pub authority: &'a str,
    /// What follows the authority: empty, `?query`, or `/path[?query]`. The origin-form
    /// target is this with a `/` in front when it does not start with one.
    pub rest: &'a str,
}

impl Absolute<'_> {
    /// Append the origin-form target (RFC 9112 §3.2.1) to `out`.
    pub fn origin_form(&self, out: &mut String) {
        if !self.rest.starts_with('/') {
            out.push('/');
        }
        out.push_str(self.rest);
    }
}

/// `Some` when `target` is in absolute-form (`scheme://…`); then `Ok` only for an `http`
/// or `https` target with a valid, non-empty host and no user information.
pub fn split_absolute(target: &str) -> Option<Result<Absolute<'_>, AuthorityError>> {
    let (scheme, after) = target.split_once("://")?;
    if scheme.is_empty()
        || !scheme.bytes().all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
    {
        return None;
    }
    if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
        return Some(Err(AuthorityError::Scheme));
    }
    let end = after.find(['/', '?']).unwrap_or(after.len());
    let (authority, rest) = after.split_at(end);
    if authority.is_empty() || !is_valid_host(authority.as_bytes()) {
        return Some(Err(AuthorityError::Host));
    }
    Some(Ok(Absolute { authority, rest }))
}

/// Whether `value` is a valid `Host` field value: `uri-host [ ":" port ]`, where the host
/// is an IP literal in brackets or a reg-name / IPv4 address (unreserved characters,
/// percent escapes, sub-delimiters). An empty value is valid (RFC 9110 §7.2: a target
/// without an authority is sent with an empty `Host`). User information (`@`) is not.
pub fn is_valid_host(value: &[u8]) -> bool {
    let (host, port) = match value.strip_prefix(b"[") {
        Some(literal) => {
            let Some(close) = literal.iter().position(|&b| b == b']') else { return false };
            let inside = &literal[..close];
            let ip_ok = !inside.is_empty()
                && inside.iter().all(|&b| b.is_ascii_hexdigit() || b == b':' || b == b'.');
            if !ip_ok {
                return false;
            }
            (&[][..], &literal[close + 1..])
        }
        None => match value.iter().position(|&b| b == b':') {
            Some(colon) => (&value[..colon], &value[colon..]),
            None => (value, &[][..]),
        },
    };
    let port_ok = match port.split_first() {
        None => true,
        Some((b':', digits)) => digits.len() <= 5 && digits.iter().all(u8::is_ascii_digit),
        Some(_) => false,
    };
    port_ok && is_reg_name(host)
}

/// RFC 3986 reg-name: unreserved / pct-encoded / sub-delims, any length.
fn is_reg_name(host: &[u8]) -> bool {
    let mut i = 0;
    while i < host.len() {
        let b = host[i];
        if b == b'%' {
            let escaped =
                host.get(i + 1..i + 3).is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit));
            if !escaped {
                return false;
            }
            i += 3;
            continue;
        }
        let unreserved = b.is_ascii_alphanumeric() || b"-._~".contains(&b);
        if !unreserved && !b"!$&'()*+,;=".contains(&b) {
            return false;
        }
        i += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts() {
        for good in [
            "",
            "a",
            "example.com",
            "a-b.c:8080",
            "10.0.0.1:80",
            "[::1]:81",
            "[::1]",
            "x%41y",
            "h:",
        ] {
            assert!(is_valid_host(good.as_bytes()), "{good:?}");
        }
        for bad in [
            "a b/c", "a/b", "u@h", "h:8x", "h:123456", "[::1", "[zz]", "a\tb", "%4", "h:1:2",
            "[::1]x",
        ] {
            assert!(!is_valid_host(bad.as_bytes()), "{bad:?}");
        }
    }

    #[test]
    fn absolute_targets() {
        let abs = |t| split_absolute(t);
        assert_eq!(abs("/x"), None);
        assert_eq!(abs("*"), None);
        let a = abs("http://other:81/x?y").unwrap().unwrap();
        assert_eq!((a.authority, a.rest), ("other:81", "/x?y"));
        for (target, origin) in [("HTTP://o", "/"), ("https://o?q", "/?q"), ("http://o/p", "/p")] {
            let mut out = String::new();
            abs(target).unwrap().unwrap().origin_form(&mut out);
            assert_eq!(out, origin, "{target}");
        }
        assert_eq!(abs("ftp://o/x"), Some(Err(AuthorityError::Scheme)));
        assert_eq!(abs("http:///x"), Some(Err(AuthorityError::Host)));
        assert_eq!(abs("http://u@o/x"), Some(Err(AuthorityError::Host)));
        assert_eq!(abs("http://a b/x"), Some(Err(AuthorityError::Host)));
    }
}

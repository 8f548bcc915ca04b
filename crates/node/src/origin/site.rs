//! Virtual hosts: which site a request is for, and so which `Host` the origin is sent and
//! under which key the answer is stored.
//!
//! With [`OriginHost::Origin`] (the default) there is one site: the origin gets its own
//! authority and a stored object's key is the request target. With
//! [`OriginHost::Client`] the client's `Host` goes to the origin and the key is
//! `//host/target` (the host in lower case), which no origin-form target can be, so two
//! sites' `/index.html` are two objects and a purge can name one site or all of them. A
//! request without `Host` (HTTP/1.0) is for the origin's own site.

use std::borrow::Cow;

use super::config::OriginHost;
use http1::RequestHead;

/// A request's `Host` that cannot name a site (not a valid `host[:port]`).
#[derive(Debug, PartialEq, Eq)]
pub(super) struct BadHost;

/// The store key of a request for its target.
pub(super) fn key(mode: OriginHost, req: &RequestHead) -> Result<Cow<'_, str>, BadHost> {
    Ok(key_on(checked_host(mode, req)?, &req.target))
}

/// [`host_to_send`], refused when it cannot name a site.
pub(super) fn checked_host(mode: OriginHost, req: &RequestHead) -> Result<Option<&[u8]>, BadHost> {
    match host_to_send(mode, req) {
        Some(host) if !http1::is_valid_host(host) => Err(BadHost),
        host => Ok(host),
    }
}

/// The store key of `target` on the site `host` (`None`: the origin's own site).
pub(super) fn key_on<'a>(host: Option<&[u8]>, target: &'a str) -> Cow<'a, str> {
    match host {
        None => Cow::Borrowed(target),
        Some(host) => {
            let mut key = String::with_capacity(2 + host.len() + target.len());
            key.push_str("//");
            key.extend(host.trim_ascii().iter().map(|&b| b.to_ascii_lowercase() as char));
            key.push_str(target);
            Cow::Owned(key)
        }
    }
}

/// The `Host` the origin is sent for `req`: the client's with [`OriginHost::Client`], else
/// `None` (the origin URL's authority).
pub(super) fn host_to_send(mode: OriginHost, req: &RequestHead) -> Option<&[u8]> {
    match mode {
        OriginHost::Origin => None,
        OriginHost::Client => req.header("host").map(<[u8]>::trim_ascii),
    }
}

/// The request target part of a store key (what follows its `//host`, if any).
pub(super) fn target_of(key: &str) -> &str {
    match key.strip_prefix("//") {
        Some(rest) => rest.find('/').map_or("", |at| &rest[at..]),
        None => key,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(host: Option<&str>) -> RequestHead {
        let host = host.map(|h| format!("Host: {h}\r\n")).unwrap_or_default();
        let text = format!("GET /a?b HTTP/1.1\r\n{host}\r\n");
        let limits = http1::Limits::default();
        let version = if host.is_empty() { "HTTP/1.0" } else { "HTTP/1.1" };
        let text = text.replace("HTTP/1.1", version);
        http1::parse_head(text.as_bytes(), &limits).unwrap().unwrap().0
    }

    #[test]
    fn one_site_keys_by_target_and_sends_no_host_of_its_own() {
        let req = request(Some("Shop.example"));
        assert_eq!(key(OriginHost::Origin, &req).unwrap(), "/a?b");
        assert_eq!(host_to_send(OriginHost::Origin, &req), None);
    }

    #[test]
    fn client_hosts_key_by_host_in_lower_case() {
        let req = request(Some("Shop.example:8080"));
        assert_eq!(key(OriginHost::Client, &req).unwrap(), "//shop.example:8080/a?b");
        assert_eq!(host_to_send(OriginHost::Client, &req), Some(&b"Shop.example:8080"[..]));
        assert_eq!(target_of("//shop.example:8080/a?b"), "/a?b");
        assert_eq!(target_of("/a?b"), "/a?b");
        let other = request(Some("blog.example"));
        assert_ne!(
            key(OriginHost::Client, &other).unwrap(),
            key(OriginHost::Client, &req).unwrap()
        );
        assert_eq!(key(OriginHost::Client, &request(None)).unwrap(), "/a?b");
    }
}

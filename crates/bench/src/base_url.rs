//! Where requests go: an `http://host[:port][/prefix]` URL, resolved once before the run so
//! name resolution never sits on the request path.

use std::net::{SocketAddr, ToSocketAddrs};

use crate::error::BenchError;

/// A resolved server address, the `Host` header to send, and the path prefix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BaseUrl {
    /// The URL as given, for reports.
    pub text: String,
    pub addr: SocketAddr,
    /// `host[:port]` exactly as written in the URL.
    pub host: String,
    /// The path of the URL, `/` when none was given.
    pub path: String,
}

impl BaseUrl {
    /// Parse and resolve `url`; only plain `http://` is supported.
    pub fn parse(url: &str) -> Result<Self, BenchError> {
        let bad = |reason| BenchError::BadUrl { url: url.to_string(), reason };
        let rest =
            url.strip_prefix("http://").ok_or_else(|| bad("only http:// URLs are supported"))?;
        let (authority, path) = match rest.find('/') {
            Some(i) => rest.split_at(i),
            None => (rest, "/"),
        };
        if authority.is_empty() {
            return Err(bad("no host"));
        }
        if authority.contains('@') {
            return Err(bad("user information is not supported"));
        }
        let with_port =
            if has_port(authority) { authority.to_string() } else { format!("{authority}:80") };
        let addr = with_port
            .to_socket_addrs()
            .map_err(|error| BenchError::Resolve { host: authority.to_string(), error })?
            .next()
            .ok_or_else(|| bad("host resolves to no address"))?;
        Ok(BaseUrl {
            text: url.to_string(),
            addr,
            host: authority.to_string(),
            path: path.to_string(),
        })
    }

    /// The request path for a logged `path` under this URL's prefix.
    pub fn join(&self, path: &str) -> String {
        let prefix = self.path.trim_end_matches('/');
        if path.starts_with('/') {
            format!("{prefix}{path}")
        } else {
            format!("{prefix}/{path}")
        }
    }
}

/// Whether `authority` names a port (`host:80`, `[::1]:80`), not just a host or a bare IPv6.
fn has_port(authority: &str) -> bool {
    match authority.rfind(':') {
        None => false,
        Some(i) => authority.starts_with('[') == authority[..i].ends_with(']'),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_host_port_and_path() {
        let u = BaseUrl::parse("http://127.0.0.1:8080/a/b?x=1").unwrap();
        assert_eq!(u.addr, "127.0.0.1:8080".parse().unwrap());
        assert_eq!(u.host, "127.0.0.1:8080");
        assert_eq!(u.path, "/a/b?x=1");
        let u = BaseUrl::parse("http://127.0.0.1").unwrap();
        assert_eq!(u.addr.port(), 80);
        assert_eq!(u.path, "/");
        let u = BaseUrl::parse("http://[::1]:9/").unwrap();
        assert_eq!(u.addr, "[::1]:9".parse().unwrap());
    }

    #[test]
    fn joins_logged_paths_under_the_prefix() {
        let root = BaseUrl::parse("http://127.0.0.1:1").unwrap();
        assert_eq!(root.join("/x/y.html"), "/x/y.html");
        let pre = BaseUrl::parse("http://127.0.0.1:1/site/").unwrap();
        assert_eq!(pre.join("/x"), "/site/x");
        assert_eq!(pre.join("x"), "/site/x");
    }

    #[test]
    fn rejects_what_it_cannot_send_to() {
        for url in ["https://127.0.0.1/", "127.0.0.1:80", "http:///x", "http://u@127.0.0.1/"] {
            assert!(BaseUrl::parse(url).is_err(), "{url}");
        }
    }
}

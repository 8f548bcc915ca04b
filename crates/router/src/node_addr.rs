//! A node's address as an operator writes it: `HOST:PORT` for plain HTTP, or
//! `https://HOST:PORT` for a node that speaks TLS, whose certificate must then be valid
//! for HOST (sent as SNI too). HOST may be a name: it is looked up once, when the address
//! is read (the config loaded or reloaded), and the first address found is used.

use std::fmt;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::str::FromStr;

use crate::RouterError;

/// Where a node is and how to speak to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeAddr {
    pub addr: SocketAddr,
    /// For a TLS node: the name its certificate must be valid for (a DNS name or an IP
    /// address), sent as SNI when it is a name.
    pub server_name: Option<String>,
}

const HTTPS: &str = "https://";

impl NodeAddr {
    pub fn plain(addr: SocketAddr) -> NodeAddr {
        NodeAddr { addr, server_name: None }
    }
}

impl FromStr for NodeAddr {
    type Err = RouterError;

    fn from_str(text: &str) -> Result<NodeAddr, RouterError> {
        let bad = |why: &str| RouterError::Config(format!("invalid node address `{text}`: {why}"));
        let (tls, rest) = match text.strip_prefix(HTTPS) {
            Some(rest) => (true, rest),
            None => (false, text.strip_prefix("http://").unwrap_or(text)),
        };
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        if rest.contains('/') {
            return Err(bad("a node is HOST:PORT or https://HOST:PORT, without a path"));
        }
        let (host, port) = rest.rsplit_once(':').ok_or_else(|| bad("no port"))?;
        let port: u16 = port.parse().map_err(|_| bad("the port is not a number"))?;
        let host = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
        if host.is_empty() {
            return Err(bad("no host"));
        }
        let addr = match host.parse::<IpAddr>() {
            Ok(ip) => SocketAddr::new(ip, port),
            Err(_) => (host, port)
                .to_socket_addrs()
                .map_err(|e| bad(&format!("cannot resolve {host}: {e}")))?
                .next()
                .ok_or_else(|| bad(&format!("{host} has no address")))?,
        };
        if tls && rustls::pki_types::ServerName::try_from(host).is_err() {
            return Err(bad("not a host name a certificate can be checked against"));
        }
        Ok(NodeAddr { addr, server_name: tls.then(|| host.to_string()) })
    }
}

impl fmt::Display for NodeAddr {
    /// The form [`NodeAddr::from_str`] reads back: a TLS node by its name when the name is
    /// an address, else by its address (the name then goes separately).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.server_name {
            None => write!(f, "{}", self.addr),
            Some(_) => write!(f, "{HTTPS}{}", self.addr),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_and_https_addresses() {
        let a: NodeAddr = "127.0.0.1:8081".parse().unwrap();
        assert_eq!(a, NodeAddr::plain("127.0.0.1:8081".parse().unwrap()));
        assert_eq!(a.to_string(), "127.0.0.1:8081");
        let t: NodeAddr = "https://127.0.0.1:8443".parse().unwrap();
        assert_eq!(t.server_name.as_deref(), Some("127.0.0.1"));
        assert_eq!(t.to_string(), "https://127.0.0.1:8443");
        let v6: NodeAddr = "https://[::1]:8443/".parse().unwrap();
        assert_eq!((v6.addr.port(), v6.server_name.as_deref()), (8443, Some("::1")));
        let named: NodeAddr = "https://localhost:8443".parse().unwrap();
        assert!(named.addr.ip().is_loopback());
        assert_eq!(named.server_name.as_deref(), Some("localhost"));
        assert_eq!("http://127.0.0.1:80".parse::<NodeAddr>().unwrap().server_name, None);
    }

    #[test]
    fn bad_addresses_say_why() {
        for (text, want) in [
            ("nonsense", "no port"),
            ("https://127.0.0.1", "no port"),
            ("127.0.0.1:http", "not a number"),
            ("https://:8443", "no host"),
            ("https://127.0.0.1:8443/x", "without a path"),
        ] {
            let err = text.parse::<NodeAddr>().unwrap_err().to_string();
            assert!(err.contains(want) && err.contains(text), "{text}: {err}");
        }
    }
}

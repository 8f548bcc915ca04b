//! Where the origins are and the limits of talking to them, with safe defaults.

use super::freshness::Defaults;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

/// One origin, from an `http://host:port[/base]` URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OriginUrl {
    pub host: String,
    pub port: u16,
    /// Prefixed to every request path (no trailing slash; empty for the root).
    pub base: String,
}

impl OriginUrl {
    /// Parse an origin URL. Only `http://` is spoken; a query or fragment is refused,
    /// since each request supplies its own.
    pub fn parse(url: &str) -> Result<OriginUrl, OriginUrlError> {
        let bad = || OriginUrlError(url.to_string());
        let rest = url.strip_prefix("http://").ok_or_else(bad)?;
        if rest.contains(['?', '#', '@']) || rest.bytes().any(|b| b <= b' ' || b >= 0x7f) {
            return Err(bad());
        }
        let (authority, base) = match rest.find('/') {
            Some(i) => (&rest[..i], rest[i..].trim_end_matches('/')),
            None => (rest, ""),
        };
        let (host, port) = match authority.rsplit_once(':') {
            Some((h, p)) if !h.ends_with(']') || h.starts_with('[') => {
                (h, p.parse::<u16>().map_err(|_| bad())?)
            }
            _ => (authority, 80),
        };
        let host = host.trim_start_matches('[').trim_end_matches(']');
        if host.is_empty() || port == 0 {
            return Err(bad());
        }
        Ok(OriginUrl { host: host.to_string(), port, base: base.to_string() })
    }

    /// The `Host` field value for requests to this origin.
    pub fn authority(&self) -> String {
        let host =
            if self.host.contains(':') { format!("[{}]", self.host) } else { self.host.clone() };
        if self.port == 80 {
            host
        } else {
            format!("{host}:{}", self.port)
        }
    }
}

impl std::fmt::Display for OriginUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "http://{}{}", self.authority(), self.base)
    }
}

/// An origin URL that cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("origin {0:?} is not an http://host[:port][/path] URL")]
pub struct OriginUrlError(pub String);

/// What a caching node does with an origin response that carries `Set-Cookie`.
///
/// A cookie belongs to the client whose request fetched it: a shared cache that stored
/// it with the response would hand one user's session to everyone after. Varnish's
/// built-in rules make such responses uncacheable, nginx does not store them unless told
/// to ignore `Set-Cookie`. Default is [`SetCookie::NeverStore`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum SetCookie {
    /// Not stored: the response goes to the client that fetched it and to no other; the
    /// requests that waited on that fetch fetch on their own.
    #[default]
    NeverStore,
    /// Stored with every Set-Cookie removed; the client that fetched it still gets its
    /// cookies, every other client the object without them. For origins that set
    /// tracking cookies on static files.
    StoreWithout,
}

/// Which `Host` a caching node sends the origin, and so what its cache keys name.
///
/// One origin URL names one site by default: every request goes to the origin with the
/// origin's own authority as `Host`, and the cache keys by path alone, as nginx's
/// `proxy_pass` and Traffic Server's remapping do. A client cannot then split the cache
/// by sending other names for the same site, nor reach a site the operator did not name.
/// Varnish's way is the other one, for one origin server hosting several sites: the
/// client's `Host` goes to the origin and is part of the cache key. Default is
/// [`OriginHost::Origin`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum OriginHost {
    /// The origin URL's authority; objects keyed by path (one site).
    #[default]
    Origin,
    /// The client's `Host` (compared without case); objects keyed by host and path, so
    /// each site has its own (virtual hosts).
    Client,
}

/// The node as a cache in front of origins (`larder node --origin`).
#[derive(Clone, Debug)]
pub struct OriginConfig {
    /// Tried in order: a request goes to the next when one cannot be reached.
    pub origins: Vec<OriginUrl>,
    /// Freshness, stale-if-error and grace for responses that do not state them.
    pub defaults: Defaults,
    /// Bound on one fetch from connect to the end of the response head, and on each wait
    /// for body bytes after it (504 when exceeded before the head).
    pub timeout: Duration,
    /// Idle keep-alive connections kept per origin.
    pub max_idle_per_origin: usize,
    /// Largest origin response head (502 beyond).
    pub max_head_bytes: usize,
    /// Most header fields in an origin response head (502 beyond).
    pub max_head_fields: usize,
    /// Responses that carry `Set-Cookie`. Default is [`SetCookie::NeverStore`].
    pub set_cookie: SetCookie,
    /// The `Host` sent to the origin and whether it keys the cache. Default is
    /// [`OriginHost::Origin`].
    pub host: OriginHost,
    /// How long a target whose origin response was not shareable (`Set-Cookie`,
    /// `no-store`, `private`, `Vary: *`) sends later requests straight to the origin
    /// instead of queueing them behind one fetch they could not use (Varnish's
    /// hit-for-miss); a cacheable response ends it at once. Zero turns it off. Default is
    /// 120 s.
    pub uncacheable_for: Duration,
    /// Peers besides loopback allowed to send invalidations (`wire::Invalidation`): the
    /// routers in front of this node. Anyone else could empty the cache at will, so the
    /// default is none (loopback only).
    pub invalidate_from: Vec<IpAddr>,
    /// The other nodes of the cluster (their listening addresses): the only ones a miss
    /// may be filled from when a router names one (`wire::PeerHint`) — never an address
    /// a request alone names. Default is none (every miss goes to the origin).
    pub peers: Vec<SocketAddr>,
    /// Bound on a fill from a peer, from connect to its response head and for each wait
    /// for body bytes after it; beyond it the miss is filled from the origin (what a
    /// peer already sent is kept when the origin's copy is the same). Default is 1 s.
    pub peer_timeout: Duration,
    /// Bytes per slice of an object too large to be stored whole (above the node's
    /// whole-object limit): such an object is stored as slices of this size, each fetched
    /// from the origin with a `Range` request and owned by one node of the cluster.
    /// Default is 1 MiB.
    pub slice_bytes: u64,
    /// Largest object stored as slices; a larger one is relayed uncached. Default is
    /// 1 GiB.
    pub max_object_bytes: u64,
    /// This node's own listening address, so it knows the slices it owns among
    /// [`OriginConfig::peers`] (set by the server from its listener).
    pub own_addr: Option<SocketAddr>,
}

impl OriginConfig {
    pub fn new(origins: Vec<OriginUrl>) -> OriginConfig {
        OriginConfig {
            origins,
            defaults: Defaults {
                ttl: Duration::from_secs(60),
                stale_if_error: Duration::from_secs(300),
                targeted: true,
                heuristic_percent: 10,
                heuristic_max: Duration::from_secs(86_400),
                // No grace unless the response asks for it: a stale object is revalidated
                // before it is served, as before grace existed (nginx, Squid and CDNs
                // honour only the origin's stale-while-revalidate; Varnish's 10 s is its
                // own default, and the origin experiment's Varnish caches nothing).
                stale_while_revalidate: Duration::ZERO,
            },
            timeout: Duration::from_secs(10),
            max_idle_per_origin: 32,
            max_head_bytes: 64 * 1024,
            max_head_fields: 128,
            set_cookie: SetCookie::NeverStore,
            host: OriginHost::Origin,
            uncacheable_for: Duration::from_secs(120),
            invalidate_from: Vec::new(),
            peers: Vec::new(),
            peer_timeout: Duration::from_secs(1),
            slice_bytes: 1 << 20,
            max_object_bytes: 1 << 30,
            own_addr: None,
        }
    }

    /// Whether `peer` may send invalidations.
    pub fn may_invalidate(&self, peer: IpAddr) -> bool {
        let peer = match peer {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(peer, IpAddr::V4),
            v4 => v4,
        };
        peer.is_loopback() || self.invalidate_from.contains(&peer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalidations_only_from_loopback_and_listed_peers() {
        let mut cfg = OriginConfig::new(Vec::new());
        let router: IpAddr = "10.0.0.7".parse().unwrap();
        assert!(cfg.may_invalidate("127.0.0.1".parse().unwrap()));
        assert!(cfg.may_invalidate("::1".parse().unwrap()));
        assert!(cfg.may_invalidate("::ffff:127.0.0.1".parse().unwrap()));
        assert!(!cfg.may_invalidate(router));
        cfg.invalidate_from.push(router);
        assert!(cfg.may_invalidate(router));
        assert!(cfg.may_invalidate("::ffff:10.0.0.7".parse().unwrap()));
        assert!(!cfg.may_invalidate("10.0.0.8".parse().unwrap()));
    }

    #[test]
    fn parses_origin_urls() {
        let u = OriginUrl::parse("http://127.0.0.1:8081/static/").unwrap();
        assert_eq!((u.host.as_str(), u.port, u.base.as_str()), ("127.0.0.1", 8081, "/static"));
        assert_eq!(u.to_string(), "http://127.0.0.1:8081/static");
        let u = OriginUrl::parse("http://example").unwrap();
        assert_eq!((u.port, u.authority()), (80, "example".to_string()));
        let u = OriginUrl::parse("http://[::1]:9000").unwrap();
        assert_eq!((u.host.as_str(), u.authority()), ("::1", "[::1]:9000".to_string()));
        for bad in [
            "https://a",
            "a:80",
            "http://",
            "http://a:0",
            "http://a:x",
            "http://a/?q",
            "http://u@a",
        ] {
            assert!(OriginUrl::parse(bad).is_err(), "{bad}");
        }
    }
}

//! The lines a node and a router print once they are listening, so whoever started them
//! (`larder up`, the experiment runner, tests) learns the bound address. Each type formats
//! its line ([`std::fmt::Display`]) and parses it back (`parse`).

use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;

/// `larder node: serving DIR on http://ADDR (cache N MiB[, direct I/O])` on stderr.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeReady {
    pub docroot: PathBuf,
    pub addr: SocketAddr,
    pub cache_mib: u64,
    pub direct_io: bool,
}

const NODE_PREFIX: &str = "larder node: serving ";
const DIRECT_IO: &str = ", direct I/O";

impl fmt::Display for NodeReady {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{NODE_PREFIX}{} on http://{} (cache {} MiB{})",
            self.docroot.display(),
            self.addr,
            self.cache_mib,
            if self.direct_io { DIRECT_IO } else { "" }
        )
    }
}

impl NodeReady {
    /// The line's parts; `None` for any other line. The docroot may itself contain
    /// ` on http://`: the address is after the last one.
    pub fn parse(line: &str) -> Option<NodeReady> {
        let rest = line.strip_prefix(NODE_PREFIX)?;
        let (docroot, after) = rest.rsplit_once(" on http://")?;
        let (addr, cache) = after.split_once(' ')?;
        let cache = cache.strip_prefix("(cache ")?.strip_suffix(')')?;
        let (cache, direct_io) = match cache.strip_suffix(DIRECT_IO) {
            Some(c) => (c, true),
            None => (cache, false),
        };
        Some(NodeReady {
            docroot: PathBuf::from(docroot),
            addr: addr.parse().ok()?,
            cache_mib: cache.strip_suffix(" MiB")?.parse().ok()?,
            direct_io,
        })
    }
}

/// The router's `listening` event: `{"addr":…,"admin":…,"level":"info","msg":"listening",
/// "threads":…}` on stderr (an [`crate::event`] line). It names the admin listener's bound
/// address too, so a router can be given port 0 for both and nobody has to guess a free
/// port (one found by binding and letting go can be taken by anyone's next connect).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RouterReady {
    pub addr: SocketAddr,
    /// The admin API's bound address; None when the router has no admin listener.
    pub admin: Option<SocketAddr>,
    /// Runtime worker threads.
    pub threads: usize,
    /// A peer's own node (`larder peer`), where the other peers' distributors reach it;
    /// None for a router of its own.
    pub backend: Option<SocketAddr>,
    /// The TLS listener's bound address; None when the router has none.
    pub tls: Option<SocketAddr>,
}

const LISTENING: &str = "listening";

impl fmt::Display for RouterReady {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut fields: Vec<(&str, &dyn fmt::Display)> =
            vec![("addr", &self.addr), ("threads", &self.threads)];
        if let Some(admin) = &self.admin {
            fields.push(("admin", admin));
        }
        if let Some(backend) = &self.backend {
            fields.push(("backend", backend));
        }
        if let Some(tls) = &self.tls {
            fields.push(("tls", tls));
        }
        f.write_str(&crate::event::line("info", LISTENING, &fields))
    }
}

impl RouterReady {
    /// The event's addresses and threads; `None` for any other line (or an admin address
    /// that does not parse).
    pub fn parse(line: &str) -> Option<RouterReady> {
        let event = crate::event::parse(line)?;
        if event.get("msg")?.as_str()? != LISTENING {
            return None;
        }
        let threads = match event.get("threads")? {
            serde_json::Value::String(s) => s.parse().ok()?,
            n => usize::try_from(n.as_u64()?).ok()?,
        };
        let address = |name: &str| -> Option<Option<SocketAddr>> {
            match event.get(name) {
                None => Some(None),
                Some(a) => Some(Some(a.as_str()?.parse().ok()?)),
            }
        };
        let (admin, backend, tls) = (address("admin")?, address("backend")?, address("tls")?);
        let addr = event.get("addr")?.as_str()?.parse().ok()?;
        Some(RouterReady { addr, admin, threads, backend, tls })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_line_round_trips() {
        let r = NodeReady {
            docroot: "/srv/a b".into(),
            addr: "127.0.0.1:4100".parse().unwrap(),
            cache_mib: 64,
            direct_io: true,
        };
        let line = r.to_string();
        assert_eq!(
            line,
            "larder node: serving /srv/a b on http://127.0.0.1:4100 (cache 64 MiB, direct I/O)"
        );
        assert_eq!(NodeReady::parse(&line), Some(r.clone()));
        let plain = NodeReady { direct_io: false, ..r };
        assert_eq!(NodeReady::parse(&plain.to_string()), Some(plain));
    }

    #[test]
    fn reads_the_address_lines() {
        let node = "larder node: serving /a on http://x on http://127.0.0.1:4100 (cache 2 MiB)";
        let parsed = NodeReady::parse(node).unwrap();
        assert_eq!(parsed.addr, "127.0.0.1:4100".parse().unwrap());
        assert_eq!((parsed.docroot.to_str(), parsed.cache_mib), (Some("/a on http://x"), 2));
        assert_eq!(NodeReady::parse("larder node: warning: open-file limit"), None);
        let router = r#"{"level":"info","msg":"listening","addr":"127.0.0.1:8080","threads":"2"}"#;
        let want = RouterReady {
            addr: "127.0.0.1:8080".parse().unwrap(),
            admin: None,
            threads: 2,
            backend: None,
            tls: None,
        };
        assert_eq!(RouterReady::parse(router), Some(want));
        let with_admin =
            r#"{"msg":"listening","addr":"127.0.0.1:1","admin":"127.0.0.1:2","threads":"1"}"#;
        assert_eq!(
            RouterReady::parse(with_admin).unwrap().admin,
            Some("127.0.0.1:2".parse().unwrap())
        );
        let bad_admin =
            r#"{"msg":"listening","addr":"127.0.0.1:1","admin":"nowhere","threads":"1"}"#;
        assert_eq!(RouterReady::parse(bad_admin), None);
        assert_eq!(RouterReady::parse(r#"{"msg":"node down","addr":"127.0.0.1:1"}"#), None);
        assert_eq!(RouterReady::parse("not json"), None);
    }

    #[test]
    fn router_line_is_an_event_and_round_trips() {
        let r = RouterReady {
            addr: "[::1]:80".parse().unwrap(),
            admin: None,
            threads: 4,
            backend: None,
            tls: None,
        };
        let line = r.to_string();
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!((v["level"].as_str(), v["msg"].as_str()), (Some("info"), Some("listening")));
        assert_eq!((v["addr"].as_str(), v["threads"].as_str()), (Some("[::1]:80"), Some("4")));
        assert_eq!(v.get("admin"), None);
        assert_eq!(RouterReady::parse(&line), Some(r));
        let with_admin = RouterReady { admin: Some("127.0.0.1:9090".parse().unwrap()), ..r };
        let line = with_admin.to_string();
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["admin"].as_str(), Some("127.0.0.1:9090"));
        assert_eq!(RouterReady::parse(&line), Some(with_admin));
        let peer = RouterReady { backend: Some("127.0.0.1:8081".parse().unwrap()), ..with_admin };
        assert_eq!(RouterReady::parse(&peer.to_string()), Some(peer));
        let tls = RouterReady { tls: Some("127.0.0.1:8443".parse().unwrap()), ..peer };
        assert_eq!(RouterReady::parse(&tls.to_string()), Some(tls));
    }
}

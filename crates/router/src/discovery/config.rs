//! `[discovery]`: which DNS names to ask, which nameserver, how often, and the checks
//! of all of it that need no nameserver (flags and config files are refused early).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::RouterError;

/// `[discovery]`: nodes found through DNS, merged with the `[[nodes]]` of the config.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct DiscoveryConfig {
    /// Ask every name again this often...
    pub refresh_ms: u64,
    /// ...or sooner when the shortest TTL of the last answers runs out, but never sooner
    /// than this after the last round.
    pub min_refresh_ms: u64,
    /// The nameserver, `IP` (port 53) or `IP:PORT`, asked over UDP (TCP when an answer is
    /// truncated); empty means the first `nameserver` of /etc/resolv.conf, else
    /// 127.0.0.1:53.
    pub resolver: String,
    /// How long one query waits for its answer.
    pub timeout_ms: u64,
    /// Tries per query.
    pub attempts: usize,
    /// The most nodes discovery adds over all names; answers beyond it are cut (by name
    /// order) and `/stats` says so.
    pub max_nodes: usize,
    /// The names to resolve.
    pub dns: Vec<DnsName>,
}

impl Default for DiscoveryConfig {
    fn default() -> Self {
        DiscoveryConfig {
            refresh_ms: 5000,
            min_refresh_ms: 1000,
            resolver: String::new(),
            timeout_ms: 2000,
            attempts: 2,
            max_nodes: 1024,
            dns: Vec::new(),
        }
    }
}

/// One DNS name whose answers are nodes.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DnsName {
    /// `a`: a host name (A and AAAA records); `srv`: the full SRV name, such as
    /// `_http._tcp.web.default.svc.cluster.local` or `web.service.consul`.
    pub name: String,
    /// `a`: the port every address serves on (required). `srv`: leave out (0); the
    /// records carry the ports.
    #[serde(default)]
    pub port: u16,
    #[serde(default)]
    pub kind: DnsKind,
    /// Weight of every node found under this name (0 drains them).
    #[serde(default = "one")]
    pub weight: u32,
    /// Poll the found nodes' `/.larder/load`.
    #[serde(default)]
    pub load_report: bool,
}

fn one() -> u32 {
    1
}

/// Which records name the nodes.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum DnsKind {
    /// A and AAAA records: addresses, served on the configured port.
    #[default]
    A,
    /// SRV records: target names and ports, each target resolved to its addresses.
    Srv,
}

impl DnsKind {
    pub fn name(self) -> &'static str {
        match self {
            DnsKind::A => "a",
            DnsKind::Srv => "srv",
        }
    }
}

impl DnsName {
    /// A name with its defaults.
    pub fn new(name: &str, port: u16, kind: DnsKind) -> DnsName {
        DnsName { name: name.to_string(), port, kind, weight: 1, load_report: false }
    }

    /// `NAME:PORT` as `--nodes-dns` takes it (A/AAAA records).
    pub fn parse_addresses(flag: &str) -> Result<DnsName, RouterError> {
        let bad = |why: &str| Err(RouterError::Config(format!("`{flag}`: {why}")));
        let Some((name, port)) = flag.rsplit_once(':') else {
            return bad("needs a port, as NAME:PORT (for example web.example.com:80)");
        };
        let Ok(port) = port.parse::<u16>() else {
            return bad("the port must be a number from 1 to 65535, as in NAME:PORT");
        };
        let n = DnsName::new(name, port, DnsKind::A);
        n.validate()?;
        Ok(n)
    }

    /// A full SRV name as `--nodes-srv` takes it.
    pub fn parse_srv(flag: &str) -> Result<DnsName, RouterError> {
        if flag.contains(':') {
            return Err(RouterError::Config(format!(
                "`{flag}`: SRV records carry the ports; give only the name \
                 (for example _http._tcp.web.default.svc.cluster.local)"
            )));
        }
        let n = DnsName::new(flag, 0, DnsKind::Srv);
        n.validate()?;
        Ok(n)
    }

    fn validate(&self) -> Result<(), RouterError> {
        let bad = |why: &str| Err(RouterError::Config(format!("discovery `{}`: {why}", self.name)));
        let name = self.name.strip_suffix('.').unwrap_or(&self.name);
        if name.is_empty() || name.len() > 253 {
            return bad("a DNS name of 1 to 253 characters is needed");
        }
        let label_ok = |l: &str| {
            (1..=63).contains(&l.len())
                && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        };
        if !name.split('.').all(label_ok) {
            return bad("not a DNS name (labels of letters, digits, `-` and `_`, split by dots)");
        }
        if name.parse::<IpAddr>().is_ok() {
            return bad("an address, not a name: give it as a node (`--node`, `[[nodes]]`)");
        }
        match (self.kind, self.port) {
            (DnsKind::A, 0) => bad("A/AAAA names need the port their nodes serve on"),
            (DnsKind::Srv, p) if p != 0 => bad("SRV records carry the ports; leave `port` out"),
            _ => Ok(()),
        }
    }
}

impl DiscoveryConfig {
    /// Check everything that can be checked without asking the nameserver.
    pub fn validate(&self) -> Result<(), RouterError> {
        let bad = |m: &str| Err(RouterError::Config(format!("discovery: {m}")));
        if self.refresh_ms == 0 || self.min_refresh_ms == 0 || self.timeout_ms == 0 {
            return bad("refresh_ms, min_refresh_ms and timeout_ms must be above 0");
        }
        if !(1..=10).contains(&self.attempts) || self.max_nodes == 0 {
            return bad("attempts must be 1 to 10 and max_nodes at least 1");
        }
        self.resolver_addr(None)?;
        for (i, n) in self.dns.iter().enumerate() {
            n.validate()?;
            if self.dns[..i].iter().any(|m| (&m.name, m.kind, m.port) == (&n.name, n.kind, n.port))
            {
                return Err(RouterError::Config(format!("discovery `{}` is listed twice", n.name)));
            }
        }
        Ok(())
    }

    /// The nameserver to ask; `resolv_conf` is /etc/resolv.conf's text, for an empty
    /// `resolver`.
    pub fn resolver_addr(&self, resolv_conf: Option<&str>) -> Result<SocketAddr, RouterError> {
        const LOOPBACK: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 53);
        let r = self.resolver.trim();
        if r.is_empty() {
            return Ok(resolv_conf.and_then(first_nameserver).unwrap_or(LOOPBACK));
        }
        r.parse::<SocketAddr>()
            .or_else(|_| r.parse::<IpAddr>().map(|ip| SocketAddr::new(ip, 53)))
            .map_err(|_| {
                RouterError::Config(format!("discovery: resolver `{r}` is not IP or IP:PORT"))
            })
    }

    /// How long to wait after a round whose answers had `shortest_ttl` (None when no
    /// answer had a TTL): `refresh_ms`, or the TTL when that is sooner, never below
    /// `min_refresh_ms`.
    pub fn next_wait(&self, shortest_ttl: Option<Duration>) -> Duration {
        let refresh = Duration::from_millis(self.refresh_ms);
        let floor = Duration::from_millis(self.min_refresh_ms);
        shortest_ttl.map_or(refresh, |ttl| refresh.min(ttl.max(floor)))
    }
}

/// The first `nameserver` line of a resolv.conf, on port 53.
pub fn first_nameserver(text: &str) -> Option<SocketAddr> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("nameserver"))
        .filter_map(|rest| rest.split_whitespace().next())
        .find_map(|ip| ip.parse::<IpAddr>().ok())
        .map(|ip| SocketAddr::new(ip, 53))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_next_round_follows_the_shortest_ttl_within_bounds() {
        let c = DiscoveryConfig::default();
        let s = Duration::from_secs;
        assert_eq!(c.next_wait(None), s(5));
        assert_eq!(c.next_wait(Some(s(300))), s(5));
        assert_eq!(c.next_wait(Some(s(2))), s(2));
        assert_eq!(c.next_wait(Some(s(0))), s(1), "never below min_refresh_ms");
        let fast = DiscoveryConfig { refresh_ms: 100, ..DiscoveryConfig::default() };
        assert_eq!(fast.next_wait(Some(s(0))), Duration::from_millis(100));
    }

    #[test]
    fn flags_and_settings_are_checked() {
        let n = DnsName::parse_addresses("web.example.com:8080").unwrap();
        assert_eq!((n.name.as_str(), n.port, n.kind), ("web.example.com", 8080, DnsKind::A));
        let s = DnsName::parse_srv("_http._tcp.web.default.svc.cluster.local").unwrap();
        assert_eq!((s.port, s.kind), (0, DnsKind::Srv));
        for (flag, want) in [
            ("web.example.com", "needs a port"),
            ("web.example.com:http", "port must be a number"),
            ("web.example.com:0", "need the port"),
            ("we b:80", "not a DNS name"),
            (":80", "1 to 253"),
            ("10.0.0.1:80", "an address"),
        ] {
            let err = DnsName::parse_addresses(flag).unwrap_err().to_string();
            assert!(err.contains(want), "{flag}: {err}");
        }
        assert!(DnsName::parse_srv("web:80").unwrap_err().to_string().contains("carry the ports"));

        let c = DiscoveryConfig { resolver: "10.0.0.53".into(), ..DiscoveryConfig::default() };
        assert_eq!(c.resolver_addr(None).unwrap(), "10.0.0.53:53".parse().unwrap());
        let c = DiscoveryConfig { resolver: "127.0.0.1:5353".into(), ..DiscoveryConfig::default() };
        assert_eq!(c.resolver_addr(None).unwrap(), "127.0.0.1:5353".parse().unwrap());
        let c = DiscoveryConfig::default();
        let conf =
            "# comment\nsearch svc.cluster.local\nnameserver fe80::1%eth0\nnameserver 10.96.0.10\n";
        assert_eq!(c.resolver_addr(Some(conf)).unwrap(), "10.96.0.10:53".parse().unwrap());
        assert_eq!(c.resolver_addr(Some("")).unwrap(), "127.0.0.1:53".parse().unwrap());
        for (c, want) in [
            (DiscoveryConfig { resolver: "dns".into(), ..c.clone() }, "not IP or IP:PORT"),
            (DiscoveryConfig { refresh_ms: 0, ..c.clone() }, "above 0"),
            (DiscoveryConfig { attempts: 0, ..c.clone() }, "attempts"),
            (DiscoveryConfig { dns: vec![n.clone(), n.clone()], ..c.clone() }, "listed twice"),
        ] {
            let err = c.validate().unwrap_err().to_string();
            assert!(err.contains(want), "{c:?}: {err}");
        }
    }
}

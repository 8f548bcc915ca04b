//! What DNS discovery found, without I/O: the `[discovery]` configuration, answers turned
//! into nodes and their names, the last good answer kept through resolver errors, when to
//! ask again, and the state `/stats` shows. Time is passed in. The loop that asks the
//! nameserver is `discovery`.
//!
//! Node identity is a DNS name, because placement hashes node names: an SRV target
//! (`pod-0.web.default.svc.cluster.local.`, a StatefulSet pod's own name) keeps its
//! node's place when the pod comes back on a new address; plain A/AAAA answers give only
//! addresses under one name, so each node is `name/address` and a new address is a new
//! node.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::json;

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

/// A node found under a name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Found {
    pub name: String,
    pub addr: SocketAddr,
}

/// What one name resolved to: its nodes and the shortest TTL among the records.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Answer {
    pub found: Vec<Found>,
    pub ttl: Option<Duration>,
}

/// One SRV record's target and port, with the addresses the target resolved to.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct SrvTarget {
    pub target: String,
    pub port: u16,
    pub ips: Vec<IpAddr>,
}

/// A name as nodes show it: lower case, no trailing dot.
fn plain(name: &str) -> String {
    name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase()
}

/// A/AAAA answers: one node per address on `port`, named `name/address`.
pub(crate) fn address_nodes(name: &str, port: u16, ips: &[IpAddr]) -> Vec<Found> {
    let name = plain(name);
    let found =
        ips.iter().map(|&ip| Found { name: format!("{name}/{ip}"), addr: (ip, port).into() });
    tidy(found.collect())
}

/// SRV answers: one node per target, named by the target; a target with several
/// addresses or ports gives one node per address and port, `target/address:port`.
pub(crate) fn srv_nodes(targets: &[SrvTarget]) -> Vec<Found> {
    let mut found = Vec::new();
    for t in targets {
        let target = plain(&t.target);
        let pairs = targets
            .iter()
            .filter(|u| plain(&u.target) == target)
            .map(|u| u.ips.len())
            .sum::<usize>();
        for &ip in &t.ips {
            let addr = SocketAddr::new(ip, t.port);
            let name = if pairs == 1 { target.clone() } else { format!("{target}/{addr}") };
            found.push(Found { name, addr });
        }
    }
    tidy(found)
}

/// Sorted by name, one node per address.
fn tidy(mut found: Vec<Found>) -> Vec<Found> {
    found.sort_by(|a, b| (&a.name, a.addr).cmp(&(&b.name, b.addr)));
    let mut seen = Vec::with_capacity(found.len());
    found.retain(|f| {
        let new = !seen.contains(&f.addr);
        seen.push(f.addr);
        new
    });
    found
}

/// One configured name and what is known of it.
#[derive(Clone, Debug)]
pub(crate) struct NameState {
    pub spec: DnsName,
    /// The nodes in force: the last good answer.
    pub found: Vec<Found>,
    /// The shortest TTL of the last answer, when the last round got one.
    pub ttl: Option<Duration>,
    pub last_refresh: Option<Instant>,
    pub last_ok: Option<Instant>,
    pub last_error: Option<String>,
    /// The nodes an empty answer replaced in this round, to put back if the round would
    /// leave the router with none.
    replaced: Option<Vec<Found>>,
}

/// Something worth an event line.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Note {
    /// A name could not be resolved; its last nodes stay.
    Failed { name: String, error: String },
    /// A name resolves again.
    Recovered { name: String },
    /// Every answer was empty: the last nodes stay rather than none.
    KeptRatherThanNone { name: String },
}

/// Why a name's last nodes stay although it answered.
const KEPT: &str = "empty answer: the last nodes stay rather than none";

/// Discovery's state across rounds.
#[derive(Debug, Default)]
pub(crate) struct Discovered {
    names: Vec<NameState>,
    resolver: Option<SocketAddr>,
    rounds: u64,
    next_at: Option<Instant>,
    cut: usize,
}

impl Discovered {
    /// Start a round over `names` (the config's, which a reload may have changed) asking
    /// `resolver` (none without names): the state of names still listed is kept, in the
    /// new order.
    pub fn begin(&mut self, names: &[DnsName], resolver: Option<SocketAddr>) {
        let mut old = std::mem::take(&mut self.names);
        self.names = names
            .iter()
            .map(|spec| match old.iter().position(|s| &s.spec == spec) {
                Some(i) => old.swap_remove(i),
                None => NameState {
                    spec: spec.clone(),
                    found: Vec::new(),
                    ttl: None,
                    last_refresh: None,
                    last_ok: None,
                    last_error: None,
                    replaced: None,
                },
            })
            .collect();
        self.resolver = resolver;
    }

    /// What name `i` resolved to at `now`, or why it could not be resolved (its last good
    /// nodes then stay).
    pub fn record(
        &mut self,
        i: usize,
        result: Result<Answer, String>,
        now: Instant,
    ) -> Option<Note> {
        let s = self.names.get_mut(i)?;
        s.last_refresh = Some(now);
        s.replaced = None;
        let name = s.spec.name.clone();
        match result {
            Ok(answer) => {
                s.last_ok = Some(now);
                s.ttl = answer.ttl;
                if answer.found.is_empty() && !s.found.is_empty() {
                    // Whether it stands is decided when every name has answered.
                    s.replaced = Some(std::mem::take(&mut s.found));
                    return None;
                }
                s.found = answer.found;
                s.last_error.take().map(|_| Note::Recovered { name })
            }
            Err(error) => {
                s.ttl = None;
                let repeated = s.last_error.as_deref() == Some(error.as_str());
                s.last_error = Some(error.clone());
                (!repeated).then_some(Note::Failed { name, error })
            }
        }
    }

    /// End the round: if every name answered empty and the config lists `static_nodes`
    /// = 0 nodes of its own, put the last nodes back rather than leave none.
    pub fn finish(&mut self, static_nodes: usize) -> Vec<Note> {
        let total: usize = self.names.iter().map(|s| s.found.len()).sum();
        let mut notes = Vec::new();
        for s in &mut self.names {
            let Some(last) = s.replaced.take() else { continue };
            let name = s.spec.name.clone();
            if total == 0 && static_nodes == 0 {
                s.found = last;
                if s.last_error.as_deref() != Some(KEPT) {
                    s.last_error = Some(KEPT.to_string());
                    notes.push(Note::KeptRatherThanNone { name });
                }
            } else if s.last_error.take().is_some() {
                notes.push(Note::Recovered { name });
            }
        }
        notes
    }

    /// The nodes in force, each with the name that found it: sorted by name, one per
    /// address, at most `max_nodes`.
    pub fn nodes(&mut self, max_nodes: usize) -> Vec<(&DnsName, &Found)> {
        let mut all: Vec<(&DnsName, &Found)> =
            self.names.iter().flat_map(|s| s.found.iter().map(move |f| (&s.spec, f))).collect();
        all.sort_by(|a, b| a.1.name.cmp(&b.1.name));
        let mut seen = Vec::with_capacity(all.len());
        all.retain(|(_, f)| {
            let new = !seen.contains(&f.addr);
            seen.push(f.addr);
            new
        });
        self.cut = all.len().saturating_sub(max_nodes);
        all.truncate(max_nodes);
        all
    }

    /// The shortest TTL of this round's answers.
    pub fn shortest_ttl(&self) -> Option<Duration> {
        self.names.iter().filter_map(|s| s.ttl).min()
    }

    /// The round's nodes are in the membership at `now`; the next round is at `next_at`.
    pub fn applied(&mut self, next_at: Instant) {
        self.rounds += 1;
        self.next_at = Some(next_at);
    }

    /// The `/stats` view at `now`.
    pub fn status(&self, now: Instant) -> serde_json::Value {
        let ago =
            |at: Option<Instant>| at.map(|at| now.saturating_duration_since(at).as_millis() as u64);
        let names: Vec<_> = self
            .names
            .iter()
            .map(|s| {
                json!({
                    "name": s.spec.name,
                    "kind": s.spec.kind.name(),
                    "port": s.spec.port,
                    "nodes": s.found.iter().map(|f| json!({"name": f.name, "addr": f.addr.to_string()})).collect::<Vec<_>>(),
                    "ttl_s": s.ttl.map(|t| t.as_secs()),
                    "last_refresh_ms_ago": ago(s.last_refresh),
                    "last_ok_ms_ago": ago(s.last_ok),
                    "last_error": s.last_error,
                })
            })
            .collect();
        json!({
            "resolver": self.resolver.map(|r| r.to_string()),
            "refreshes": self.rounds,
            "next_refresh_in_ms": self.next_at.map(|at| at.saturating_duration_since(now).as_millis() as u64),
            "nodes_cut_by_max_nodes": self.cut,
            "names": names,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    fn found(name: &str, addr: &str) -> Found {
        Found { name: name.to_string(), addr: addr.parse().unwrap() }
    }

    #[test]
    fn addresses_become_nodes_named_by_name_and_address() {
        let nodes =
            address_nodes("Web.Example.", 8080, &[ip("10.0.0.2"), ip("::1"), ip("10.0.0.2")]);
        assert_eq!(
            nodes,
            vec![
                found("web.example/10.0.0.2", "10.0.0.2:8080"),
                found("web.example/::1", "[::1]:8080")
            ]
        );
    }

    #[test]
    fn srv_targets_become_nodes_named_by_target() {
        let t = |target: &str, port, ips: &[&str]| SrvTarget {
            target: target.to_string(),
            port,
            ips: ips.iter().map(|s| ip(s)).collect(),
        };
        let nodes = srv_nodes(&[
            t("pod-1.web.", 81, &["10.0.0.2"]),
            t("pod-0.web.", 80, &["10.0.0.1"]),
            t("multi.web.", 80, &["10.0.0.3", "10.0.0.4"]),
            t("gone.web.", 80, &[]),
        ]);
        assert_eq!(
            nodes,
            vec![
                found("multi.web/10.0.0.3:80", "10.0.0.3:80"),
                found("multi.web/10.0.0.4:80", "10.0.0.4:80"),
                found("pod-0.web", "10.0.0.1:80"),
                found("pod-1.web", "10.0.0.2:81"),
            ]
        );
        // The same pod on a new address keeps its name.
        let moved = srv_nodes(&[t("pod-0.web.", 80, &["10.0.0.9"])]);
        assert_eq!(moved, vec![found("pod-0.web", "10.0.0.9:80")]);
    }

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
    fn a_failed_name_keeps_its_last_nodes_and_says_so_once() {
        let spec = DnsName::new("web", 80, DnsKind::A);
        let mut d = Discovered::default();
        let t0 = Instant::now();
        d.begin(std::slice::from_ref(&spec), "127.0.0.1:53".parse().ok());
        let answer = Answer {
            found: vec![found("web/10.0.0.1", "10.0.0.1:80")],
            ttl: Some(Duration::from_secs(30)),
        };
        assert_eq!(d.record(0, Ok(answer.clone()), t0), None);
        assert!(d.finish(1).is_empty());
        assert_eq!(d.nodes(10).len(), 1);
        assert_eq!(d.shortest_ttl(), Some(Duration::from_secs(30)));

        let t1 = t0 + Duration::from_secs(5);
        d.begin(std::slice::from_ref(&spec), "127.0.0.1:53".parse().ok());
        let note = d.record(0, Err("timed out".into()), t1);
        assert_eq!(note, Some(Note::Failed { name: "web".into(), error: "timed out".into() }));
        assert_eq!(d.record(0, Err("timed out".into()), t1), None, "said once");
        assert!(d.finish(0).is_empty());
        assert_eq!(d.nodes(10)[0].1, &answer.found[0], "the last good answer stays");
        assert_eq!(d.shortest_ttl(), None);
        let status = d.status(t1 + Duration::from_secs(1));
        assert_eq!(status["names"][0]["last_error"], "timed out");
        assert_eq!(status["names"][0]["last_ok_ms_ago"], 6000);

        assert_eq!(d.record(0, Ok(answer), t1), Some(Note::Recovered { name: "web".into() }));
    }

    #[test]
    fn empty_answers_never_leave_the_router_without_nodes() {
        let specs = [DnsName::new("a", 80, DnsKind::A), DnsName::new("b", 80, DnsKind::A)];
        let resolver = "127.0.0.1:53".parse().ok();
        let now = Instant::now();
        let one = |name: &str, addr: &str| Answer { found: vec![found(name, addr)], ttl: None };
        let mut d = Discovered::default();
        d.begin(&specs, resolver);
        d.record(0, Ok(one("a/10.0.0.1", "10.0.0.1:80")), now);
        d.record(1, Ok(one("b/10.0.0.2", "10.0.0.2:80")), now);
        d.finish(0);
        // One name empties: applied, the other still has nodes.
        d.begin(&specs, resolver);
        d.record(0, Ok(Answer::default()), now);
        d.record(1, Ok(one("b/10.0.0.2", "10.0.0.2:80")), now);
        assert!(d.finish(0).is_empty());
        assert_eq!(d.nodes(10).len(), 1);
        // Both empty, no static node: the last nodes stay.
        d.begin(&specs, resolver);
        d.record(0, Ok(Answer::default()), now);
        d.record(1, Ok(Answer::default()), now);
        assert_eq!(d.finish(0), vec![Note::KeptRatherThanNone { name: "b".into() }]);
        assert_eq!(d.nodes(10).len(), 1);
        d.begin(&specs, resolver);
        d.record(1, Ok(Answer::default()), now);
        assert!(d.finish(0).is_empty(), "said once");
        assert_eq!(d.nodes(10).len(), 1);
        // With static nodes the empty answer is applied.
        d.begin(&specs, resolver);
        d.record(1, Ok(Answer::default()), now);
        assert_eq!(d.finish(2), vec![Note::Recovered { name: "b".into() }]);
        assert!(d.nodes(10).is_empty());
    }

    #[test]
    fn nodes_are_bounded_and_one_per_address() {
        let specs = [DnsName::new("a", 80, DnsKind::A), DnsName::new("b", 80, DnsKind::A)];
        let mut d = Discovered::default();
        d.begin(&specs, "127.0.0.1:53".parse().ok());
        let now = Instant::now();
        let answer = |names: &[(&str, &str)]| Answer {
            found: names.iter().map(|(n, a)| found(n, a)).collect(),
            ttl: None,
        };
        d.record(0, Ok(answer(&[("a/1", "10.0.0.1:80"), ("a/2", "10.0.0.2:80")])), now);
        d.record(1, Ok(answer(&[("b/1", "10.0.0.1:80"), ("b/3", "10.0.0.3:80")])), now);
        let names: Vec<String> = d.nodes(10).iter().map(|(_, f)| f.name.clone()).collect();
        assert_eq!(names, ["a/1", "a/2", "b/3"]);
        assert_eq!(d.nodes(2).len(), 2);
        assert_eq!(d.status(now)["nodes_cut_by_max_nodes"], 1);
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

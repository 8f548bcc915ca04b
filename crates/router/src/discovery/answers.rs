//! DNS answers turned into nodes, without I/O.
//!
//! Node identity is a DNS name, because placement hashes node names: an SRV target
//! (`pod-0.web.default.svc.cluster.local.`, a StatefulSet pod's own name) keeps its
//! node's place when the pod comes back on a new address; plain A/AAAA answers give only
//! addresses under one name, so each node is `name/address` and a new address is a new
//! node.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    pub(crate) fn found(name: &str, addr: &str) -> Found {
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
}

//! What `larder route`'s flags change in a configuration: the simple case takes flags
//! alone, and flags given with a config file override its values (on every reload too).

use std::net::SocketAddr;
use std::path::Path;

use policy::{PlacementMode, PolicyKind};

use crate::config::{DnsName, NodeAddr, NodeConfig, RouterConfig};
use crate::RouterError;

/// Values given on the command line; `None`, empty or false leave the file's value. With
/// the `clap` feature these are `larder route`'s flags, help texts included.
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct Overrides {
    /// Address clients connect to [default: 0.0.0.0:8080].
    #[cfg_attr(feature = "clap", arg(long))]
    pub listen: Option<SocketAddr>,
    /// A back-end node, HOST:PORT, or https://HOST:PORT for a node that speaks TLS (its
    /// certificate checked against --node-ca for HOST) (repeat for each); replaces the
    /// config file's nodes.
    #[cfg_attr(feature = "clap", arg(long = "node", value_name = "ADDR"))]
    pub nodes: Vec<NodeAddr>,
    /// PEM file of the CA certificates that https:// nodes' certificates are checked
    /// against; re-read on SIGHUP.
    #[cfg_attr(feature = "clap", arg(long, value_name = "FILE"))]
    pub node_ca: Option<String>,
    /// Find nodes through DNS: every A and AAAA record of NAME is a node serving on PORT,
    /// named NAME/ADDRESS (repeat for each name). Merged with --node; replaces the config
    /// file's [[discovery.dns]]. Asked again every --dns-refresh-ms, sooner when the
    /// records' TTL runs out; a failed lookup keeps the nodes last found.
    #[cfg_attr(feature = "clap", arg(long = "nodes-dns", value_name = "NAME:PORT", value_parser = dns_flag))]
    pub nodes_dns: Vec<DnsName>,
    /// Find nodes through SRV records: NAME is the full SRV name (for example
    /// _http._tcp.web.default.svc.cluster.local); each target is a node on the record's
    /// port, named by the target, so it keeps its place when its address changes
    /// (repeat for each name). Merged as --nodes-dns.
    #[cfg_attr(feature = "clap", arg(long = "nodes-srv", value_name = "NAME", value_parser = srv_flag))]
    pub nodes_srv: Vec<DnsName>,
    /// The nameserver --nodes-dns and --nodes-srv ask, IP or IP:PORT (UDP; TCP for
    /// truncated answers) [default: the first nameserver in /etc/resolv.conf].
    #[cfg_attr(feature = "clap", arg(long, value_name = "ADDR"))]
    pub dns_resolver: Option<String>,
    // --help prints this text as written: its brackets are not links.
    #[allow(rustdoc::broken_intra_doc_links)]
    /// How often DNS discovery asks again, in milliseconds; sooner when a TTL runs out,
    /// but not within [discovery] min_refresh_ms (1000) [default: 5000].
    #[cfg_attr(feature = "clap", arg(long, value_name = "MS"))]
    pub dns_refresh_ms: Option<u64>,
    /// Distribution policy: rr, wrr, least, hash, bounded, lard, lard-r, hacc or class
    /// [default: rr].
    #[cfg_attr(feature = "clap", arg(long))]
    pub policy: Option<PolicyKind>,
    /// How lard, lard-r and hacc place a target this router has not placed: "shared"
    /// (alike on every router: candidates hashed on node names, a node that reports
    /// holding the target first) or "per-router" (the least loaded node now; several
    /// routers then disagree) [default: shared].
    #[cfg_attr(feature = "clap", arg(long, value_name = "MODE"))]
    pub placement: Option<PlacementMode>,
    /// Worker threads [default: one per core].
    #[cfg_attr(feature = "clap", arg(long))]
    pub threads: Option<usize>,
    /// Admin listener address; "" disables it [default: 127.0.0.1:9090].
    #[cfg_attr(feature = "clap", arg(long))]
    pub admin: Option<String>,
    /// Add X-Larder-Node (the serving node's name) to every response.
    #[cfg_attr(feature = "clap", arg(long))]
    pub node_header: bool,
    /// Add X-Larder-Router (this router's --name) to every response.
    #[cfg_attr(feature = "clap", arg(long))]
    pub router_header: bool,
    /// This router's name in X-Larder-Router [default: router-PID, its process id].
    #[cfg_attr(feature = "clap", arg(long))]
    pub name: Option<String>,
    /// Name the first node of a target's server set on requests sent to its other nodes
    /// (X-Larder-Peer), so caching nodes told each other's addresses (larder node --peer)
    /// fill a miss from the node holding the target before the origin.
    #[cfg_attr(feature = "clap", arg(long))]
    pub peer_fill: bool,
    /// Pass plain HTTP/1.1 client connections to the node of their first request, over
    /// the Unix socket a node on this host advertises (larder node --handoff-socket); the
    /// node serves the connection from then on. Other connections are relayed.
    #[cfg_attr(feature = "clap", arg(long))]
    pub handoff: bool,
    /// Bind --listen with SO_REUSEPORT, so several routers share the address.
    #[cfg_attr(feature = "clap", arg(long))]
    pub reuseport: bool,
    /// Access log: a file, or "-" for stdout.
    #[cfg_attr(feature = "clap", arg(long))]
    pub access_log: Option<String>,
    /// Accept queue of --listen (capped by net.core.somaxconn) [default: 4096].
    #[cfg_attr(feature = "clap", arg(long))]
    pub backlog: Option<u32>,
    /// Largest request body; a larger one is refused with 413, 0 means no limit
    /// [default: 1048576].
    #[cfg_attr(feature = "clap", arg(long))]
    pub max_body_bytes: Option<u64>,
    // --help prints this text as written: its brackets are not links.
    #[allow(rustdoc::broken_intra_doc_links)]
    /// Also serve HTTPS on this address (TLS 1.2 and 1.3, ALPN h2 and http/1.1), with
    /// --tls-cert and --tls-key; more certificates by SNI in the config's [tls] table.
    #[cfg_attr(feature = "clap", arg(long, value_name = "ADDR"))]
    pub tls_listen: Option<String>,
    /// PEM certificate chain (leaf first) for --tls-listen; re-read on SIGHUP.
    #[cfg_attr(feature = "clap", arg(long, value_name = "FILE"))]
    pub tls_cert: Option<String>,
    /// PEM private key of --tls-cert; re-read on SIGHUP.
    #[cfg_attr(feature = "clap", arg(long, value_name = "FILE"))]
    pub tls_key: Option<String>,
}

/// `--nodes-dns NAME:PORT`, or why not.
pub fn dns_flag(flag: &str) -> Result<DnsName, String> {
    DnsName::parse_addresses(flag).map_err(said)
}

/// `--nodes-srv NAME`, or why not.
pub fn srv_flag(flag: &str) -> Result<DnsName, String> {
    DnsName::parse_srv(flag).map_err(said)
}

/// The reason alone, as a flag's error shows it.
fn said(e: RouterError) -> String {
    match e {
        RouterError::Config(why) => why,
        other => other.to_string(),
    }
}

impl Overrides {
    /// The config file at `path` (or the defaults without one) with these values on top;
    /// the router checks it when it takes it ([`RouterConfig::validate`]).
    pub fn config(&self, path: Option<&Path>) -> Result<RouterConfig, RouterError> {
        let mut c = match path {
            Some(path) => RouterConfig::load(path)?,
            None => RouterConfig::default(),
        };
        self.apply(&mut c);
        Ok(c)
    }

    fn apply(&self, c: &mut RouterConfig) {
        if let Some(l) = self.listen {
            c.listen = l;
        }
        if !self.nodes.is_empty() {
            c.nodes = self.nodes.iter().map(|a| NodeConfig::at(a.clone())).collect();
        }
        if let Some(kind) = self.policy {
            c.policy.kind = kind;
        }
        if let Some(placement) = self.placement {
            c.policy.placement = placement;
        }
        if let Some(t) = self.threads {
            c.threads = t;
        }
        set(&mut c.admin.listen, &self.admin);
        c.node_header |= self.node_header;
        c.router_header |= self.router_header;
        if self.name.is_some() {
            c.name.clone_from(&self.name);
        }
        c.reuseport |= self.reuseport;
        c.peer_fill |= self.peer_fill;
        c.handoff.enabled |= self.handoff;
        if self.access_log.is_some() {
            c.access_log.clone_from(&self.access_log);
        }
        if !self.nodes_dns.is_empty() || !self.nodes_srv.is_empty() {
            c.discovery.dns = self.nodes_dns.iter().chain(&self.nodes_srv).cloned().collect();
        }
        set(&mut c.discovery.resolver, &self.dns_resolver);
        if let Some(ms) = self.dns_refresh_ms {
            c.discovery.refresh_ms = ms;
        }
        if let Some(b) = self.backlog {
            c.backlog = b;
        }
        if let Some(m) = self.max_body_bytes {
            c.limits.max_body_bytes = m;
        }
        set(&mut c.tls.listen, &self.tls_listen);
        set(&mut c.tls.cert, &self.tls_cert);
        set(&mut c.tls.key, &self.tls_key);
        set(&mut c.node_tls.ca, &self.node_ca);
    }
}

fn set(field: &mut String, value: &Option<String>) {
    if let Some(v) = value {
        field.clone_from(v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_override_the_file_and_absent_flags_keep_it() {
        let mut c =
            RouterConfig { name: Some("file".to_string()), threads: 3, ..Default::default() };
        c.nodes.push(NodeConfig::new("127.0.0.1:1".parse().unwrap()));
        let mut kept = c.clone();
        Overrides::default().apply(&mut kept);
        assert_eq!(kept, c);
        let flags = Overrides {
            nodes: vec!["127.0.0.1:2".parse().unwrap()],
            name: Some("r1".to_string()),
            router_header: true,
            reuseport: true,
            admin: Some(String::new()),
            backlog: Some(100),
            max_body_bytes: Some(7),
            ..Overrides::default()
        };
        flags.apply(&mut c);
        assert_eq!((c.name.as_deref(), c.threads, c.admin.listen.as_str()), (Some("r1"), 3, ""));
        assert_eq!((c.backlog, c.limits.max_body_bytes), (100, 7));
        assert!(c.router_header && c.reuseport && !c.node_header);
        assert_eq!(c.nodes, vec![NodeConfig::new("127.0.0.1:2".parse().unwrap())]);
        assert!(c.discovery.dns.is_empty());
    }

    #[test]
    fn https_nodes_and_their_ca_come_from_flags() {
        let flags = Overrides {
            nodes: vec!["https://127.0.0.1:8443".parse().unwrap(), "127.0.0.1:80".parse().unwrap()],
            node_ca: Some("ca.pem".to_string()),
            ..Overrides::default()
        };
        let c = flags.config(None).unwrap();
        c.validate().unwrap();
        assert_eq!(c.node_tls.ca, "ca.pem");
        let names: Vec<_> = c.nodes.iter().map(|n| n.server_name.as_deref()).collect();
        assert_eq!(names, [Some("127.0.0.1"), None]);
        let without_ca = Overrides { node_ca: None, ..flags };
        let err = without_ca.config(None).unwrap().validate().unwrap_err().to_string();
        assert!(err.contains("node_tls.ca"), "{err}");
    }

    #[test]
    fn dns_flags_replace_the_files_names_and_keep_its_nodes() {
        let mut c = RouterConfig::default();
        c.nodes.push(NodeConfig::new("127.0.0.1:1".parse().unwrap()));
        c.discovery.dns.push(DnsName::parse_addresses("old.example:80").unwrap());
        let flags = Overrides {
            nodes_dns: vec![DnsName::parse_srv("_http._tcp.web.example").unwrap()],
            dns_resolver: Some("127.0.0.1:5353".to_string()),
            dns_refresh_ms: Some(250),
            ..Overrides::default()
        };
        flags.apply(&mut c);
        assert_eq!(c.nodes.len(), 1);
        assert_eq!(c.discovery.dns, flags.nodes_dns);
        assert_eq!(
            (c.discovery.resolver.as_str(), c.discovery.refresh_ms),
            ("127.0.0.1:5353", 250)
        );
        c.nodes.clear();
        assert!(c.validate().is_ok(), "discovery alone is enough");
        c.discovery.dns.clear();
        assert!(c.validate().unwrap_err().to_string().contains("at least one node"));
    }
}

//! What `larder route`'s flags change in a configuration: the simple case takes flags
//! alone, and flags given with a config file override its values (on every reload too).

use std::net::SocketAddr;
use std::path::Path;

use crate::config::{DnsName, NodeConfig, RouterConfig};
use crate::RouterError;

/// Values given on the command line; `None`, empty or false leave the file's value.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Overrides {
    pub listen: Option<SocketAddr>,
    /// Replaces the file's nodes when not empty.
    pub nodes: Vec<SocketAddr>,
    pub policy: Option<String>,
    /// `shared` or `per-router` placement for lard, lard-r and hacc.
    pub placement: Option<String>,
    pub threads: Option<usize>,
    /// The admin listener; `""` disables it.
    pub admin: Option<String>,
    pub node_header: bool,
    pub router_header: bool,
    pub name: Option<String>,
    pub reuseport: bool,
    pub access_log: Option<String>,
    /// Names whose DNS records are nodes; replaces the file's `[[discovery.dns]]` when
    /// not empty.
    pub nodes_dns: Vec<DnsName>,
    /// The nameserver discovery asks.
    pub dns_resolver: Option<String>,
    pub dns_refresh_ms: Option<u64>,
    pub backlog: Option<u32>,
    pub max_body_bytes: Option<u64>,
    pub tls_listen: Option<String>,
    pub tls_cert: Option<String>,
    pub tls_key: Option<String>,
}

impl Overrides {
    /// The config file at `path` (or the defaults without one) with these values on top,
    /// checked.
    pub fn config(&self, path: Option<&Path>) -> Result<RouterConfig, RouterError> {
        let mut c = match path {
            Some(path) => RouterConfig::load(path)?,
            None => RouterConfig::default(),
        };
        self.apply(&mut c);
        c.validate()?;
        Ok(c)
    }

    fn apply(&self, c: &mut RouterConfig) {
        if let Some(l) = self.listen {
            c.listen = l;
        }
        if !self.nodes.is_empty() {
            c.nodes = self.nodes.iter().map(|a| NodeConfig::new(*a)).collect();
        }
        set(&mut c.policy.kind, &self.policy);
        set(&mut c.policy.placement, &self.placement);
        if let Some(t) = self.threads {
            c.threads = t;
        }
        set(&mut c.admin.listen, &self.admin);
        c.node_header |= self.node_header;
        c.router_header |= self.router_header;
        set(&mut c.name, &self.name);
        c.reuseport |= self.reuseport;
        set(&mut c.access_log, &self.access_log);
        if !self.nodes_dns.is_empty() {
            c.discovery.dns.clone_from(&self.nodes_dns);
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
        let mut c = RouterConfig { name: "file".to_string(), threads: 3, ..Default::default() };
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
        assert_eq!((c.name.as_str(), c.threads, c.admin.listen.as_str()), ("r1", 3, ""));
        assert_eq!((c.backlog, c.limits.max_body_bytes), (100, 7));
        assert!(c.router_header && c.reuseport && !c.node_header);
        assert_eq!(c.nodes, vec![NodeConfig::new("127.0.0.1:2".parse().unwrap())]);
        assert!(c.discovery.dns.is_empty());
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

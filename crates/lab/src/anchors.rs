//! The anchors operators run today, in front of the same nodes as larder route: HAProxy
//! (`balance uri`, `hash-type consistent`, `hash-balance-factor 125`; or plain consistent
//! hashing without the bound, `haproxy-consistent`) and nginx
//! (`hash … consistent`), each on one thread, and Varnish's shard director (vmod_directors,
//! consistent hashing on the key) with Varnish itself caching nothing (`return (pass)`), so
//! what is compared is where requests go, over the same caching nodes. Varnish runs a
//! thread per connection, as it always does.
//!
//! The anchors hash what larder's mapper keys on: the path for a static file, the view
//! (`/app/<db>/<view>`) for a dynamic document (HAProxy's `balance uri depth 3`, an nginx
//! `map`), as an operator who knows the application would configure them; hashing whole
//! dynamic URLs would only make them look worse.

use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{Context, LabError, Result};
use crate::nginx_conf;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Anchor {
    Haproxy,
    /// HAProxy's consistent hashing without bounded loads.
    HaproxyConsistent,
    Nginx,
    Varnish,
    /// A caching cluster of its own ([`crate::cache_tier`]): Varnish instances caching
    /// the origin, sharded by a front Varnish's shard director.
    VarnishCluster,
    /// A caching cluster of its own: nginx instances caching the origin by slices,
    /// behind an nginx front hashing the URL consistently.
    NginxSlice,
    /// A caching cluster without a front ([`crate::cache_tier`]): every Varnish takes
    /// clients, its shard director names the owner of a URL, and a non-owner passes the
    /// request to the owner, which caches the origin.
    VarnishSelfRouting,
}

impl Anchor {
    pub const ALL: [Anchor; 7] = [
        Anchor::Haproxy,
        Anchor::HaproxyConsistent,
        Anchor::Nginx,
        Anchor::Varnish,
        Anchor::VarnishCluster,
        Anchor::NginxSlice,
        Anchor::VarnishSelfRouting,
    ];
    /// The proxies the locality experiments compare by default.
    pub const PROXIES: [Anchor; 2] = [Anchor::Haproxy, Anchor::Nginx];
    /// The origin experiment's: the proxies and Varnish's shard director.
    pub const ORIGIN: [Anchor; 3] = [Anchor::Haproxy, Anchor::Nginx, Anchor::Varnish];
    /// The churn experiment's: bounded and plain consistent hashing.
    pub const CHURN: [Anchor; 3] = [Anchor::Haproxy, Anchor::HaproxyConsistent, Anchor::Nginx];

    pub fn name(self) -> &'static str {
        match self {
            Anchor::Haproxy => "haproxy",
            Anchor::HaproxyConsistent => "haproxy-consistent",
            Anchor::Nginx => "nginx",
            Anchor::Varnish => "varnish",
            Anchor::VarnishCluster => "varnish-cluster",
            Anchor::NginxSlice => "nginx-slice",
            Anchor::VarnishSelfRouting => "varnish-self-routing",
        }
    }

    /// Whether it caches the origin itself, in place of larder's nodes.
    pub fn caches(self) -> bool {
        matches!(self, Anchor::VarnishCluster | Anchor::NginxSlice | Anchor::VarnishSelfRouting)
    }

    /// Whether every cache takes clients itself, with no front-end before them.
    pub fn self_routing(self) -> bool {
        self == Anchor::VarnishSelfRouting
    }

    /// The routing front-end it runs in front of its nodes.
    fn front(self) -> Anchor {
        match self {
            Anchor::VarnishCluster | Anchor::VarnishSelfRouting => Anchor::Varnish,
            Anchor::NginxSlice => Anchor::Nginx,
            a => a,
        }
    }
}

impl fmt::Display for Anchor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where the anchors' executables are (None: that anchor is skipped).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tools {
    pub haproxy: Option<PathBuf>,
    pub nginx: Option<PathBuf>,
    /// `varnishd`.
    pub varnish: Option<PathBuf>,
}

impl Tools {
    /// The given paths, else `haproxy`/`nginx`/`varnishd` from PATH or /usr/sbin.
    pub fn find(
        haproxy: Option<PathBuf>,
        nginx: Option<PathBuf>,
        varnish: Option<PathBuf>,
    ) -> Tools {
        Tools {
            haproxy: haproxy.or_else(|| lookup("haproxy")),
            nginx: nginx.or_else(|| lookup("nginx")),
            varnish: varnish.or_else(|| lookup("varnishd")),
        }
    }

    pub(crate) fn path(&self, anchor: Anchor) -> Option<&PathBuf> {
        match anchor {
            Anchor::Haproxy | Anchor::HaproxyConsistent => self.haproxy.as_ref(),
            Anchor::Nginx | Anchor::NginxSlice => self.nginx.as_ref(),
            Anchor::Varnish | Anchor::VarnishCluster | Anchor::VarnishSelfRouting => {
                self.varnish.as_ref()
            }
        }
    }

    /// Why `anchor` cannot run here, if it cannot.
    pub fn missing(&self, anchor: Anchor) -> Option<String> {
        self.path(anchor).is_none().then(|| {
            let exe = match anchor.front() {
                Anchor::HaproxyConsistent => Anchor::Haproxy,
                a => a,
            };
            format!(
                "{exe} is not installed: bench/experiments.sh installs it, or give --{exe} PATH"
            )
        })
    }
}

fn lookup(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/usr/local/sbin")])
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// The nodes an anchor balances over.
pub struct Servers<'a> {
    /// (name, address) of every node, in order.
    pub nodes: &'a [(String, SocketAddr)],
    /// Each node's weight, in order (empty: all 1).
    pub weights: &'a [u32],
    /// Which nodes are in service from the start (empty: all). HAProxy lists the others
    /// `disabled`, to be enabled through its admin socket ([`haproxy_socket`]); the
    /// other anchors leave them out.
    pub members: &'a [bool],
}

impl Servers<'_> {
    fn member(&self, i: usize) -> bool {
        self.members.get(i).copied().unwrap_or(true)
    }
}

/// Where HAProxy, started with its configuration in `dir`, takes admin commands
/// (`enable server nodes/n4`, `disable server nodes/n4`).
pub fn haproxy_socket(dir: &Path) -> PathBuf {
    dir.join("haproxy.sock")
}

/// Writes the anchor's configuration into `dir` (listening on `addr`, balancing over
/// `servers`) and returns the command that runs it in the foreground. `shared`: other
/// instances listen on `addr` too (HAProxy binds with SO_REUSEPORT by default; nginx is
/// told `reuseport`).
pub fn command(
    anchor: Anchor,
    tools: &Tools,
    servers: &Servers<'_>,
    dir: &Path,
    addr: SocketAddr,
    shared: bool,
) -> Result<Command> {
    let (nodes, weights) = (servers.nodes, servers.weights);
    let weight = |i: usize| weights.get(i).copied().unwrap_or(1);
    let reuseport = if shared { " reuseport" } else { "" };
    let exe = tools
        .path(anchor)
        .ok_or_else(|| LabError::Invalid(format!("{anchor} is not installed")))?;
    let members = |line: &dyn Fn(&str, &SocketAddr, u32) -> String| {
        let lines = nodes.iter().enumerate().filter(|&(i, _)| servers.member(i));
        lines.map(|(i, (name, a))| line(name, a, weight(i))).collect::<Vec<_>>().join("\n")
    };
    let (file, conf) = match anchor {
        Anchor::Haproxy | Anchor::HaproxyConsistent => {
            let bound =
                if anchor == Anchor::Haproxy { "    hash-balance-factor 125\n" } else { "" };
            let lines: Vec<String> = nodes
                .iter()
                .enumerate()
                .map(|(i, (name, a))| {
                    let off = if servers.member(i) { "" } else { " disabled" };
                    format!("    server {name} {a} weight {}{off}", weight(i))
                })
                .collect();
            let socket = haproxy_socket(dir);
            (
                dir.join("haproxy.cfg"),
                format!(
                    "global\n    nbthread 1\n    maxconn 8000\n\
                     \x20   stats socket {} mode 600 level admin\n\
                     defaults\n    mode http\n    option http-keep-alive\n    timeout connect 5s\n\
                     \x20   timeout client 60s\n    timeout server 60s\n\
                     frontend f\n    bind {addr}\n    default_backend nodes\n\
                     backend nodes\n    balance uri depth 3\n    hash-type consistent\n\
                     {bound}{}\n",
                    socket.display(),
                    lines.join("\n")
                ),
            )
        }
        Anchor::Nginx | Anchor::NginxSlice => {
            let (d, temps) = (dir.display(), nginx_conf::temp_paths(dir));
            (
                dir.join("nginx.conf"),
                format!(
                    "daemon off;\nmaster_process off;\nworker_processes 1;\npid {d}/nginx.pid;\n\
                     error_log stderr warn;\nevents {{ worker_connections 20000; }}\n\
                     http {{\n    access_log off;\n{temps}\
                     \x20   map $uri $larder_key {{ ~^(/app/[^/]+/[^/]+)/ $1; default $uri; }}\n\
                     \x20   upstream nodes {{\n        hash $larder_key consistent;\n{}\n\
                     \x20       keepalive 128;\n    }}\n\
                     \x20   server {{\n        listen {addr}{reuseport};\n        location / {{\n\
                     \x20           proxy_pass http://nodes;\n            proxy_http_version 1.1;\n\
                     \x20           proxy_set_header Connection \"\";\n        }}\n    }}\n}}\n",
                    members(&|_, a, w| format!("        server {a} weight={w};"))
                ),
            )
        }
        Anchor::VarnishSelfRouting => {
            return Err(LabError::Invalid(format!(
                "{anchor} has no front-end: its caches take clients"
            )))
        }
        Anchor::Varnish | Anchor::VarnishCluster => {
            if shared {
                return Err(LabError::Invalid(
                    "varnish runs as one instance on an address (it has its own threads)".into(),
                ));
            }
            let (nodes, weights): (Vec<_>, Vec<u32>) = nodes
                .iter()
                .enumerate()
                .filter(|&(i, _)| servers.member(i))
                .map(|(i, n)| (n.clone(), weight(i)))
                .unzip();
            (dir.join("varnish.vcl"), varnish_vcl(&nodes, &weights))
        }
    };
    std::fs::write(&file, conf).with_context(|| format!("writing {}", file.display()))?;
    let mut cmd = Command::new(exe);
    match anchor {
        Anchor::Haproxy | Anchor::HaproxyConsistent => cmd.arg("-f").arg(&file).arg("-db"),
        Anchor::Nginx | Anchor::NginxSlice => cmd.arg("-c").arg(&file).arg("-p").arg(dir),
        // In the foreground, no jail (it runs as whoever runs the lab), its working
        // directory in the run's, and a little storage: passed responses only pass through.
        Anchor::Varnish | Anchor::VarnishCluster | Anchor::VarnishSelfRouting => cmd
            .args(["-F", "-j", "none", "-s", "malloc,16m", "-a"])
            .arg(addr.to_string())
            .arg("-f")
            .arg(&file)
            .arg("-n")
            .arg(dir.join("varnish")),
    };
    Ok(cmd)
}

/// Varnish as a routing tier: the shard director hashes the key the other anchors hash
/// (the path of a file, the view of a dynamic document) onto the nodes, and every request
/// is passed, never cached by Varnish, so the caches compared are the nodes'.
fn varnish_vcl(nodes: &[(String, SocketAddr)], weights: &[u32]) -> String {
    let backends: String = nodes
        .iter()
        .map(|(name, a)| {
            format!("backend {name} {{ .host = \"{}\"; .port = \"{}\"; }}\n", a.ip(), a.port())
        })
        .collect();
    let add: String = nodes
        .iter()
        .enumerate()
        .map(|(i, (name, _))| {
            let w = weights.get(i).copied().unwrap_or(1);
            format!("    nodes.add_backend({name}, weight={w});\n")
        })
        .collect();
    format!(
        "vcl 4.1;\nimport directors;\n\n{backends}\nsub vcl_init {{\n    new nodes = directors.shard();\n\
         {add}    nodes.reconfigure();\n}}\n\nsub vcl_recv {{\n\
         \x20   set req.backend_hint = nodes.backend(by=KEY,\n\
         \x20       key=nodes.key(regsub(req.url, \"^(/app/[^/]+/[^/]+)/.*$\", \"\\1\")));\n\
         \x20   return (pass);\n}}\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varnish_passes_everything_through_the_shard_director() {
        let nodes: Vec<(String, SocketAddr)> = (1..=2)
            .map(|i| (format!("n{i}"), SocketAddr::from(([127, 0, 0, 1], 7000 + i))))
            .collect();
        let vcl = varnish_vcl(&nodes, &[2]);
        assert!(vcl.starts_with("vcl 4.1;\nimport directors;"), "{vcl}");
        assert!(vcl.contains("backend n2 { .host = \"127.0.0.1\"; .port = \"7002\"; }"), "{vcl}");
        assert!(vcl.contains("new nodes = directors.shard();"), "{vcl}");
        assert!(
            vcl.contains("nodes.add_backend(n1, weight=2);\n    nodes.add_backend(n2, weight=1);"),
            "{vcl}"
        );
        assert!(vcl.contains("nodes.reconfigure();"), "{vcl}");
        assert!(vcl.contains("regsub(req.url, \"^(/app/[^/]+/[^/]+)/.*$\", \"\\1\")"), "{vcl}");
        assert!(vcl.contains("return (pass);"), "{vcl}");
        let dir = std::env::temp_dir();
        let tools = Tools { varnish: Some("/usr/sbin/varnishd".into()), ..Tools::default() };
        let addr = SocketAddr::from(([127, 0, 0, 1], 6081));
        let servers = Servers { nodes: &nodes, weights: &[], members: &[] };
        assert!(command(Anchor::Varnish, &tools, &servers, &dir, addr, true).is_err());
    }
}

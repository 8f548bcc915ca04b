//! The front-end under test: `larder route` with one policy, or one of the anchors
//! operators run today — HAProxy (`balance uri`, `hash-type consistent`,
//! `hash-balance-factor 125`) and nginx (`hash … consistent`) — each on one thread in
//! front of the same nodes.
//!
//! The anchors hash what larder's mapper keys on: the path for a static file, the view
//! (`/app/<db>/<view>`) for a dynamic document (HAProxy's `balance uri depth 3`, an nginx
//! `map`), as an operator who knows the application would configure them; hashing whole
//! dynamic URLs would only make them look worse.

use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::str::FromStr;
use std::time::Instant;

use anyhow::{bail, Context};
use toml::{Table, Value};

use crate::cmd::process::child::{self, Child};
use crate::cmd::process::probe;
use crate::cmd::process::signals::Signals;
use crate::cmd::up::router_config::RouterConfig;
use crate::cmd::up::{admin_address, router_address};

/// Every policy `larder route` has, by name.
const POLICIES: [&str; 9] =
    ["rr", "wrr", "least", "hash", "bounded", "lard", "lard-r", "hacc", "class"];

/// Directory levels of a HACC tree in the experiments (see `larder_config`).
const TREE_DEPTH: i64 = 3;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum System {
    Larder(String),
    Haproxy,
    Nginx,
}

impl FromStr for System {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "haproxy" => Ok(System::Haproxy),
            "nginx" => Ok(System::Nginx),
            p if POLICIES.contains(&p) => Ok(System::Larder(p.to_string())),
            _ => {
                Err(format!("{s:?}: expected a policy ({}), haproxy or nginx", POLICIES.join(", ")))
            }
        }
    }
}

impl fmt::Display for System {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            System::Larder(p) => f.write_str(p),
            System::Haproxy => f.write_str("haproxy"),
            System::Nginx => f.write_str("nginx"),
        }
    }
}

/// Where the anchors' executables are (None: that anchor is skipped).
#[derive(Clone, Debug, Default)]
pub struct Tools {
    pub haproxy: Option<PathBuf>,
    pub nginx: Option<PathBuf>,
}

impl Tools {
    /// The given paths, else `haproxy`/`nginx` from PATH or /usr/sbin.
    pub fn find(haproxy: Option<PathBuf>, nginx: Option<PathBuf>) -> Tools {
        Tools {
            haproxy: haproxy.or_else(|| lookup("haproxy")),
            nginx: nginx.or_else(|| lookup("nginx")),
        }
    }

    /// Why `system` cannot run here, if it cannot.
    pub fn missing(&self, system: &System) -> Option<String> {
        let missing = |name: &str| {
            Some(format!(
                "{name} is not installed: bench/experiments.sh installs it, or give --{name} PATH"
            ))
        };
        match system {
            System::Haproxy if self.haproxy.is_none() => missing("haproxy"),
            System::Nginx if self.nginx.is_none() => missing("nginx"),
            _ => None,
        }
    }
}

fn lookup(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/usr/local/sbin")])
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// How larder route is set up beyond its policy.
#[derive(Clone, Debug)]
pub struct RouterSetup {
    pub threads: usize,
    /// Pin the front-end to this CPU.
    pub cpu: Option<usize>,
    /// For `class`: the nodes (by name) that serve dynamic content.
    pub dynamic_pool: Vec<String>,
}

/// A started front-end and the address clients use.
pub struct Front {
    pub child: Child,
    pub addr: SocketAddr,
}

/// Starts `system` in front of `nodes`, writing its configuration into `dir`, and waits
/// until `probe_path` answers through it.
#[allow(clippy::too_many_arguments)]
pub fn start(
    system: &System,
    exe: &Path,
    tools: &Tools,
    setup: &RouterSetup,
    nodes: &[(String, SocketAddr)],
    dir: &Path,
    probe_path: &str,
    signals: &Signals,
    deadline: Instant,
) -> anyhow::Result<Front> {
    let (child, addr) = match system {
        System::Larder(policy) => {
            let config = dir.join("router.toml");
            larder_config(policy, setup, nodes).write(&config)?;
            let mut cmd = Command::new(exe);
            cmd.arg("route").arg("--config").arg(&config);
            if let Some(cpu) = setup.cpu {
                child::pin(&mut cmd, cpu);
            }
            let mut child = child::spawn("router", cmd, router_address, signals)?;
            let Some(addr) = child.address(deadline, signals)? else { bail!("interrupted") };
            (child, addr)
        }
        System::Haproxy | System::Nginx => {
            let addr = admin_address(None)?;
            let (name, mut cmd) = anchor_command(system, tools, nodes, dir, addr)?;
            if let Some(cpu) = setup.cpu {
                child::pin(&mut cmd, cpu);
            }
            (child::spawn(name, cmd, |_| None, signals)?, addr)
        }
    };
    match probe::answers(addr, probe_path, deadline, signals) {
        Ok(true) => Ok(Front { child, addr }),
        Ok(false) => bail!("interrupted"),
        Err(e) => {
            let tail = child.tail();
            Err(e).with_context(|| format!("{system} did not come up{tail}"))
        }
    }
}

fn larder_config(
    policy: &str,
    setup: &RouterSetup,
    nodes: &[(String, SocketAddr)],
) -> RouterConfig {
    let mut c = RouterConfig::new(None).expect("no file to read");
    c.set_policy(policy);
    c.set_nodes(nodes);
    c.set(None, "listen", "127.0.0.1:0");
    c.set(None, "threads", setup.threads as i64);
    c.set(Some("admin"), "listen", "");
    // HACC places subtrees. The default depth 1 would make every document of the stores
    // (`/d/…`) one tree and every view (`/app/…`) another; depth 3 makes a tree of each
    // leaf directory of the stores and of each view (`/app/<db>/<view>/`).
    c.set(Some("mapping"), "tree_depth", TREE_DEPTH);
    if policy == "class" {
        let pool = Table::from_iter([
            ("class".to_string(), Value::from(1)),
            ("nodes".to_string(), Value::from(setup.dynamic_pool.clone())),
            ("inner".to_string(), Value::from("least")),
        ]);
        c.set(Some("policy"), "classes", Value::Array(vec![pool.into()]));
    }
    c
}

fn anchor_command(
    system: &System,
    tools: &Tools,
    nodes: &[(String, SocketAddr)],
    dir: &Path,
    addr: SocketAddr,
) -> anyhow::Result<(&'static str, Command)> {
    let servers = |line: &dyn Fn(&str, &SocketAddr) -> String| {
        nodes.iter().map(|(name, a)| line(name, a)).collect::<Vec<_>>().join("\n")
    };
    match system {
        System::Haproxy => {
            let exe = tools.haproxy.as_ref().context("haproxy is not installed")?;
            let conf = format!(
                "global\n    nbthread 1\n    maxconn 8000\n\
                 defaults\n    mode http\n    option http-keep-alive\n    timeout connect 5s\n\
                 \x20   timeout client 60s\n    timeout server 60s\n\
                 frontend f\n    bind {addr}\n    default_backend nodes\n\
                 backend nodes\n    balance uri depth 3\n    hash-type consistent\n\
                 \x20   hash-balance-factor 125\n{}\n",
                servers(&|name, a| format!("    server {name} {a}"))
            );
            let file = dir.join("haproxy.cfg");
            std::fs::write(&file, conf).with_context(|| format!("writing {}", file.display()))?;
            let mut cmd = Command::new(exe);
            cmd.arg("-f").arg(&file).arg("-db");
            Ok(("haproxy", cmd))
        }
        System::Nginx => {
            let exe = tools.nginx.as_ref().context("nginx is not installed")?;
            let d = dir.display();
            let conf = format!(
                "daemon off;\nmaster_process off;\nworker_processes 1;\npid {d}/nginx.pid;\n\
                 error_log stderr warn;\nevents {{ worker_connections 20000; }}\n\
                 http {{\n    access_log off;\n    client_body_temp_path {d}/tmp;\n\
                 \x20   proxy_temp_path {d}/tmp;\n    fastcgi_temp_path {d}/tmp;\n\
                 \x20   uwsgi_temp_path {d}/tmp;\n    scgi_temp_path {d}/tmp;\n\
                 \x20   map $uri $larder_key {{ ~^(/app/[^/]+/[^/]+)/ $1; default $uri; }}\n\
                 \x20   upstream nodes {{\n        hash $larder_key consistent;\n{}\n\
                 \x20       keepalive 128;\n    }}\n\
                 \x20   server {{\n        listen {addr};\n        location / {{\n\
                 \x20           proxy_pass http://nodes;\n            proxy_http_version 1.1;\n\
                 \x20           proxy_set_header Connection \"\";\n        }}\n    }}\n}}\n",
                servers(&|_, a| format!("        server {a};"))
            );
            let file = dir.join("nginx.conf");
            std::fs::write(&file, conf).with_context(|| format!("writing {}", file.display()))?;
            let mut cmd = Command::new(exe);
            cmd.arg("-c").arg(&file).arg("-p").arg(dir);
            Ok(("nginx", cmd))
        }
        System::Larder(_) => unreachable!("larder route is not an anchor"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for name in POLICIES.iter().copied().chain(["haproxy", "nginx"]) {
            assert_eq!(name.parse::<System>().unwrap().to_string(), name);
        }
        assert!("envoy".parse::<System>().is_err());
    }

    #[test]
    fn class_config_names_the_dynamic_pool() {
        let setup =
            RouterSetup { threads: 1, cpu: None, dynamic_pool: vec!["n3".into(), "n4".into()] };
        let nodes = [("n1".to_string(), "127.0.0.1:1".parse().unwrap())];
        let dir = std::env::temp_dir().join(format!("larder-front-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("r.toml");
        larder_config("class", &setup, &nodes).write(&file).unwrap();
        let text = std::fs::read_to_string(&file).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let t: Table = text.parse().unwrap();
        assert_eq!(t["policy"]["kind"].as_str(), Some("class"));
        assert_eq!(t["policy"]["classes"][0]["nodes"][1].as_str(), Some("n4"));
        assert_eq!(t["threads"].as_integer(), Some(1));
    }
}

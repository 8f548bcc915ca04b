//! The back-end nodes of one run, started fresh (cold caches) for every front-end so no
//! front-end inherits the placement of the one before; what their load reports say
//! (cache hits and misses, disk reads); and the CPU time of any process we started.

use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

use crate::cmd::process::child::{self, Child};
use crate::cmd::process::probe;
use crate::cmd::process::signals::Signals;
use crate::cmd::up::node_address;

/// What one node is given.
#[derive(Clone, Debug)]
pub struct NodeSpec {
    pub cache_mb: u64,
    /// Pin the node to this CPU (as separate machines would not share a core).
    pub cpu: Option<usize>,
}

pub struct Nodes {
    pub children: Vec<Child>,
    /// (name, address) of each node, in order: n1, n2, …
    pub addrs: Vec<(String, SocketAddr)>,
}

/// Cumulative counters of one node's load report.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NodeCounters {
    pub hits: u64,
    pub misses: u64,
    pub disk_read_bytes: u64,
}

impl NodeCounters {
    /// What happened between `earlier` and `self`.
    pub fn since(&self, earlier: &NodeCounters) -> NodeCounters {
        NodeCounters {
            hits: self.hits.saturating_sub(earlier.hits),
            misses: self.misses.saturating_sub(earlier.misses),
            disk_read_bytes: self.disk_read_bytes.saturating_sub(earlier.disk_read_bytes),
        }
    }
}

/// Starts one node per spec on 127.0.0.1 and waits until each answers.
pub fn start(
    exe: &Path,
    docroot: &Path,
    specs: &[NodeSpec],
    extra: &[String],
    signals: &Signals,
    deadline: Instant,
) -> anyhow::Result<Nodes> {
    let mut nodes = Nodes { children: Vec::new(), addrs: Vec::new() };
    for (i, spec) in specs.iter().enumerate() {
        let mut cmd = Command::new(exe);
        cmd.arg("node").arg("--docroot").arg(docroot);
        cmd.args(["--listen", "127.0.0.1:0", "--cache-mb", &spec.cache_mb.to_string()]);
        cmd.args(extra);
        if let Some(cpu) = spec.cpu {
            child::pin(&mut cmd, cpu);
        }
        let name = format!("n{}", i + 1);
        nodes.children.push(child::spawn(&name, cmd, node_address, signals)?);
    }
    for node in &mut nodes.children {
        let Some(addr) = node.address(deadline, signals)? else { bail!("interrupted") };
        if !probe::answers(addr, "/.larder/load", deadline, signals)? {
            bail!("interrupted");
        }
        nodes.addrs.push((node.name.clone(), addr));
    }
    Ok(nodes)
}

impl Nodes {
    /// Every node's load report counters, in order.
    pub fn counters(&self) -> anyhow::Result<Vec<NodeCounters>> {
        self.addrs.iter().map(|(name, addr)| counters(*addr).context(name.clone())).collect()
    }

    /// CPU seconds the nodes have used so far, all together.
    pub fn cpu_seconds(&self) -> f64 {
        self.children.iter().map(|c| cpu_seconds(c.pid())).sum()
    }

    pub fn stop(&mut self, grace: Duration, signals: &Signals) {
        child::stop(&mut self.children, grace, signals);
    }
}

fn counters(addr: SocketAddr) -> anyhow::Result<NodeCounters> {
    let (code, body) = probe::fetch(addr, "/.larder/load")?;
    if code != 200 {
        bail!("load report answered {code}");
    }
    let v: serde_json::Value = serde_json::from_slice(&body).context("load report")?;
    let field = |k: &str| v.get(k).and_then(serde_json::Value::as_u64).unwrap_or(0);
    Ok(NodeCounters {
        hits: field("hits"),
        misses: field("misses"),
        disk_read_bytes: field("disk_read_bytes"),
    })
}

/// User plus system CPU seconds of process `pid` so far (0 if it is gone).
pub fn cpu_seconds(pid: u32) -> f64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return 0.0 };
    // The command name (field 2) may hold spaces; fields after its ')' are plain.
    let Some((_, rest)) = stat.rsplit_once(')') else { return 0.0 };
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the ')'.
    let ticks: u64 = fields.iter().skip(11).take(2).filter_map(|f| f.parse::<u64>().ok()).sum();
    // SAFETY: sysconf has no preconditions.
    let per_sec = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    ticks as f64 / per_sec.max(1) as f64
}

/// CPU seconds this process (the load generator) has used so far.
pub fn own_cpu_seconds() -> f64 {
    cpu_seconds(std::process::id())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_subtract() {
        let a = NodeCounters { hits: 10, misses: 5, disk_read_bytes: 100 };
        let b = NodeCounters { hits: 25, misses: 6, disk_read_bytes: 100 };
        assert_eq!(b.since(&a), NodeCounters { hits: 15, misses: 1, disk_read_bytes: 0 });
        assert_eq!(a.since(&b), NodeCounters::default());
    }

    #[test]
    fn own_cpu_time_is_read() {
        // Burn a little CPU so the counter cannot be 0 by accident of timing.
        let mut x = 0u64;
        let start = std::time::Instant::now();
        while start.elapsed() < Duration::from_millis(30) {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        assert!(own_cpu_seconds() > 0.0);
        assert_eq!(cpu_seconds(u32::MAX), 0.0);
    }
}

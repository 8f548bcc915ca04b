//! Starting `larder node`s on 127.0.0.1: one per spec, each waited for until it answers;
//! the running nodes' load reports and CPU time.

use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use crate::child::{self, Group};
use crate::cpu_time::cpu_seconds;
use crate::error::{Context, Result};
use crate::launcher::Launcher;
use crate::load_report::{self, NodeCounters};
use crate::probe;
use wire::LOAD_REPORT_PATH;

/// What one node is given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeSpec {
    pub cache_mb: u64,
    /// Pin the node to this CPU (as separate machines would not share a core).
    pub cpu: Option<usize>,
}

/// Running nodes, stopped when dropped.
pub struct Nodes {
    pub group: Group,
    /// (name, address) of each node, in order: n1, n2, …
    pub addrs: Vec<(String, SocketAddr)>,
}

/// Starts one node per spec serving `docroot` (with `extra` flags each) and waits until
/// each answers. None: a stop was requested meanwhile (the nodes started are stopped).
pub fn start(
    launcher: &Launcher,
    docroot: &Path,
    specs: &[NodeSpec],
    extra: &[String],
    deadline: Instant,
) -> Result<Option<Nodes>> {
    let content = [OsString::from("--docroot"), docroot.as_os_str().to_owned()];
    start_serving(launcher, &content, specs, extra, deadline)
}

/// Starts one node per spec caching in front of `origins` (each given as `--origin`, in
/// order), as [`start`] does.
pub fn start_caching(
    launcher: &Launcher,
    origins: &[String],
    specs: &[NodeSpec],
    extra: &[String],
    deadline: Instant,
) -> Result<Option<Nodes>> {
    let content: Vec<OsString> =
        origins.iter().flat_map(|o| [OsString::from("--origin"), OsString::from(o)]).collect();
    start_serving(launcher, &content, specs, extra, deadline)
}

/// Starts one node per spec told what to serve by `content` (its flags).
fn start_serving(
    launcher: &Launcher,
    content: &[OsString],
    specs: &[NodeSpec],
    extra: &[String],
    deadline: Instant,
) -> Result<Option<Nodes>> {
    let signals = launcher.signals;
    let mut nodes = Nodes { group: Group::new(launcher.grace, signals), addrs: Vec::new() };
    for (i, spec) in specs.iter().enumerate() {
        let mut cmd = Command::new(&launcher.exe);
        cmd.arg("node").args(content);
        cmd.args(["--listen", "127.0.0.1:0", "--cache-mb", &spec.cache_mb.to_string()]);
        cmd.args(extra);
        if let Some(cpu) = spec.cpu {
            child::pin(&mut cmd, cpu);
        }
        let name = format!("n{}", i + 1);
        let node = child::spawn(
            &name,
            cmd,
            |line| wire::NodeReady::parse(line).map(|r| r.addr),
            &signals,
            &launcher.logs,
        )?;
        nodes.group.children.push(node);
    }
    for node in &mut nodes.group.children {
        let Some(addr) = node.address(deadline, &signals)? else { return Ok(None) };
        let answered = probe::answers(addr, LOAD_REPORT_PATH, deadline, &signals)
            .with_context(|| node.describe())?;
        if !answered {
            return Ok(None);
        }
        nodes.addrs.push((node.name.clone(), addr));
    }
    Ok(Some(nodes))
}

impl Nodes {
    /// Every node's load report counters, in order.
    pub fn counters(&self) -> Result<Vec<NodeCounters>> {
        self.addrs
            .iter()
            .map(|(name, addr)| load_report::read(*addr).context(name.clone()))
            .collect()
    }

    /// CPU seconds the nodes have used so far, all together.
    pub fn cpu_seconds(&self) -> f64 {
        self.group.children.iter().map(|c| cpu_seconds(c.pid())).sum()
    }
}

//! Starting `larder node`s on 127.0.0.1 (or each on its host): one per spec, each waited for until it answers;
//! the running nodes' load reports and CPU time.

use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use crate::child::{self, Group};
use crate::cpu_time::group_cpu_seconds;
use crate::error::{Context, Result};
use crate::launcher::{free_local_addresses, Launcher};
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
    start_serving(launcher, &content, specs, extra, None, deadline)
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
    // Each node's address is chosen before any starts, so every node can be told the
    // others' (its peers, which alone it may fill a miss from).
    let picked = free_local_addresses(specs.len())?;
    let mut listen = Vec::with_capacity(specs.len());
    for (i, addr) in picked.into_iter().enumerate() {
        listen.push(launcher.address_on(&node_name(i), addr)?);
    }
    let mut extra = extra.to_vec();
    extra.extend(listen.iter().flat_map(|a| ["--peer".to_string(), a.to_string()]));
    start_serving(launcher, &content, specs, &extra, Some(&listen), deadline)
}

/// The name of the `i`th node started (from 0).
pub(crate) fn node_name(i: usize) -> String {
    format!("n{}", i + 1)
}

/// Starts one node per spec told what to serve by `content` (its flags).
fn start_serving(
    launcher: &Launcher,
    content: &[OsString],
    specs: &[NodeSpec],
    extra: &[String],
    listen: Option<&[SocketAddr]>,
    deadline: Instant,
) -> Result<Option<Nodes>> {
    let signals = launcher.signals.clone();
    let mut nodes = Nodes {
        group: Group::new(launcher.grace, signals, launcher.report.clone()),
        addrs: Vec::new(),
    };
    let any = SocketAddr::from(([127, 0, 0, 1], 0));
    for (i, spec) in specs.iter().enumerate() {
        let name = node_name(i);
        let at = listen.and_then(|l| l.get(i).copied()).unwrap_or(any);
        let node = spawn(launcher, content, spec, extra, &name, at)?;
        nodes.group.children.push(node);
    }
    for node in &mut nodes.group.children {
        let Some(addr) = ready(node, launcher, deadline)? else { return Ok(None) };
        nodes.addrs.push((node.name.clone(), addr));
    }
    Ok(Some(nodes))
}

/// Starts node `name` serving `docroot` on `listen` (port 0: any free one) and waits
/// until it answers: its process and address. None: a stop was requested meanwhile.
pub fn start_one(
    launcher: &Launcher,
    docroot: &Path,
    spec: &NodeSpec,
    extra: &[String],
    name: &str,
    listen: SocketAddr,
    deadline: Instant,
) -> Result<Option<(child::Child, SocketAddr)>> {
    let content = [OsString::from("--docroot"), docroot.as_os_str().to_owned()];
    let mut node = spawn(launcher, &content, spec, extra, name, listen)?;
    Ok(ready(&mut node, launcher, deadline)?.map(|addr| (node, addr)))
}

fn spawn(
    launcher: &Launcher,
    content: &[OsString],
    spec: &NodeSpec,
    extra: &[String],
    name: &str,
    listen: SocketAddr,
) -> Result<child::Child> {
    let listen = launcher.address_on(name, listen)?;
    let mut cmd = Command::new(&launcher.exe);
    launcher.run_on(name, &mut cmd)?;
    cmd.arg("node").args(content);
    cmd.args(["--listen", &listen.to_string(), "--cache-mb", &spec.cache_mb.to_string()]);
    cmd.args(extra);
    if let Some(cpu) = spec.cpu {
        child::pin(&mut cmd, cpu);
    }
    if let Some(cgroups) = &launcher.node_cpu {
        cgroups.confine(name, &mut cmd)?;
    }
    child::spawn(
        name,
        cmd,
        |line| wire::NodeReady::parse(line).map(|r| child::Bound::only(r.addr)),
        &launcher.signals,
        &launcher.logs,
    )
}

/// Waits until `node` reports its address and its load report answers.
fn ready(
    node: &mut child::Child,
    launcher: &Launcher,
    deadline: Instant,
) -> Result<Option<SocketAddr>> {
    let signals = launcher.signals.clone();
    let Some(child::Bound { addr, .. }) = node.address(deadline, &signals)? else {
        return Ok(None);
    };
    let answered = probe::answers(addr, LOAD_REPORT_PATH, deadline, &signals)
        .with_context(|| node.describe())?;
    Ok(answered.then_some(addr))
}

impl Nodes {
    /// Every node's load report counters, in order.
    pub fn counters(&self) -> Result<Vec<NodeCounters>> {
        self.addrs
            .iter()
            .map(|(name, addr)| load_report::read(*addr).context(name.clone()))
            .collect()
    }

    /// CPU seconds the nodes have used so far, all together (with what each forked, as
    /// the caches of other systems do: Varnish's cache process, nginx's workers).
    pub fn cpu_seconds(&self) -> f64 {
        self.group.children.iter().map(|c| group_cpu_seconds(c.pid())).sum()
    }
}

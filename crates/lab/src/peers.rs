//! Starting `larder peer`s (each on its own host, with hosts of their own): a cluster
//! without a router tier, every peer a node and a distributor. Every node's address is
//! picked before the start and each peer is told the others' (`--peer`), so a node fills
//! what another peer holds from it rather than from the origin; the shared distributor
//! config then lists every node too and each peer is sent SIGHUP, as a running cluster
//! takes a new peer.

use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use router::{NodeConfig, RouterConfig};

use crate::child::{self, Group};
use crate::error::{Context, LabError, Result};
use crate::launcher::{free_local_addresses, Launcher, ANY_LOCAL_PORT};
use crate::nodes::NodeSpec;
use crate::route;
use crate::settled;

/// What the peers are started with.
pub struct PeerPlan<'a> {
    /// Flags naming what each node serves (`--docroot DIR`, or `--origin URL`…).
    pub content: &'a [OsString],
    pub specs: &'a [NodeSpec],
    /// More node flags for every peer.
    pub extra: &'a [String],
    /// The distributors' config (its nodes are replaced by the peers').
    pub config: &'a RouterConfig,
    /// Where clients connect: on one machine every peer binds it (SO_REUSEPORT), the
    /// first on the port asked for and the others on the port it got; with hosts, each
    /// peer on its host's address.
    pub listen: SocketAddr,
    /// The first peer's admin API [default: a free port]; the others take free ports.
    pub admin: Option<SocketAddr>,
    /// Hand connections off (`--handoff`), each node adopting on a socket in the run's
    /// directory; on one machine only.
    pub handoff: bool,
}

/// One started peer.
#[derive(Clone, Debug)]
pub struct StartedPeer {
    pub name: String,
    pub pid: u32,
    /// Where its distributor takes clients.
    pub addr: SocketAddr,
    /// Its node.
    pub backend: SocketAddr,
    pub admin: SocketAddr,
}

/// Starts one peer per spec into `group`, tells each of every other's node, and waits
/// until every distributor has a load report from every node. None: a stop was requested
/// meanwhile.
pub fn start(
    launcher: &Launcher,
    plan: &PeerPlan,
    dir: &Path,
    group: &mut Group,
    deadline: Instant,
) -> Result<Option<Vec<StartedPeer>>> {
    let file = dir.join("peers.toml");
    let mut config = plan.config.clone();
    config.nodes.clear();
    config.discovery.dns.clear();
    config.router_header = true;
    // The peers share this machine's cores: each distributor takes its share of them, not
    // one thread per core each (N peers would run N times as many threads as cores).
    if config.threads == 0 {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        config.threads = (cores / plan.specs.len().max(1)).max(1);
    }
    write(&file, &config)?;
    let names: Vec<String> = (1..=plan.specs.len()).map(|i| format!("p{i}")).collect();
    let ports = free_local_addresses(plan.specs.len())?;
    let backends = names
        .iter()
        .zip(ports)
        .map(|(name, port)| launcher.address_on(name, port))
        .collect::<Result<Vec<SocketAddr>>>()?;
    let mut started: Vec<StartedPeer> = Vec::new();
    for (i, spec) in plan.specs.iter().enumerate() {
        let name = names[i].clone();
        let listen = match (&launcher.hosts, started.first()) {
            (None, Some(first)) => first.addr,
            _ => launcher.address_on(&name, plan.listen)?,
        };
        let admin = if i == 0 { plan.admin.unwrap_or(ANY_LOCAL_PORT) } else { ANY_LOCAL_PORT };
        let admin = launcher.address_on(&name, admin)?;
        let backend = backends[i];
        let mut cmd = Command::new(&launcher.exe);
        launcher.run_on(&name, &mut cmd)?;
        cmd.arg("peer").args(plan.content);
        cmd.args(["--listen", &listen.to_string(), "--backend", &backend.to_string()]);
        cmd.args(["--admin", &admin.to_string(), "--name", &name]);
        cmd.arg("--router-config").arg(&file);
        cmd.args(["--cache-mb", &spec.cache_mb.to_string()]);
        if plan.handoff {
            cmd.arg("--handoff").arg("--handoff-socket").arg(dir.join(format!("{name}.sock")));
        }
        for other in backends.iter().filter(|&&b| b != backend) {
            cmd.args(["--peer", &other.to_string()]);
        }
        cmd.args(plan.extra);
        if let Some(cpu) = spec.cpu {
            child::pin(&mut cmd, cpu);
        }
        let peer = child::spawn(&name, cmd, route::ready_line, &launcher.signals, &launcher.logs)?;
        group.children.push(peer);
        let peer = group.children.last_mut().expect("pushed above");
        let Some(bound) = peer.address(deadline, &launcher.signals)? else { return Ok(None) };
        let (Some(admin), Some(backend)) = (bound.admin, bound.backend) else {
            return Err(LabError::Child(format!(
                "{} did not name its admin and node addresses{}",
                peer.describe(),
                peer.tail()
            )));
        };
        started.push(StartedPeer { name, pid: peer.pid(), addr: bound.addr, backend, admin });
    }
    config.nodes = started.iter().map(|p| NodeConfig::new(p.backend)).collect();
    write(&file, &config)?;
    for peer in &group.children {
        peer.signal(libc::SIGHUP);
    }
    for (peer, child) in started.iter().zip(&group.children) {
        let heard = settled::every_one_of(peer.admin, started.len(), deadline, &launcher.signals)
            .context(child.describe())?;
        if !heard {
            return Ok(None);
        }
    }
    Ok(Some(started))
}

fn write(file: &Path, config: &RouterConfig) -> Result<()> {
    let text = config.to_toml().context("writing the peers' config")?;
    std::fs::write(file, text).with_context(|| format!("writing {}", file.display()))
}

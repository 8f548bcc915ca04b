//! What every process the lab starts shares: the larder executable, the signals it
//! watches, where the children's output goes, how long they get to stop; and free ports.

use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::child::Logs;
use crate::cpu_cap::NodeCgroups;
use crate::error::{Context, Result};
use crate::signals::Signals;

#[derive(Clone)]
pub struct Launcher {
    /// The `larder` executable for nodes and routers.
    pub exe: PathBuf,
    pub signals: Signals,
    pub logs: Logs,
    /// How long a stopped process gets to exit before it is killed.
    pub grace: Duration,
    /// Where node processes are capped to a share of a core, the run's cgroups (removed
    /// when the last launcher holding them is dropped).
    pub node_cpu: Option<Arc<NodeCgroups>>,
}

/// `requested`, or a free port on 127.0.0.1. A process that reports only one address
/// (the router its traffic port; HAProxy and nginx none) is given the others: a free one
/// is found by binding port 0 and letting it go; another process taking it in between
/// makes the child fail to start with a clear error.
pub fn local_address(requested: Option<SocketAddr>) -> Result<SocketAddr> {
    let wanted = requested.unwrap_or((IpAddr::V4(Ipv4Addr::LOCALHOST), 0).into());
    if wanted.port() != 0 {
        return Ok(wanted);
    }
    let probe = TcpListener::bind(wanted).with_context(|| format!("finding a port on {wanted}"))?;
    Ok(probe.local_addr()?)
}

/// The larder executable: `given`, or the one running.
pub fn larder_exe(given: Option<PathBuf>) -> Result<PathBuf> {
    match given {
        Some(p) => Ok(p),
        None => std::env::current_exe().context("finding the larder executable"),
    }
}

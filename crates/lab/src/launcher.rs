//! What every process the lab starts shares: the larder executable, the signals it
//! watches, where the children's output goes, how long they get to stop; and free ports
//! for the children that cannot report theirs.

use std::hash::{BuildHasher, Hasher};
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, TcpListener};
use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use crate::child::Logs;
use crate::cpu_cap::NodeCgroups;
use crate::error::{Context, Result};
use crate::hosts::Hosts;
use crate::report::Report;
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
    /// Where what the lab says goes (the caller's; see [`Report`]).
    pub report: Arc<dyn Report>,
    /// With hosts of their own, the run's hosts: each process runs on the host it is
    /// started on and binds that host's address. Without, every process is on this
    /// machine's loopback.
    pub hosts: Option<Arc<Hosts>>,
}

impl Launcher {
    /// Where a process on host `host` binds `addr`: with hosts, the host's address and
    /// `addr`'s port (the host is created if new); without, `addr` itself.
    pub fn address_on(&self, host: &str, addr: SocketAddr) -> Result<SocketAddr> {
        match &self.hosts {
            Some(hosts) => Ok(SocketAddr::new(hosts.host(host)?.ip.into(), addr.port())),
            None => Ok(addr),
        }
    }

    /// Makes `cmd` run on host `host` (with hosts; without, it runs here).
    pub fn run_on(&self, host: &str, cmd: &mut Command) -> Result<()> {
        match &self.hosts {
            Some(hosts) => hosts.host(host)?.enter_on_exec(cmd),
            None => Ok(()),
        }
    }
}

/// 127.0.0.1, port 0: what a larder router or node is given, which then reports the port
/// it bound (see [`crate::child::Bound`]).
pub const ANY_LOCAL_PORT: SocketAddr = SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0));

/// Lowest port [`free_local_address`] picks: above the well-known and most registered
/// services' ports.
const LOWEST_PICKED_PORT: u16 = 10_000;
/// How many ports a pick tries before it gives up.
const PICK_ATTEMPTS: u16 = 256;
/// Linux's own ephemeral range, when it cannot be read.
const DEFAULT_EPHEMERAL: (u16, u16) = (32_768, 60_999);

/// A free port on 127.0.0.1 for a process that cannot report the one it bound (HAProxy,
/// nginx), found by binding it and letting it go. It is picked below the kernel's
/// ephemeral range, from which every `connect` takes its local port: between this pick
/// and the child's bind, only an explicit bind can take it, never one of the many
/// connections a benchmark opens (a port from bind(0) lies in that range and was taken
/// that way). If the range leaves no room below it, port 0 as before; a port taken anyway
/// makes the child fail to start with a clear error.
pub fn free_local_address() -> Result<SocketAddr> {
    Ok(free_local_addresses(1)?[0])
}

/// `count` different free ports on 127.0.0.1, picked as [`free_local_address`] picks
/// one (each held until all are picked, so no two are the same).
pub fn free_local_addresses(count: usize) -> Result<Vec<SocketAddr>> {
    let ephemeral = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|text| ephemeral_range(&text))
        .unwrap_or(DEFAULT_EPHEMERAL);
    let seed = std::collections::hash_map::RandomState::new().build_hasher().finish();
    let mut candidates = candidate_ports(ephemeral, seed);
    let mut held = Vec::with_capacity(count);
    while held.len() < count {
        let probe = match candidates.find_map(|p| TcpListener::bind((Ipv4Addr::LOCALHOST, p)).ok())
        {
            Some(probe) => probe,
            None => TcpListener::bind(ANY_LOCAL_PORT)
                .with_context(|| format!("finding a port on {ANY_LOCAL_PORT}"))?,
        };
        held.push(probe);
    }
    held.iter().map(|probe| Ok(probe.local_addr()?)).collect()
}

/// `net.ipv4.ip_local_port_range` as written: two numbers.
fn ephemeral_range(text: &str) -> Option<(u16, u16)> {
    let mut fields = text.split_whitespace().map(str::parse::<u16>);
    match (fields.next()?.ok()?, fields.next()?.ok()?, fields.next()) {
        (low, high, None) if low <= high => Some((low, high)),
        _ => None,
    }
}

/// Up to [`PICK_ATTEMPTS`] ports from `LOWEST_PICKED_PORT` up to below the ephemeral
/// range (or above it, where that leaves more room), starting at a place `seed` chooses
/// so that processes picking at once rarely try the same port first.
fn candidate_ports((low, high): (u16, u16), seed: u64) -> impl Iterator<Item = u16> {
    // Ports as u32, spans as [first, end): no end overflows.
    let lowest = u32::from(LOWEST_PICKED_PORT);
    let below = (lowest, u32::from(low).max(lowest));
    let above = ((u32::from(high) + 1).max(lowest), u32::from(u16::MAX) + 1);
    let width = |(first, end): (u32, u32)| end - first;
    let (start, span) = if width(below) >= width(above) {
        (below.0, width(below))
    } else {
        (above.0, width(above))
    };
    let first = if span == 0 { 0 } else { (seed % u64::from(span)) as u32 };
    (0..u32::from(PICK_ATTEMPTS).min(span)).map(move |k| {
        u16::try_from(start + (first + k) % span).expect("within a span of u16 ports")
    })
}

/// The larder executable: `given`, or the one running.
pub fn larder_exe(given: Option<PathBuf>) -> Result<PathBuf> {
    match given {
        Some(p) => Ok(p),
        None => std::env::current_exe().context("finding the larder executable"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_ephemeral_range() {
        assert_eq!(ephemeral_range("32768\t60999\n"), Some((32_768, 60_999)));
        assert_eq!(ephemeral_range("1024 65535"), Some((1024, 65_535)));
        assert_eq!(ephemeral_range("60999 32768"), None);
        assert_eq!(ephemeral_range("32768"), None);
        assert_eq!(ephemeral_range("1 2 3"), None);
        assert_eq!(ephemeral_range("x 2"), None);
    }

    #[test]
    fn picks_outside_the_ephemeral_range() {
        for seed in [0, 1, 12_345, u64::MAX] {
            let ports: Vec<u16> = candidate_ports((32_768, 60_999), seed).collect();
            assert_eq!(ports.len(), usize::from(PICK_ATTEMPTS));
            assert!(ports.iter().all(|&p| (LOWEST_PICKED_PORT..32_768).contains(&p)), "{ports:?}");
            let mut unique = ports.clone();
            unique.sort_unstable();
            unique.dedup();
            assert_eq!(unique.len(), ports.len());
        }
        // A range starting low leaves room only above it.
        let ports: Vec<u16> = candidate_ports((1024, 40_000), 7).collect();
        assert!(ports.iter().all(|&p| p > 40_000), "{ports:?}");
        // A range covering everything leaves none: the caller falls back to port 0.
        assert_eq!(candidate_ports((1024, 65_535), 7).count(), 0);
        // Near the top, the pick wraps within its span.
        let ports: Vec<u16> = candidate_ports((1024, 65_500), 3).collect();
        assert_eq!(ports.len(), 35);
        assert!(ports.iter().all(|&p| p > 65_500));
    }

    #[test]
    fn free_addresses_differ() {
        let addrs = free_local_addresses(8).unwrap();
        let mut ports: Vec<u16> = addrs.iter().map(SocketAddr::port).collect();
        ports.sort_unstable();
        ports.dedup();
        assert_eq!(ports.len(), 8, "{addrs:?}");
    }

    #[test]
    fn a_free_address_is_on_loopback_and_bindable() {
        let addr = free_local_address().unwrap();
        assert_eq!(addr.ip(), std::net::IpAddr::V4(Ipv4Addr::LOCALHOST));
        assert_ne!(addr.port(), 0);
        TcpListener::bind(addr).unwrap();
    }
}

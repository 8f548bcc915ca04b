//! Starting `larder route` (on the front-end's host, with hosts of their own) on a configuration of the router's own type
//! ([`router::RouterConfig`]), written to the run's directory as TOML.

use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use router::RouterConfig;

use crate::child::{self, Bound, Group};
use crate::error::{Context, LabError, Result};
use crate::hosts::FRONT_HOST;
use crate::launcher::Launcher;

/// A started router's bound addresses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Listening {
    /// Where its traffic goes.
    pub addr: SocketAddr,
    /// Its admin API (/stats, /metrics).
    pub admin: SocketAddr,
    /// Its TLS listener, when its config gives one.
    pub tls: Option<SocketAddr>,
}

/// Writes `config` to `<dir>/<label>.toml`, starts the router on it (pinned to `cpu`) into
/// `group` as `label` (its log file, its name in errors) and waits until it reports its
/// bound addresses, traffic and admin. `config` must have an admin listener: give both
/// port 0, and the router says which ports it got. None: a stop was requested meanwhile.
pub fn start(
    launcher: &Launcher,
    label: &str,
    config: &RouterConfig,
    dir: &Path,
    cpu: Option<usize>,
    group: &mut Group,
    deadline: Instant,
) -> Result<Option<Listening>> {
    let file = dir.join(format!("{label}.toml"));
    let config = on_front_host(launcher, config)?;
    let text = config.to_toml().context("writing the router config")?;
    std::fs::write(&file, text).with_context(|| format!("writing {}", file.display()))?;
    let mut cmd = Command::new(&launcher.exe);
    launcher.run_on(FRONT_HOST, &mut cmd)?;
    cmd.arg("route").arg("--config").arg(&file);
    if let Some(cpu) = cpu {
        child::pin(&mut cmd, cpu);
    }
    let router = child::spawn(label, cmd, ready_line, &launcher.signals, &launcher.logs)?;
    group.children.push(router);
    let router = group.children.last_mut().expect("pushed above");
    let Some(bound) = router.address(deadline, &launcher.signals)? else { return Ok(None) };
    match bound.admin {
        Some(admin) => Ok(Some(Listening { addr: bound.addr, admin, tls: bound.tls })),
        None => Err(LabError::Child(format!(
            "{} reported no admin listener (its config gives none){}",
            router.describe(),
            router.tail()
        ))),
    }
}

/// A router's (or a peer's) ready line: its bound addresses.
pub fn ready_line(line: &str) -> Option<Bound> {
    wire::RouterReady::parse(line).map(|r| Bound {
        addr: r.addr,
        admin: r.admin,
        backend: r.backend,
        tls: r.tls,
    })
}

/// `config` with its listeners on the front-end's host: with hosts, the host's address
/// and the ports asked for; without, as it is.
fn on_front_host(launcher: &Launcher, config: &RouterConfig) -> Result<RouterConfig> {
    let mut config = config.clone();
    config.listen = launcher.address_on(FRONT_HOST, config.listen)?;
    if let Ok(admin) = config.admin.listen.parse::<SocketAddr>() {
        config.admin.listen = launcher.address_on(FRONT_HOST, admin)?.to_string();
    }
    Ok(config)
}

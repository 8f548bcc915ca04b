//! One named network namespace of a run (`ip netns add`, mounted under /run/netns), named
//! `larder-<pid>-<host>` so that what a run left behind is recognised and tied to the
//! process that made it; and entering it: a child before it runs, or this thread.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::process::Command;

use super::iproute;
use crate::error::{Context, LabError, Result};

/// What every namespace of a run is named with, before the run's pid.
pub const PREFIX: &str = "larder-";
/// Where `ip netns` mounts named namespaces.
const MOUNTS: &str = "/run/netns";

/// The name of the namespace of `host` in the run of process `pid`.
pub fn name_for(pid: u32, host: &str) -> String {
    format!("{PREFIX}{pid}-{host}")
}

/// The pid of the run that made the namespace `name`, if it is one of ours.
pub fn owner(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(PREFIX)?;
    let (pid, host) = rest.split_once('-')?;
    if host.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    pid.parse().ok()
}

/// Every named network namespace on the machine.
pub fn list() -> Result<Vec<String>> {
    let out = iproute::run("ip", &["netns".into(), "list".into()])?;
    Ok(out.lines().filter_map(|l| l.split_whitespace().next()).map(String::from).collect())
}

/// A named network namespace this run created (deleted by [`Namespace::delete`]).
#[derive(Clone, Debug)]
pub struct Namespace {
    pub name: String,
}

impl Namespace {
    /// Creates the namespace `name`, its loopback up.
    pub fn create(name: String) -> Result<Namespace> {
        iproute::run("ip", &["netns".into(), "add".into(), name.clone()])?;
        let ns = Namespace { name };
        if let Err(e) = ns.ip(&["link", "set", "lo", "up"]) {
            let _ = ns.delete();
            return Err(e);
        }
        Ok(ns)
    }

    /// Runs `ip -n NAME args…`.
    pub fn ip(&self, args: &[&str]) -> Result<String> {
        iproute::run("ip", &self.args(args))
    }

    /// Runs `tc -n NAME args…`.
    pub fn tc(&self, args: &[&str]) -> Result<String> {
        iproute::run("tc", &self.args(args))
    }

    fn args(&self, args: &[&str]) -> Vec<String> {
        ["-n", &self.name].iter().chain(args).map(|s| s.to_string()).collect()
    }

    /// Deletes the namespace (its interfaces go with it once no process is in it).
    pub fn delete(&self) -> Result<()> {
        delete(&self.name)
    }

    fn open(&self) -> Result<File> {
        let path = format!("{MOUNTS}/{}", self.name);
        File::open(&path).with_context(|| format!("opening the network namespace {path}"))
    }

    /// Makes `cmd` run inside this namespace (it joins it before exec).
    pub fn enter_on_exec(&self, cmd: &mut Command) -> Result<()> {
        let ns = self.open()?;
        // SAFETY: the closure runs between fork and exec and only calls setns on a file
        // descriptor the closure owns, allocating nothing.
        unsafe {
            cmd.pre_exec(move || {
                if libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        Ok(())
    }

    /// Moves the calling thread into this namespace until the guard is dropped; threads
    /// it starts meanwhile and processes it spawns start there too.
    pub fn enter_this_thread(&self) -> Result<Entered> {
        let home = File::open("/proc/thread-self/ns/net").context("opening this thread's netns")?;
        let ns = self.open()?;
        setns(&ns).with_context(|| format!("entering {}", self.name))?;
        Ok(Entered { home })
    }
}

/// Deletes the namespace `name`.
pub fn delete(name: &str) -> Result<()> {
    iproute::run("ip", &["netns".into(), "delete".into(), name.to_string()]).map(|_| ())
}

/// The calling thread inside a run's namespace; dropping it returns the thread home.
pub struct Entered {
    home: File,
}

impl Drop for Entered {
    fn drop(&mut self) {
        // Only fails if the kernel refuses the namespace the thread came from.
        let _ = setns(&self.home);
    }
}

fn setns(ns: &File) -> Result<()> {
    // SAFETY: setns reads only the descriptor, which the File keeps open.
    if unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        return Err(LabError::Io(std::io::Error::last_os_error()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_runs_namespaces_name_its_pid() {
        let name = name_for(4242, "n1");
        assert_eq!(name, "larder-4242-n1");
        assert_eq!(owner(&name), Some(4242));
        assert_eq!(owner(&name_for(7, "switch")), Some(7));
        for other in ["larder-", "larder-x-n1", "larder-12-", "larder-12", "other-12-n1", "blue"] {
            assert_eq!(owner(other), None, "{other}");
        }
    }
}

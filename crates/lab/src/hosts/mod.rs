//! Hosts of their own: every process of a run on a host of its own, as in a real cluster.
//! A host is a network namespace with one interface (`eth0`) and one address from the
//! run's private subnet, linked by a veth pair to a bridge that lives in a namespace of
//! its own (the run's switch), so nothing is added to the machine's own network; both
//! ends of every link are shaped ([`LinkShape`]). Everything is created with `ip` and `tc`
//! and removed when the [`Hosts`] are dropped; what a killed run left is removed by the
//! next ([`cleanup`]).
//!
//! - `iproute`: running `ip` and `tc`; root and iproute2 checked first.
//! - `namespace`: one named namespace, entering it.
//! - `link`: a link's rate and queue, and the `tc` commands that shape it.
//! - `subnet`: the run's private addresses.
//! - `cleanup`: namespaces of runs that died.
//! - `counters`: what crossed each host's link.

mod cleanup;
mod counters;
mod iproute;
mod link;
mod namespace;
mod subnet;

use std::net::Ipv4Addr;
use std::process::Command;
use std::sync::{Arc, Mutex};

pub use counters::{parse_sent, since as link_bytes_since, LinkBytes};
pub use link::{LinkShape, Queue, Rate};
pub use namespace::Entered;
pub use subnet::Subnet;

use crate::error::{Context, LabError, Result};
use crate::report::Report;
use namespace::Namespace;

/// The host of the routers (several share its address) or of the front-end under test.
pub const FRONT_HOST: &str = "router";
/// The host of the origin.
pub const ORIGIN_HOST: &str = "origin";
/// The host where larder itself runs its checks and load generator, and where a user runs
/// `curl` or `larder bench` against the cluster.
pub const CLIENT_HOST: &str = "client";
/// The name of the switch's namespace (no host has it).
const SWITCH: &str = "switch";
/// The bridge inside the switch.
const BRIDGE: &str = "br0";
/// Each host's interface, inside its namespace.
const HOST_DEV: &str = "eth0";

/// The network of a run's hosts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostsConfig {
    /// Where the hosts' addresses come from. Default is 10.77.0.0/24.
    pub subnet: Subnet,
    /// Every host's link. Default is 1gbit each way with a queue of 1000 packets.
    pub link: LinkShape,
    /// The client host's link, where the load generator runs, when it differs from every
    /// other host's: a client side wider than one host's link stands for the many
    /// clients of a real site, so what limits is the cluster's links, not the client's.
    /// Default is None (the client host has every host's link).
    pub client_link: Option<LinkShape>,
}

/// One host: its name (n1, router, client), namespace and address.
#[derive(Clone, Debug)]
pub struct Host {
    pub name: String,
    pub ip: Ipv4Addr,
    namespace: Namespace,
    /// Its link's end on the switch.
    port: String,
}

impl Host {
    /// The namespace's name, for `ip netns exec NAME …`.
    pub fn namespace(&self) -> &str {
        &self.namespace.name
    }

    /// Makes `cmd` run on this host.
    pub fn enter_on_exec(&self, cmd: &mut Command) -> Result<()> {
        self.namespace.enter_on_exec(cmd)
    }

    /// Moves the calling thread onto this host until the guard is dropped.
    pub fn enter_this_thread(&self) -> Result<Entered> {
        self.namespace.enter_this_thread()
    }
}

/// A run's switch and the hosts on it, created as they are first asked for; dropping it
/// removes every namespace of the run.
pub struct Hosts {
    config: HostsConfig,
    pid: u32,
    switch: Namespace,
    state: Mutex<State>,
    report: Arc<dyn Report>,
}

struct State {
    hosts: Vec<Host>,
    link: LinkShape,
}

impl Hosts {
    /// Checks root and iproute2, removes what runs that died left, and creates the switch.
    pub fn create(config: HostsConfig, report: Arc<dyn Report>) -> Result<Hosts> {
        iproute::preflight()?;
        cleanup::remove_stale(&*report)?;
        let pid = std::process::id();
        let switch = Namespace::create(namespace::name_for(pid, SWITCH))?;
        let hosts = Hosts {
            pid,
            switch,
            state: Mutex::new(State { hosts: Vec::new(), link: config.link }),
            config,
            report,
        };
        hosts.switch.ip(&["link", "add", BRIDGE, "type", "bridge"])?;
        hosts.switch.ip(&["link", "set", BRIDGE, "up"])?;
        Ok(hosts)
    }

    /// The host `name`, created (its namespace, address and shaped link) if it is new.
    pub fn host(&self, name: &str) -> Result<Host> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(h) = state.hosts.iter().find(|h| h.name == name) {
            return Ok(h.clone());
        }
        let index = state.hosts.len();
        let Some(ip) = self.config.subnet.host(index) else {
            return Err(LabError::Invalid(format!(
                "--hosts-subnet {} has no address left for host {name}",
                self.config.subnet
            )));
        };
        let namespace = Namespace::create(namespace::name_for(self.pid, name))?;
        let host = Host { name: name.to_string(), ip, namespace, port: format!("v{index}") };
        // Listed before it is wired, so a failure below still removes it.
        state.hosts.push(host.clone());
        let ns = host.namespace();
        let (port, cidr) = (&host.port, format!("{ip}/{}", self.config.subnet.prefix()));
        self.switch
            .ip(&["link", "add", port, "type", "veth", "peer", "name", HOST_DEV, "netns", ns])?;
        self.switch.ip(&["link", "set", port, "master", BRIDGE, "up"])?;
        host.namespace.ip(&["addr", "add", &cidr, "dev", HOST_DEV])?;
        host.namespace.ip(&["link", "set", HOST_DEV, "up"])?;
        self.shape(&host, &self.link_of(&host, state.link), LinkShape::tc_install)
            .with_context(|| format!("shaping host {name}'s link"))?;
        Ok(host)
    }

    /// Gives every host, and every host created from now on, the link `link`.
    pub fn reshape(&self, link: LinkShape) -> Result<()> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.link = link;
        for host in &state.hosts {
            self.shape(host, &self.link_of(host, link), LinkShape::tc_change)
                .with_context(|| format!("shaping host {}'s link", host.name))?;
        }
        Ok(())
    }

    /// The link `host` gets when every host gets `link`: the client host keeps its own if
    /// it has one.
    fn link_of(&self, host: &Host, link: LinkShape) -> LinkShape {
        match self.config.client_link {
            Some(client) if host.name == CLIENT_HOST => client,
            _ => link,
        }
    }

    /// Both ends: what the host sends (its `eth0`) and what it receives (its port on the
    /// switch), with the commands `how` gives for a device.
    fn shape(
        &self,
        host: &Host,
        link: &LinkShape,
        how: fn(&LinkShape, &str) -> Vec<Vec<String>>,
    ) -> Result<()> {
        for (ns, dev) in [(&host.namespace, HOST_DEV), (&self.switch, host.port.as_str())] {
            for argv in how(link, dev) {
                let args: Vec<&str> = argv.iter().map(String::as_str).collect();
                ns.tc(&args)?;
            }
        }
        Ok(())
    }

    /// What each host's link has carried so far, hosts in the order they were created.
    pub fn link_bytes(&self) -> Result<Vec<LinkBytes>> {
        let hosts = self.state.lock().unwrap_or_else(|e| e.into_inner()).hosts.clone();
        let sent = |ns: &Namespace, dev: &str| -> Result<u64> {
            let shown = ns.tc(&["-s", "class", "show", "dev", dev, "classid", "1:1"])?;
            parse_sent(&shown).ok_or_else(|| {
                LabError::Invalid(format!("`tc -s class show dev {dev}` gave no byte count"))
            })
        };
        hosts
            .iter()
            .map(|h| {
                Ok(LinkBytes {
                    host: h.name.clone(),
                    sent: sent(&h.namespace, HOST_DEV)?,
                    received: sent(&self.switch, &h.port)?,
                })
            })
            .collect()
    }

    /// The run's network as the output describes it.
    pub fn describe(&self) -> String {
        let link = self.state.lock().unwrap_or_else(|e| e.into_inner()).link;
        let client = match self.config.client_link {
            Some(client) => format!("; the client host's link {}", client.describe()),
            None => String::new(),
        };
        format!(
            "hosts of their own: one network namespace each ({}…), addresses from {}, each \
             host's link {} (tc HTB at both ends){client}",
            namespace::name_for(self.pid, ""),
            self.config.subnet,
            link.describe()
        )
    }
}

impl Drop for Hosts {
    fn drop(&mut self) {
        let state = self.state.get_mut().unwrap_or_else(|e| e.into_inner());
        let namespaces = state.hosts.iter().map(|h| &h.namespace).chain([&self.switch]);
        for ns in namespaces {
            if let Err(e) = ns.delete() {
                self.report.warn(&format!("larder: could not remove {}: {e}", ns.name));
            }
        }
    }
}

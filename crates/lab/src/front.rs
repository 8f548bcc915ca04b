//! The front-end under test: `larder route` with one policy (configured as the
//! experiments need it), or one of the [anchors](crate::anchors), started in front of the
//! nodes of one run and waited for until a request through it answers. Several instances
//! can share one address (SO_REUSEPORT), as operators scale a front-end out: the kernel
//! spreads the clients' connections over them.

use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Instant;

use policy::{PlacementMode, PolicyKind};
use router::config::ClassPoolConfig;
use router::{NodeConfig, RouterConfig};

use crate::anchors::{self, Anchor, Servers, Tools};
use crate::child::{self, Group};
use crate::error::{Context, LabError, Result};
use crate::hosts::FRONT_HOST;
use crate::launcher::{free_local_address, Launcher, ANY_LOCAL_PORT};
use crate::probe;
use crate::route;

/// A front-end the experiments compare: larder route with a policy, its placement
/// (`lard-r` shares one placement across routers, `lard-r/per-router` keeps each
/// router's own table) and the mapper's tree depth (`hacc@3`: subtrees fixed at three
/// directory levels; without: the router's default, subtrees split and merged by load),
/// an anchor, or larder's nodes as peers (`peers`: every node takes clients and forwards
/// what another should serve, with no router tier; see `peers.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum System {
    Larder(PolicyKind, PlacementMode, Option<u8>),
    Anchor(Anchor),
    Peers,
}

/// The name of [`System::Peers`].
const PEERS: &str = "peers";
/// The policy of [`System::Peers`]' distributors.
const PEERS_POLICY: PolicyKind = PolicyKind::LardR;

impl System {
    /// larder route with `policy` and the default placement and mapping.
    pub fn larder(policy: PolicyKind) -> System {
        System::Larder(policy, PlacementMode::default(), None)
    }
}

impl FromStr for System {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        if let Some(a) = Anchor::ALL.into_iter().find(|a| a.name() == s) {
            return Ok(System::Anchor(a));
        }
        if s == PEERS {
            return Ok(System::Peers);
        }
        let (policy, placement) = s.split_once('/').unwrap_or((s, PlacementMode::default().name()));
        let (policy, depth) = match policy.split_once('@') {
            Some((policy, depth)) => {
                let depth = depth.parse().map_err(|_| {
                    format!("{s:?}: the tree depth after @ must be a number of levels (0-255)")
                })?;
                (policy, Some(depth))
            }
            None => (policy, None),
        };
        let policy = policy.parse().map_err(|_| {
            let names: Vec<&str> = PolicyKind::ALL.iter().map(|k| k.name()).collect();
            format!(
                "{s:?}: expected a policy ({}) with an optional @DEPTH and /per-router, peers, or an anchor such as haproxy, nginx or varnish",
                names.join(", ")
            )
        })?;
        let placement = placement.parse().map_err(|e| format!("{s:?}: {e}"))?;
        Ok(System::Larder(policy, placement, depth))
    }
}

impl fmt::Display for System {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            System::Larder(p, placement, depth) => {
                p.fmt(f)?;
                if let Some(depth) = depth {
                    write!(f, "@{depth}")?;
                }
                match placement {
                    PlacementMode::Shared => Ok(()),
                    placement => write!(f, "/{placement}"),
                }
            }
            System::Anchor(a) => a.fmt(f),
            System::Peers => f.write_str(PEERS),
        }
    }
}

/// How a system run as `instances` front-ends on one address is named in the results:
/// `lard-r ×4`; one instance keeps the system's own name. The second listing of a system
/// is `lard#2` (see [`listings`]).
pub fn label(system: System, instances: u8, listing: u8) -> String {
    let name = match listing {
        0 | 1 => system.to_string(),
        k => format!("{system}#{k}"),
    };
    match instances {
        0 | 1 => name,
        n => format!("{name} ×{n}"),
    }
}

/// The name [`label`] gives a later listing's first listing (`lard#2` → `lard`, `lard#2 ×4`
/// → `lard ×4`); `None` for a first listing. Beside [`label`], so the name is read back
/// where it is written.
pub fn first_listing(name: &str) -> Option<String> {
    let (system, rest) = name.split_once('#')?;
    let rest = rest.trim_start_matches(|c: char| c.is_ascii_digit());
    Some(format!("{system}{rest}"))
}

/// The systems as listed, each with its listing among equal ones (1 for the first). A
/// system listed twice runs twice, its second listing named `lard#2`: an A/A control
/// whose ratio to the first listing is the noise of the measurement itself (two runs of
/// the very same front-end), against which a difference between two systems is judged.
pub fn listings(systems: &[System]) -> Vec<(System, u8)> {
    systems
        .iter()
        .enumerate()
        .map(|(i, &s)| {
            let earlier = systems[..i].iter().filter(|&&e| e == s).count();
            (s, u8::try_from(earlier + 1).unwrap_or(u8::MAX))
        })
        .collect()
}

/// How larder route is set up beyond its policy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RouterSetup {
    pub threads: usize,
    /// Pin the front-end to this CPU.
    pub cpu: Option<usize>,
    /// For `class`: the nodes (by name) that serve dynamic content.
    pub dynamic_pool: Vec<String>,
    /// Each node's weight, in order, for every front-end (empty: all equal).
    pub weights: Vec<u32>,
}

/// A started front-end (stopped when dropped) and the address clients use.
pub struct Front {
    pub group: Group,
    pub addr: SocketAddr,
    /// Where clients connect, spread over as a layer-4 switch spreads them: the
    /// front-end's address, or with no front-end every address that takes clients.
    pub targets: Vec<SocketAddr>,
    /// Admin listeners of larder routers (for their placement figures); none for anchors.
    pub admins: Vec<SocketAddr>,
    /// Each larder router's configuration file and what it holds (to change its nodes
    /// and reload it); none for anchors.
    pub configs: Vec<(PathBuf, RouterConfig)>,
    /// The anchor's own directory (its configuration, HAProxy's admin socket).
    pub dir: PathBuf,
}

impl Front {
    /// The processes of the front-end (one per instance).
    pub fn pids(&self) -> Vec<u32> {
        self.group.children.iter().map(|c| c.pid()).collect()
    }
}

/// Starts `instances` of `system` on one address in front of `nodes`, writing their
/// configurations into `dir`, and waits until `probe_path` answers through it.
#[allow(clippy::too_many_arguments)]
pub fn start(
    launcher: &Launcher,
    system: System,
    instances: u8,
    tools: &Tools,
    setup: &RouterSetup,
    nodes: &[(String, SocketAddr)],
    dir: &Path,
    probe_path: &str,
    deadline: Instant,
) -> Result<Front> {
    let servers = Servers { nodes, weights: &setup.weights, members: &[] };
    start_on(launcher, system, instances, tools, setup, &servers, dir, probe_path, deadline)
}

/// [`start`] in front of the members of `servers` only (HAProxy lists the others
/// disabled; the weights are `setup`'s).
#[allow(clippy::too_many_arguments)]
pub fn start_on(
    launcher: &Launcher,
    system: System,
    instances: u8,
    tools: &Tools,
    setup: &RouterSetup,
    servers: &Servers<'_>,
    dir: &Path,
    probe_path: &str,
    deadline: Instant,
) -> Result<Front> {
    let mut group = Group::new(launcher.grace, launcher.signals.clone(), launcher.report.clone());
    let instances = instances.max(1);
    let mut admins = Vec::new();
    let mut configs = Vec::new();
    let members: Vec<(String, SocketAddr)> = servers
        .nodes
        .iter()
        .enumerate()
        .filter(|&(i, _)| servers.members.get(i).copied().unwrap_or(true))
        .map(|(_, n)| n.clone())
        .collect();
    let addr = match system {
        System::Larder(policy, placement, depth) => {
            let mut config = larder_config(policy, placement, setup, &members);
            config.mapping.tree_depth = depth.map(usize::from);
            config.reuseport = instances > 1;
            let mut addr = None;
            for i in 1..=instances {
                config.name = Some(format!("r{i}"));
                config.admin.listen = ANY_LOCAL_PORT.to_string();
                let label =
                    if instances == 1 { "router".to_string() } else { format!("router{i}") };
                let bound =
                    route::start(launcher, &label, &config, dir, setup.cpu, &mut group, deadline)?
                        .ok_or(LabError::Interrupted)?;
                admins.push(bound.admin);
                // The first takes a free port; the others share it.
                config.listen = bound.addr;
                configs.push((dir.join(format!("{label}.toml")), config.clone()));
                addr = Some(bound.addr);
            }
            addr.expect("at least one instance")
        }
        System::Anchor(anchor) => {
            let addr = launcher.address_on(FRONT_HOST, free_local_address()?)?;
            for i in 1..=instances {
                let own = if instances == 1 {
                    dir.to_path_buf()
                } else {
                    dir.join(format!("{anchor}{i}"))
                };
                std::fs::create_dir_all(&own)
                    .with_context(|| format!("creating {}", own.display()))?;
                let mut cmd = anchors::command(anchor, tools, servers, &own, addr, instances > 1)?;
                launcher.run_on(FRONT_HOST, &mut cmd)?;
                if let Some(cpu) = setup.cpu {
                    child::pin(&mut cmd, cpu);
                }
                let signals = &launcher.signals;
                let label =
                    if instances == 1 { anchor.name().to_string() } else { format!("{anchor}{i}") };
                group.children.push(child::spawn(&label, cmd, |_| None, signals, &launcher.logs)?);
            }
            addr
        }
        System::Peers => {
            return Err(LabError::Invalid("peers take clients themselves: no front-end".into()))
        }
    };
    match probe::answers(addr, probe_path, deadline, &launcher.signals) {
        Ok(true) => {
            Ok(Front { group, addr, targets: vec![addr], admins, configs, dir: dir.to_path_buf() })
        }
        Ok(false) => Err(LabError::Interrupted),
        Err(e) => {
            let tail = group.children[0].tail();
            Err(LabError::Context {
                context: format!("{system} did not come up{tail}"),
                source: Box::new(e),
            })
        }
    }
}

/// No front-end: clients connect to each of `clients` (caches or peers that take clients
/// themselves, already answering), whose admin listeners are `admins`.
pub fn none(
    launcher: &Launcher,
    clients: &[(String, SocketAddr)],
    admins: Vec<SocketAddr>,
    dir: &Path,
) -> Front {
    let targets: Vec<SocketAddr> = clients.iter().map(|&(_, a)| a).collect();
    Front {
        group: Group::new(launcher.grace, launcher.signals.clone(), launcher.report.clone()),
        addr: targets.first().copied().unwrap_or(ANY_LOCAL_PORT),
        targets,
        admins,
        configs: Vec::new(),
        dir: dir.to_path_buf(),
    }
}

/// Gives every larder router of `front` (running `policy` and `placement`) the nodes
/// `nodes` instead of those it has: rewrites its configuration file and sends SIGHUP, on
/// which it reloads (a node no longer listed drains, a new one joins).
pub fn set_nodes(
    front: &mut Front,
    system: System,
    setup: &RouterSetup,
    nodes: &[(String, SocketAddr)],
) -> Result<()> {
    let System::Larder(policy, placement, _) = system else {
        return Err(LabError::Invalid(format!("{system} is not a larder router")));
    };
    let fresh = larder_config(policy, placement, setup, nodes);
    for ((file, config), router) in front.configs.iter_mut().zip(&front.group.children) {
        config.nodes.clone_from(&fresh.nodes);
        let text = config.to_toml().context("writing the router config")?;
        std::fs::write(&*file, text).with_context(|| format!("writing {}", file.display()))?;
        router.signal(libc::SIGHUP);
    }
    Ok(())
}

/// Whether larder route already gives each node a share of the targets proportional to
/// the cache capacity the node reports (candidates on a ring weighed by it): then
/// configured weights proportional to the caches would count every cache twice (a node
/// with twice the cache would get four times the targets), so such a router keeps equal
/// weights and the other front-ends get the cache weights.
fn weighs_reported_capacity(policy: PolicyKind, placement: PlacementMode) -> bool {
    let places = matches!(
        policy,
        PolicyKind::Lard | PolicyKind::LardR | PolicyKind::Hacc | PolicyKind::Class
    );
    places && placement != PlacementMode::SharedEqual
}

/// larder route as the experiments run it: on a free port, no admin listener.
fn larder_config(
    policy: PolicyKind,
    placement: PlacementMode,
    setup: &RouterSetup,
    nodes: &[(String, SocketAddr)],
) -> RouterConfig {
    let mut c = RouterConfig {
        listen: ANY_LOCAL_PORT,
        threads: setup.threads,
        nodes: started_nodes(nodes),
        ..RouterConfig::default()
    };
    if !weighs_reported_capacity(policy, placement) {
        for (node, &weight) in c.nodes.iter_mut().zip(&setup.weights) {
            node.weight = weight;
        }
    }
    c.policy.kind = policy;
    c.policy.placement = placement;
    c.admin.listen = String::new();
    if policy == PolicyKind::Class {
        c.policy.class.pools = vec![ClassPoolConfig {
            class: 1,
            nodes: setup.dynamic_pool.clone(),
            inner: PolicyKind::Least,
        }];
    }
    c
}

/// The distributors' config of [`System::Peers`]: lard-r with the shared placement (what
/// `larder peer` runs by default), as a router of the experiments runs it (the peers fill
/// in the nodes).
pub fn peer_config(setup: &RouterSetup) -> RouterConfig {
    larder_config(PEERS_POLICY, PlacementMode::Shared, setup, &[])
}

/// The nodes the lab started, as the router's config names them: short names (n1, n2, …)
/// in X-Larder-Node and /stats, and their load reports polled (hit ratios).
pub fn started_nodes(nodes: &[(String, SocketAddr)]) -> Vec<NodeConfig> {
    nodes
        .iter()
        .map(|(name, addr)| NodeConfig {
            name: name.clone(),
            load_report: true,
            ..NodeConfig::new(*addr)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peers_place_by_lard_r_over_no_nodes_of_their_own_yet() {
        let setup =
            RouterSetup { threads: 1, cpu: None, dynamic_pool: Vec::new(), weights: vec![2, 1] };
        let c = peer_config(&setup);
        assert_eq!((c.policy.kind, c.policy.placement), (PolicyKind::LardR, PlacementMode::Shared));
        assert!(c.nodes.is_empty());
        assert_eq!("peers".parse::<System>(), Ok(System::Peers));
        assert_eq!(System::Peers.to_string(), "peers");
    }

    #[test]
    fn names_round_trip() {
        let policies = PolicyKind::ALL.map(PolicyKind::name);
        for name in policies.into_iter().chain([
            "haproxy",
            "nginx",
            "lard-r/per-router",
            "hacc@3",
            "hacc@0/per-router",
        ]) {
            assert_eq!(name.parse::<System>().unwrap().to_string(), name);
        }
        assert_eq!("lard/shared".parse::<System>().unwrap().to_string(), "lard");
        let err = "envoy".parse::<System>().unwrap_err();
        assert!(err.contains("expected a policy (rr, wrr,") && err.contains("nginx"), "{err}");
        assert_eq!(
            "hacc@2".parse::<System>(),
            Ok(System::Larder(PolicyKind::Hacc, PlacementMode::Shared, Some(2)))
        );
        let err = "hacc@deep".parse::<System>().unwrap_err();
        assert!(err.contains("tree depth after @"), "{err}");
        let err = "lard/everywhere".parse::<System>().unwrap_err();
        assert!(err.contains("unknown placement"), "{err}");
    }

    #[test]
    fn a_system_listed_again_is_named_by_its_listing() {
        let [lard, lard_r]: [System; 2] = ["lard", "lard-r"].map(|s| s.parse().unwrap());
        let listed = listings(&[lard, lard_r, lard, lard]);
        let names: Vec<String> = listed.iter().map(|&(s, k)| label(s, 1, k)).collect();
        assert_eq!(names, ["lard", "lard-r", "lard#2", "lard#3"]);
        assert_eq!(label(lard_r, 4, 1), "lard-r ×4");
        assert_eq!(label(lard, 4, 2), "lard#2 ×4");
        assert_eq!(first_listing(&label(lard, 4, 2)).as_deref(), Some("lard ×4"));
        let hacc: System = "hacc@2/per-router".parse().unwrap();
        assert_eq!(first_listing(&label(hacc, 1, 3)).as_deref(), Some("hacc@2/per-router"));
        assert_eq!(first_listing(&label(lard_r, 4, 1)), None);
    }

    #[test]
    fn class_config_names_the_dynamic_pool() {
        let setup = RouterSetup {
            threads: 1,
            cpu: None,
            dynamic_pool: vec!["n3".into(), "n4".into()],
            weights: vec![2, 2, 1, 1],
        };
        let nodes: Vec<(String, SocketAddr)> =
            (1..=4).map(|i| (format!("n{i}"), SocketAddr::from(([127, 0, 0, 1], i)))).collect();
        let c = larder_config(PolicyKind::Class, PlacementMode::SharedEqual, &setup, &nodes);
        // What the router reads back from the file it is given.
        let c = RouterConfig::from_toml(&c.to_toml().unwrap()).unwrap();
        assert_eq!(c.policy.kind, PolicyKind::Class);
        assert_eq!(c.policy.class.pools[0].nodes, ["n3", "n4"]);
        assert_eq!(c.threads, 1);
        assert_eq!(c.nodes[0].name, "n1");
        assert_eq!(c.nodes.iter().map(|n| n.weight).collect::<Vec<_>>(), [2, 2, 1, 1]);
        assert!(c.nodes[0].load_report);
        assert_eq!(c.admin.listen, "");
    }

    #[test]
    fn cache_weights_are_not_counted_twice() {
        let setup = RouterSetup {
            threads: 1,
            cpu: None,
            dynamic_pool: Vec::new(),
            weights: vec![2, 2, 1, 1],
        };
        let nodes: Vec<(String, SocketAddr)> =
            (1..=4).map(|i| (format!("n{i}"), SocketAddr::from(([127, 0, 0, 1], i)))).collect();
        let weights = |policy, placement| {
            let c = larder_config(policy, placement, &setup, &nodes);
            let c = RouterConfig::from_toml(&c.to_toml().unwrap()).unwrap();
            assert_eq!(c.policy.placement, placement);
            c.nodes.iter().map(|n| n.weight).collect::<Vec<_>>()
        };
        // Shares already proportional to the reported caches: equal configured weights.
        assert_eq!(weights(PolicyKind::LardR, PlacementMode::Shared), [1, 1, 1, 1]);
        assert_eq!(weights(PolicyKind::Lard, PlacementMode::PerRouter), [1, 1, 1, 1]);
        // Policies that do not read capacities take the cache weights.
        assert_eq!(weights(PolicyKind::Wrr, PlacementMode::Shared), [2, 2, 1, 1]);
        assert_eq!(weights(PolicyKind::Hash, PlacementMode::Shared), [2, 2, 1, 1]);
        assert_eq!(weights(PolicyKind::LardR, PlacementMode::SharedEqual), [2, 2, 1, 1]);
    }
}

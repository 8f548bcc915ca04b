//! What an experiment is asked to do, typed: [`ExperimentPlan`] (the binary builds it
//! from its flags, `larder up --bench` from its own), and the checks and defaults that
//! turn it into the [`Setup`] fixed for the whole run.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use bench::RampSpec;

use crate::anchors::Tools;
use crate::cpu_cap::CpuShare;
use crate::error::{invalid, LabError, Result};
use crate::front::{RouterSetup, System};
use crate::hosts::{HostsConfig, Rate};
use crate::launcher::free_local_address;
use crate::nodes::NodeSpec;
use crate::origin_link::OriginLink;
use crate::profile::{self, Profile};
use crate::report::Report;
use crate::scenario::ScenarioKind;
use crate::video::LargeObjects;
use crate::workload::{Content, DynCost, WorkloadKind};
use trace::{FlashCrowd, MembershipEvent};

/// Most front-end instances one run starts on one address.
pub const MAX_FRONT_ENDS: u8 = 16;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Kind {
    /// Policies and anchors on cache-bound workloads (LARD's and HACC's headline).
    Locality,
    /// Static files with a share of CPU-heavy dynamic requests: response time of the
    /// static ones under `class` routing vs `rr` (HACC's ASP case).
    Classes,
    /// Caching nodes in front of an origin (nginx serving the store) over a link of
    /// limited bandwidth: a miss costs origin egress, as it does for a cache tier.
    Origin,
    /// A flash crowd, a node added, restarted or removed mid-run: figures every second.
    Churn,
}

impl Kind {
    /// What this kind of experiment runs by default, measures and claims: the one place
    /// that tells the kinds apart.
    pub(crate) fn profile(self) -> &'static Profile {
        match self {
            Kind::Locality => &profile::LOCALITY,
            Kind::Classes => &profile::CLASSES,
            Kind::Origin => &profile::ORIGIN,
            Kind::Churn => &profile::CHURN,
        }
    }

    /// The name on the command line (`larder bench experiment locality`).
    pub fn name(self) -> &'static str {
        self.profile().name
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Connections {
    /// Persistent connections: every request of a user on one connection.
    KeepAlive,
    /// A new connection for every request (HTTP/1.0 style).
    PerRequest,
}

impl Connections {
    pub fn name(self) -> &'static str {
        match self {
            Connections::KeepAlive => "keep-alive",
            Connections::PerRequest => "per-request",
        }
    }
}

/// DBench's ramp after each measured run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ramp {
    pub spec: RampSpec,
    /// A slower request counts as a failure.
    pub timeout: Duration,
    /// The ramp's last step.
    pub max_users: u32,
}

/// One experiment, as `larder bench experiment --help` explains it. Empty lists and
/// `None`s take the defaults of the experiment's kind.
#[derive(Clone, Debug, PartialEq)]
pub struct ExperimentPlan {
    pub kind: Kind,
    pub workloads: Vec<WorkloadKind>,
    /// Access log for the `trace` workload.
    pub trace: Option<PathBuf>,
    pub systems: Vec<System>,
    /// Every system runs with each of these numbers of front-end instances on one
    /// address (SO_REUSEPORT): one placement across many routers, or not.
    pub routers: Vec<u8>,
    /// Each node's cache in MiB (one node per entry).
    pub cache_mb: Vec<u64>,
    /// Node i's CPU (empty: the kind's default).
    pub pin: Vec<usize>,
    pub pin_front: Option<usize>,
    /// Cap every node process's CPU time at this share of one core (None: no cap).
    pub node_cpu_share: Option<f64>,
    /// Static data set, or all dynamic views together [default: 3/4 of all caches].
    pub dataset_mb: Option<u64>,
    pub file_size: u64,
    pub alpha: f64,
    pub dyn_cost: DynCost,
    pub dyn_view_size: u64,
    pub dyn_doc_size: u64,
    pub seed: u64,
    pub users: u32,
    pub connections: Vec<Connections>,
    pub duration: Duration,
    pub warmup: Duration,
    pub rounds: u32,
    pub ramp: Option<Ramp>,
    /// classes: requests per second in total (open loop).
    pub rate: f64,
    /// classes: share of the requests that are dynamic.
    pub dynamic_share: f64,
    pub router_threads: usize,
    pub client_threads: usize,
    /// The larder executable for nodes and router [default: this one].
    pub larder: Option<PathBuf>,
    pub haproxy: Option<PathBuf>,
    pub nginx: Option<PathBuf>,
    /// `varnishd`.
    pub varnish: Option<PathBuf>,
    /// origin: the limited link to the origin (None: unshaped loopback).
    pub origin_link: Option<OriginLink>,
    /// origin: the large-object workloads' objects and ranges.
    pub large: LargeObjects,
    /// Give every front-end node weights proportional to the nodes' caches (HAProxy's,
    /// nginx's, Varnish's and larder route's own weights) instead of equal ones; larder
    /// route's placement policies keep equal weights, as their shares already follow the
    /// capacities the nodes report.
    pub weigh_by_cache: bool,
    pub store_dir: Option<PathBuf>,
    /// churn: the scenarios to run (empty: all).
    pub scenarios: Vec<ScenarioKind>,
    /// churn: the flash scenario's crowd [default: 30% on one target from the warm-up's end].
    pub flash_crowd: Option<FlashCrowd>,
    /// churn: membership events of one more scenario, `events`.
    pub events: Vec<MembershipEvent>,
    /// Directory for table.md, rows.json, shape.json, the SVG charts and the children's logs.
    pub out: PathBuf,
    /// Echo the children's output live (it always goes to `<out>/logs/`).
    pub verbose: bool,
    /// Every node, front-end, origin and the load generator on a host of its own (None:
    /// all on this machine's loopback).
    pub hosts: Option<HostsConfig>,
    /// With hosts: every system runs once with the hosts' links at each of these rates,
    /// side by side (empty: the hosts' link rate only).
    pub link_rates: Vec<Rate>,
}

impl Default for ExperimentPlan {
    /// The flags' defaults (a test in the binary checks that they agree).
    fn default() -> Self {
        ExperimentPlan {
            kind: Kind::Locality,
            workloads: Vec::new(),
            trace: None,
            systems: Vec::new(),
            routers: vec![1],
            cache_mb: vec![16, 16, 8, 8],
            pin: Vec::new(),
            pin_front: None,
            node_cpu_share: None,
            dataset_mb: None,
            file_size: 16 << 10,
            alpha: 0.8,
            dyn_cost: DynCost::Micros(2000),
            dyn_view_size: 64 << 10,
            dyn_doc_size: 8 << 10,
            seed: 1,
            users: 32,
            connections: vec![Connections::KeepAlive],
            duration: Duration::from_secs(10),
            warmup: Duration::from_secs(4),
            rounds: 2,
            ramp: None,
            rate: 1000.0,
            dynamic_share: 0.05,
            router_threads: 1,
            client_threads: 1,
            larder: None,
            haproxy: None,
            nginx: None,
            varnish: None,
            origin_link: None,
            large: LargeObjects::default(),
            weigh_by_cache: false,
            store_dir: None,
            scenarios: Vec::new(),
            flash_crowd: None,
            events: Vec::new(),
            out: PathBuf::from("experiment-results"),
            verbose: false,
            hosts: None,
            link_rates: Vec::new(),
        }
    }
}

/// Everything fixed for the whole experiment, with the kind's defaults filled in.
pub struct Setup {
    pub tools: Tools,
    pub router: RouterSetup,
    pub nodes: Vec<NodeSpec>,
    /// Every node's CPU cap, checked.
    pub node_cpu: Option<CpuShare>,
    pub workloads: Vec<WorkloadKind>,
    pub systems: Vec<System>,
    pub client_threads: usize,
    /// origin: where the origin listens and what serves it.
    pub origin: Option<OriginSetup>,
}

/// Weights proportional to `cache_mb` in lowest terms (16/16/8/8 gives 2/2/1/1).
fn cache_weights(cache_mb: &[u64]) -> Vec<u32> {
    fn gcd(a: u64, b: u64) -> u64 {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }
    let g = cache_mb.iter().copied().fold(0, gcd).max(1);
    cache_mb.iter().map(|&m| u32::try_from(m / g).unwrap_or(u32::MAX)).collect()
}

/// The origin of the `origin` experiment: nginx on one address for the whole run (so the
/// link's filter names one port), started afresh in every run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OriginSetup {
    pub addr: SocketAddr,
    pub nginx: PathBuf,
}

impl ExperimentPlan {
    /// The system the table's ratios are to.
    pub fn baseline(&self) -> &'static str {
        self.kind.profile().baseline
    }

    /// Checks the plan and fills in the defaults of its kind; `report` hears of the
    /// front-ends left out for want of their tools.
    pub fn setup(&self, report: &dyn Report) -> Result<Setup> {
        if self.cache_mb.is_empty() || self.cache_mb.contains(&0) {
            invalid!("--cache-mb needs one size of at least 1 MiB per node");
        }
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let nodes = self.cache_mb.len();
        let profile = self.kind.profile();
        let pin: Vec<Option<usize>> = match &self.pin[..] {
            [] if profile.pins_nodes_apart => (0..nodes).map(|i| Some(i * cpus / nodes)).collect(),
            [] => vec![None; nodes],
            p if p.len() == nodes => p.iter().map(|&c| Some(c)).collect(),
            p => invalid!("--pin gives {} CPUs for {nodes} nodes", p.len()),
        };
        let pin_front = match self.pin_front {
            Some(cpu) => Some(cpu),
            None if profile.pins_nodes_apart => pin[0],
            None => None,
        };
        if let Some(cpu) = pin.iter().flatten().chain(&pin_front).find(|&&c| c >= cpus) {
            invalid!("--pin: CPU {cpu} does not exist (this machine has {cpus})");
        }
        let node_cpu = self
            .node_cpu_share
            .map(|share| CpuShare::new(share, cpus))
            .transpose()
            .map_err(LabError::Invalid)?;
        if self.hosts.is_some() && self.origin_link.is_some() {
            invalid!(
                "--origin-mbit shapes loopback; with --hosts, the origin has a host and a \
                 shaped link of its own (--link-rate)"
            );
        }
        if self.hosts.is_none() && !self.link_rates.is_empty() {
            invalid!("--link-rate shapes the hosts' links: it needs --hosts");
        }
        if self.routers.is_empty() || self.routers.iter().any(|&r| r == 0 || r > MAX_FRONT_ENDS) {
            invalid!("--routers: each count must be in 1..={MAX_FRONT_ENDS}");
        }
        if self.rounds == 0 || self.users == 0 || self.duration.is_zero() {
            invalid!("--rounds, --users and --duration must be above 0");
        }
        if !(self.rate.is_finite() && self.rate > 0.0) {
            invalid!("--rate must be a positive number of requests per second");
        }
        if !(self.dynamic_share > 0.0 && self.dynamic_share < 1.0) {
            invalid!("--dynamic-share must be between 0 and 1");
        }
        let tools = Tools::find(self.haproxy.clone(), self.nginx.clone(), self.varnish.clone());
        let mut systems = self.systems.clone();
        if systems.is_empty() {
            let policies = profile.policies.iter().map(|&p| System::larder(p));
            let anchors = profile.anchors.iter().map(|&a| System::Anchor(a));
            systems = policies.chain(anchors).collect();
        }
        systems.retain(|s| match s {
            System::Anchor(a) => match tools.missing(*a) {
                Some(why) => {
                    report.warn(&format!("larder experiment: skipping {s}: {why}"));
                    false
                }
                None => true,
            },
            System::Larder(..) | System::Peers => true,
        });
        if systems.is_empty() {
            invalid!("no front-end left to run");
        }
        let mut workloads = self.workloads.clone();
        if workloads.is_empty() {
            workloads = profile.workloads.to_vec();
        }
        if profile.origin && workloads.iter().any(|w| w.content == Content::Dynamic) {
            invalid!("the origin experiment serves files (static or trace workloads), not views");
        }
        let large = |w: &WorkloadKind| matches!(w.content, Content::Video | Content::VideoCrowd);
        if !profile.origin && workloads.iter().any(large) {
            invalid!(
                "the video workloads are the origin experiment's (large objects from an origin)"
            );
        }
        let caching = systems.iter().find_map(|s| match s {
            System::Anchor(a) if a.caches() => Some(*a),
            _ => None,
        });
        if let Some(a) = caching {
            if !profile.origin {
                invalid!("{a} is a caching cluster of its own: it runs in the origin experiment");
            }
            // On one loopback only the large objects' origin log measures every cache alike;
            // with hosts, the origin's link does for every workload.
            if self.hosts.is_none() && !workloads.iter().all(large) {
                invalid!(
                    "{a} is a caching cluster of its own: on one machine it runs on the video \
                     workloads only (any workload with --hosts)"
                );
            }
        }
        if profile.mixes_dynamic
            && systems
                .iter()
                .any(|s| *s == System::Peers || matches!(s, System::Anchor(a) if a.self_routing()))
        {
            invalid!("the classes experiment's load goes to one front-end: not to peers or self-routing caches");
        }
        if self.large.objects < 2 {
            invalid!("--large-objects must be at least 2");
        }
        let origin = if profile.origin {
            let Some(nginx) = tools.nginx.clone() else {
                invalid!("the origin experiment's origin is nginx: install it or give --nginx");
            };
            Some(OriginSetup { addr: free_local_address()?, nginx })
        } else {
            None
        };
        if profile.mixes_dynamic && workloads.iter().any(|w| w.content != Content::Static) {
            invalid!(
                "the classes experiment mixes its own dynamic requests into static workloads only"
            );
        }
        let names: Vec<String> = (1..=nodes).map(|i| format!("n{i}")).collect();
        Ok(Setup {
            tools,
            router: RouterSetup {
                threads: self.router_threads.max(1),
                cpu: pin_front,
                // The second half of the nodes (on the last CPUs when pinned).
                dynamic_pool: names[nodes / 2..].to_vec(),
                weights: if self.weigh_by_cache {
                    cache_weights(&self.cache_mb)
                } else {
                    Vec::new()
                },
            },
            nodes: self
                .cache_mb
                .iter()
                .zip(pin)
                .map(|(&cache_mb, cpu)| NodeSpec { cache_mb, cpu })
                .collect(),
            node_cpu,
            workloads,
            systems,
            client_threads: self.client_threads.max(1),
            origin,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Kept;

    #[test]
    fn cache_weights_are_in_lowest_terms() {
        assert_eq!(cache_weights(&[16, 16, 8, 8]), [2, 2, 1, 1]);
        assert_eq!(cache_weights(&[48, 48, 24, 24]), [2, 2, 1, 1]);
        assert_eq!(cache_weights(&[7, 5]), [7, 5]);
    }

    #[test]
    fn node_cpu_share_is_checked() {
        let report = Kept::default();
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let with = |share| ExperimentPlan { node_cpu_share: Some(share), ..Default::default() };
        for bad in [0.0, -1.0, cpus as f64 + 0.5, f64::NAN] {
            let Err(e) = with(bad).setup(&report) else { panic!("{bad} was accepted") };
            assert!(e.to_string().contains("--node-cpu-share"), "{bad}: {e}");
        }
        let setup = with(0.25).setup(&report).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(setup.node_cpu.map(CpuShare::get), Some(0.25));
        assert!(ExperimentPlan::default()
            .setup(&report)
            .unwrap_or_else(|e| panic!("{e}"))
            .node_cpu
            .is_none());
    }
}

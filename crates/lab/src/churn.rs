//! The churn experiment (`larder bench experiment churn`): a flash crowd, a node added,
//! restarted on its address or removed in the middle of a run, on real processes, with
//! figures every second ([`crate::timeline`]).
//!
//! Every run starts fresh nodes (those a scenario adds later are started at their event,
//! cold, on an address chosen up front) and the front-end in front of the nodes that are
//! in at the start, then a closed loop of users for `warm-up + duration` while this thread
//! reads every node's load report once a second and plays the events on time:
//!
//! - **add**: start the node; larder routers get it in their configuration and SIGHUP;
//!   HAProxy lists it `disabled` from the start and is told `enable server` on its admin
//!   socket.
//! - **remove**: larder routers are reloaded without it (it drains), HAProxy is told
//!   `disable server`; the process is stopped 2 s later.
//! - **restart**: SIGKILL (a crash), then the node is started again on its address.
//!
//! nginx and Varnish take their upstreams from their configuration only, so they run the
//! flash crowd and restarts but not adds and removes (skipped, and said so; see
//! [`Scenario::unsupported`]).

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

use bench::crowd::CrowdPlan;
use bench::{BaseUrl, Config, Mode, Plan, Report};
use trace::{initial_members, Change, FlashCrowd, MembershipEvent};

use crate::anchors::{haproxy_socket, Anchor, Servers};
use crate::child::{self, Child, Group};
use crate::error::{Context, LabError, Result};
use crate::front::{self, Front, System};
use crate::launcher::{free_local_addresses, Launcher};
use crate::load_report::{self, NodeCounters};
use crate::nodes;
use crate::plan::{ExperimentPlan, Setup};
use crate::scenario::Scenario;
use crate::timeline::{Second, Timeline};
use crate::workload::Workload;

/// Longest wait for a process to start and answer.
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a removed node drains before its process is stopped.
const DRAIN: Duration = Duration::from_secs(2);
/// The seed of the crowd's hot targets.
const CROWD_SEED: u64 = 1;

/// What one run needs beyond the plan.
pub struct ChurnRun<'a> {
    pub workload: &'a Workload,
    pub scenario: &'a Scenario,
    pub system: System,
    /// Its name in the results (a second listing is `lard#2`).
    pub label: &'a str,
    pub round: u32,
}

/// The nodes of a run: each slot a node by name, running or not.
struct Cluster<'a> {
    launcher: &'a Launcher,
    setup: &'a Setup,
    workload: &'a Workload,
    names: Vec<String>,
    addrs: Vec<SocketAddr>,
    running: Vec<Option<Child>>,
    members: Vec<bool>,
}

impl Cluster<'_> {
    fn start(&mut self, i: usize) -> Result<()> {
        let deadline = Instant::now() + START_TIMEOUT;
        let (child, addr) = nodes::start_one(
            self.launcher,
            &self.workload.docroot,
            &self.setup.nodes[i],
            &self.workload.node_args,
            &self.names[i],
            self.addrs[i],
            deadline,
        )?
        .ok_or(LabError::Interrupted)?;
        self.addrs[i] = addr;
        self.running[i] = Some(child);
        Ok(())
    }

    fn stop(&mut self, i: usize, signal: libc::c_int) {
        if let Some(c) = self.running[i].take() {
            c.signal(signal);
            let l = &self.launcher;
            child::stop(&mut [c], l.grace, &l.signals, &*l.report);
        }
    }

    fn member_nodes(&self) -> Vec<(String, SocketAddr)> {
        (0..self.names.len())
            .filter(|&i| self.members[i])
            .map(|i| (self.names[i].clone(), self.addrs[i]))
            .collect()
    }

    /// Every node's counters, None for a node not running or not answering.
    fn sample(&self) -> Vec<Option<NodeCounters>> {
        (0..self.names.len())
            .map(|i| self.running[i].as_ref().and_then(|_| load_report::read(self.addrs[i]).ok()))
            .collect()
    }
}

impl Drop for Cluster<'_> {
    fn drop(&mut self) {
        let mut group = Group::new(
            self.launcher.grace,
            self.launcher.signals.clone(),
            self.launcher.report.clone(),
        );
        group.children.extend(self.running.iter_mut().filter_map(Option::take));
    }
}

/// Tells the front-end that node `i` is in (`true`) or out of service.
fn set_member(
    front: &mut Front,
    system: System,
    cluster: &Cluster<'_>,
    i: usize,
    on: bool,
) -> Result<()> {
    match system {
        System::Larder(..) => {
            front::set_nodes(front, system, &cluster.setup.router, &cluster.member_nodes())
        }
        System::Anchor(Anchor::Haproxy | Anchor::HaproxyConsistent) => {
            let verb = if on { "enable" } else { "disable" };
            haproxy_command(&front.dir, &format!("{verb} server nodes/{}", cluster.names[i]))
        }
        System::Anchor(a) => Err(LabError::Invalid(format!("{a} cannot change its nodes"))),
        System::Peers => Err(LabError::Invalid(format!("{system} cannot change their nodes here"))),
    }
}

/// One command on HAProxy's admin socket; its answer must be empty (success).
fn haproxy_command(dir: &Path, command: &str) -> Result<()> {
    let path = haproxy_socket(dir);
    let mut s =
        UnixStream::connect(&path).with_context(|| format!("connecting to {}", path.display()))?;
    s.set_read_timeout(Some(Duration::from_secs(5)))?;
    s.write_all(format!("{command}\n").as_bytes())?;
    let mut answer = String::new();
    s.read_to_string(&mut answer).with_context(|| format!("haproxy: {command}"))?;
    match answer.trim() {
        "" => Ok(()),
        other => Err(LabError::Child(format!("haproxy answered {command:?} with {other:?}"))),
    }
}

/// One system through one scenario: the timeline.
pub fn run_one(
    plan: &ExperimentPlan,
    setup: &Setup,
    launcher: &Launcher,
    dir: &Path,
    run: &ChurnRun<'_>,
) -> Result<Timeline> {
    let (w, scenario, system) = (run.workload, run.scenario, run.system);
    let n = setup.nodes.len();
    let members = initial_members(&scenario.events, n).map_err(LabError::Invalid)?;
    let mut cluster = Cluster {
        launcher,
        setup,
        workload: w,
        names: (1..=n).map(|i| format!("n{i}")).collect(),
        // Every node's port is chosen now, below the ephemeral range: HAProxy lists a
        // node that joins later from the start, and a restarted node binds its port again
        // after a gap in which no connection can have taken it.
        addrs: free_local_addresses(n)?
            .into_iter()
            .enumerate()
            .map(|(i, a)| launcher.address_on(&format!("n{}", i + 1), a))
            .collect::<Result<_>>()?,
        running: (0..n).map(|_| None).collect(),
        members: members.clone(),
    };
    for (i, &member) in members.iter().enumerate() {
        if member {
            cluster.start(i)?;
        }
    }
    let all: Vec<(String, SocketAddr)> =
        cluster.names.iter().cloned().zip(cluster.addrs.iter().copied()).collect();
    let servers = Servers { nodes: &all, weights: &setup.router.weights, members: &members };
    let deadline = Instant::now() + START_TIMEOUT;
    let mut front = front::start_on(
        launcher,
        system,
        1,
        &setup.tools,
        &setup.router,
        &servers,
        dir,
        w.probe_path(),
        deadline,
    )?;
    let total = plan.warmup + plan.duration;
    let config = load(plan, &front, w, total, scenario.crowd)?;
    let runtime = bench::run::runtime(setup.client_threads)?;
    let mut samples: Vec<Vec<Option<NodeCounters>>> = Vec::new();
    let mut events = scenario.events.clone();
    events.sort_by_key(|e| e.at);
    let mut stops: Vec<(Duration, usize)> = Vec::new();
    let report: Result<Report> = std::thread::scope(|scope| {
        let start = Instant::now();
        let load = scope.spawn(|| runtime.block_on(bench::run(&config, |_| {})));
        let mut played = 0;
        let mut outcome = Ok(());
        samples.push(cluster.sample());
        for s in 1..=total.as_secs() {
            let tick = start + Duration::from_secs(s);
            std::thread::sleep(tick.saturating_duration_since(Instant::now()));
            samples.push(cluster.sample());
            if launcher.signals.stop_requested(Duration::ZERO) {
                outcome = Err(LabError::Interrupted);
                break;
            }
            let now = start.elapsed();
            while outcome.is_ok() && played < events.len() && events[played].at <= now {
                outcome = play(&mut front, system, &mut cluster, &events[played], &mut stops, now);
                played += 1;
            }
            for (_, i) in stops.iter().filter(|(at, _)| *at <= now) {
                cluster.stop(*i, libc::SIGTERM);
            }
            stops.retain(|(at, _)| *at > now);
            if outcome.is_err() {
                break;
            }
        }
        let report =
            load.join().map_err(|_| LabError::Child("the load generator panicked".into()))?;
        outcome?;
        Ok(report?)
    });
    drop(front);
    drop(cluster);
    let report = report?;
    let event_at = scenario.event_at().as_secs_f64();
    let node = scenario.events.first().map(|e| e.node);
    let caches: Vec<u64> = setup.nodes.iter().map(|s| s.cache_mb).collect();
    let fair_share = node.map_or(0.0, |i| {
        let mut after = members;
        for e in &scenario.events {
            after[e.node] = e.change != Change::Remove;
        }
        let total: u64 = caches.iter().zip(&after).filter(|(_, &m)| m).map(|(c, _)| c).sum();
        if after[i] {
            caches[i] as f64 / total.max(1) as f64
        } else {
            0.0
        }
    });
    Ok(Timeline {
        scenario: scenario.name.clone(),
        system: run.label.to_string(),
        round: run.round,
        event_at,
        node,
        fair_share,
        seconds: seconds(&report, &samples),
    })
}

/// Plays `event` at `now`; a removed node's process is stopped later (`stops`).
fn play(
    front: &mut Front,
    system: System,
    cluster: &mut Cluster<'_>,
    event: &MembershipEvent,
    stops: &mut Vec<(Duration, usize)>,
    now: Duration,
) -> Result<()> {
    let i = event.node;
    match event.change {
        Change::Add => {
            cluster.start(i)?;
            cluster.members[i] = true;
            set_member(front, system, cluster, i, true)
        }
        Change::Remove => {
            cluster.members[i] = false;
            stops.push((now + DRAIN, i));
            set_member(front, system, cluster, i, false)
        }
        Change::Restart => {
            cluster.stop(i, libc::SIGKILL);
            cluster.start(i)
        }
    }
}

/// The closed loop of one run: the plan's users over the workload's stream for `total`,
/// epochs of one second, with the scenario's crowd.
fn load(
    plan: &ExperimentPlan,
    front: &Front,
    w: &Workload,
    total: Duration,
    crowd: Option<FlashCrowd>,
) -> Result<Config> {
    let base = BaseUrl::parse(&format!("http://{}/", front.addr))?;
    let paths: Vec<String> = w.paths.iter().map(|p| base.join(p)).collect();
    let count = paths.len();
    let mut c = Config::closed(base, Plan::flat(paths, w.stream.iter().copied())?, plan.users);
    c.mode = Mode::Closed { users: plan.users };
    c.duration = Some(total);
    c.cycle = true;
    c.epoch = Duration::from_secs(1);
    c.flash_crowd = crowd.map(|c| CrowdPlan::new(c, count, CROWD_SEED)).transpose()?;
    Ok(c)
}

/// Per second: the load generator's epochs and the differences of the nodes' counters.
fn seconds(report: &Report, samples: &[Vec<Option<NodeCounters>>]) -> Vec<Second> {
    report
        .epochs
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let pair = |n: usize| -> Option<NodeCounters> {
                let (a, b) =
                    (samples.get(i)?.get(n)?.as_ref()?, samples.get(i + 1)?.get(n)?.as_ref()?);
                // A restarted node's counters start again from zero.
                Some(if b.requests >= a.requests { b.since(a) } else { *b })
            };
            let nodes = samples.first().map_or(0, Vec::len);
            let deltas: Vec<NodeCounters> =
                (0..nodes).map(|n| pair(n).unwrap_or_default()).collect();
            let hits: u64 = deltas.iter().map(|d| d.hits).sum();
            let lookups: u64 = deltas.iter().map(|d| d.hits + d.misses).sum();
            let span = e.duration_s.max(1e-9);
            Second {
                t: e.start_s + e.duration_s,
                rps: e.summary.throughput_rps,
                p99_ms: e.summary.latency_ms.p99,
                errors: e.summary.errors.total,
                hit_ratio: if lookups > 0 { hits as f64 / lookups as f64 } else { f64::NAN },
                node_rps: deltas.iter().map(|d| d.requests as f64 / span).collect(),
            }
        })
        .collect()
}

//! One front-end on one workload: fresh nodes (cold caches), the front-end in front of
//! them, a warm-up, the measured load (and the ramp, if asked), everything stopped, and
//! the figures as a [`Row`]: throughput and latency from the load generator, hit ratios
//! from the nodes' load reports, CPU time per request from /proc.

use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use bench::{BaseUrl, Config, Mode, Plan, RampLimits, Report};

use std::ffi::OsString;

use crate::cache_tier;
use crate::child::Group;
use crate::cpu_time::{group_cpu_seconds, own_cpu_seconds};
use crate::error::{LabError, Result};
use crate::front::{self, Front, System};
use crate::hosts::{self, Rate, ORIGIN_HOST};
use crate::launcher::Launcher;
use crate::launcher::ANY_LOCAL_PORT;
use crate::load_report::NodeCounters;
use crate::merged_latency;
use crate::nodes::{self, Nodes};
use crate::origin;
use crate::origin_link;
use crate::peers::{self, PeerPlan};
use crate::plan::{Connections, ExperimentPlan, Ramp, Setup};
use crate::probe;
use crate::results::Row;
use crate::workload::Workload;

/// Longest wait for a process to start and answer.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// CPU seconds used so far by the front-end, the nodes and this process.
fn cpu_now(front: &Front, nodes: &Nodes) -> [f64; 3] {
    let front_cpu = front.pids().into_iter().map(group_cpu_seconds).sum();
    [front_cpu, nodes.cpu_seconds(), own_cpu_seconds()]
}

/// What one run is: the workload (and the classes experiment's dynamic requests), the
/// front-end, the connection mode, the round.
pub struct RunSpec<'a> {
    pub workload: &'a Workload,
    pub dynamic: Option<&'a Workload>,
    pub system: System,
    /// Which listing of `system` this is (1 for the first; see [`front::listings`]).
    pub listing: u8,
    /// Instances of the front-end on one address.
    pub routers: u8,
    pub connections: Connections,
    pub round: u32,
    /// The hosts' link rate of this run, when systems run at several.
    pub link_rate: Option<Rate>,
}

/// One front-end on one workload: fresh nodes, the front-end, warm-up, measurement; the
/// front-end's configuration goes to `dir`, the children's output to the launcher's logs.
pub fn run_one(
    plan: &ExperimentPlan,
    setup: &Setup,
    launcher: &Launcher,
    dir: &Path,
    run: &RunSpec<'_>,
) -> Result<Row> {
    let (w, dynamic, system, connections) =
        (run.workload, run.dynamic, run.system, run.connections);
    let deadline = Instant::now() + START_TIMEOUT;
    let mut node_args = w.node_args.clone();
    if let Some(d) = dynamic {
        node_args.extend(d.node_args.iter().cloned());
    }
    // Stopped when dropped: the front-end first, then the nodes behind it, then the origin.
    // With hosts, every system is measured at the origin (its log, its link's counter), so
    // caches of every kind compare on the same figures.
    let at_origin = setup.origin.is_some() && (w.large() || launcher.hosts.is_some());
    let (origin, nodes, front) = match &setup.origin {
        Some(o) => {
            let addr = launcher.address_on(ORIGIN_HOST, o.addr)?;
            let group = origin::start(
                launcher,
                &o.nginx,
                &w.docroot,
                addr,
                dir,
                w.probe_path(),
                at_origin,
                deadline,
            )?
            .ok_or(LabError::Interrupted)?;
            let origins = [format!("http://{addr}")];
            let content = Content::Origin { origins: &origins, extra: &w.caching_node_args() };
            let (nodes, front) = match system {
                System::Anchor(a) if a.caches() => {
                    let nodes = cache_tier::start(
                        launcher,
                        a,
                        &setup.tools,
                        addr,
                        &setup.nodes,
                        dir,
                        deadline,
                    )?
                    .ok_or(LabError::Interrupted)?;
                    let front = if a.self_routing() {
                        front::none(launcher, &nodes.addrs, Vec::new(), dir)
                    } else {
                        start_front(launcher, setup, run, &nodes, dir, deadline)?
                    };
                    (nodes, front)
                }
                _ => start_larder(launcher, setup, run, &content, dir, deadline)?,
            };
            (Some(group), nodes, front)
        }
        None => {
            let content = Content::Docroot { docroot: &w.docroot, extra: &node_args };
            let (nodes, front) = start_larder(launcher, setup, run, &content, dir, deadline)?;
            (None, nodes, front)
        }
    };
    let origin_log = at_origin.then_some(dir);
    let measured =
        measure(plan, setup, launcher, w, dynamic, &front, &nodes, connections, origin_log);
    drop(front);
    drop(nodes);
    drop(origin);
    let mut row = measured?;
    row.workload = w.kind.to_string();
    row.system = front::label(system, run.routers, run.listing);
    if let Some(rate) = run.link_rate {
        row.system.push_str(&format!(" @{rate}"));
    }
    row.round = run.round;
    Ok(row)
}

/// What larder's nodes serve: files from a docroot, or an origin's, each with more flags.
enum Content<'a> {
    Docroot { docroot: &'a Path, extra: &'a [String] },
    Origin { origins: &'a [String], extra: &'a [String] },
}

/// larder's nodes as `run` has them: behind its front-end, or as peers.
fn start_larder(
    launcher: &Launcher,
    setup: &Setup,
    run: &RunSpec<'_>,
    content: &Content<'_>,
    dir: &Path,
    deadline: Instant,
) -> Result<(Nodes, Front)> {
    if run.system == System::Peers {
        return start_peers(launcher, setup, content, dir, deadline);
    }
    let nodes = match *content {
        Content::Docroot { docroot, extra } => {
            nodes::start(launcher, docroot, &setup.nodes, extra, deadline)?
        }
        Content::Origin { origins, extra } => {
            nodes::start_caching(launcher, origins, &setup.nodes, extra, deadline)?
        }
    }
    .ok_or(LabError::Interrupted)?;
    let front = start_front(launcher, setup, run, &nodes, dir, deadline)?;
    Ok((nodes, front))
}

/// The front-end of `run` in front of `nodes`.
fn start_front(
    launcher: &Launcher,
    setup: &Setup,
    run: &RunSpec<'_>,
    nodes: &Nodes,
    dir: &Path,
    deadline: Instant,
) -> Result<Front> {
    front::start(
        launcher,
        run.system,
        run.routers,
        &setup.tools,
        &setup.router,
        &nodes.addrs,
        dir,
        run.workload.probe_path(),
        deadline,
    )
}

/// larder's nodes as peers, each on its node's host: the peers are the nodes (their
/// processes, their node addresses), and clients go to every peer's address.
fn start_peers(
    launcher: &Launcher,
    setup: &Setup,
    content: &Content<'_>,
    dir: &Path,
    deadline: Instant,
) -> Result<(Nodes, Front)> {
    let (flags, extra): (Vec<OsString>, &[String]) = match *content {
        Content::Docroot { docroot, extra } => {
            (vec!["--docroot".into(), docroot.as_os_str().to_owned()], extra)
        }
        Content::Origin { origins, extra } => {
            (origins.iter().flat_map(|o| ["--origin".into(), o.into()]).collect(), extra)
        }
    };
    let config = front::peer_config(&setup.router);
    let plan = PeerPlan {
        content: &flags,
        specs: &setup.nodes,
        extra,
        config: &config,
        listen: ANY_LOCAL_PORT,
        admin: None,
        handoff: false,
    };
    let mut group = Group::new(launcher.grace, launcher.signals.clone(), launcher.report.clone());
    let started =
        peers::start(launcher, &plan, dir, &mut group, deadline)?.ok_or(LabError::Interrupted)?;
    let clients: Vec<(String, SocketAddr)> =
        started.iter().map(|p| (p.name.clone(), p.addr)).collect();
    let admins = started.iter().map(|p| p.admin).collect();
    let nodes =
        Nodes { group, addrs: started.iter().map(|p| (p.name.clone(), p.backend)).collect() };
    Ok((nodes, front::none(launcher, &clients, admins, dir)))
}

/// Measures one run. With `origin_log` (the run's directory: large objects, where the
/// nodes may be another system's caches), the origin's figures and the (byte) hit ratio
/// come from what the origin logged it sent, the same measure for every system; else
/// from the nodes' load reports.
#[allow(clippy::too_many_arguments)]
fn measure(
    plan: &ExperimentPlan,
    setup: &Setup,
    launcher: &Launcher,
    w: &Workload,
    dynamic: Option<&Workload>,
    front: &Front,
    nodes: &Nodes,
    connections: Connections,
    origin_log: Option<&Path>,
) -> Result<Row> {
    let runtime = bench::run::runtime(setup.client_threads)?;
    let per_request = connections == Connections::PerRequest;
    let loads = Loads::new(&front.targets, w, dynamic)?;
    if !plan.warmup.is_zero() && !w.cold {
        run_together(&runtime, &loads.configs(plan, plan.warmup, per_request))?;
    }
    let counters = || if origin_log.is_some() { Ok(Vec::new()) } else { nodes.counters() };
    let links = || launcher.hosts.as_ref().map_or(Ok(Vec::new()), |h| h.link_bytes());
    let sent = || -> Result<Option<origin::Sent>> {
        let Some(dir) = origin_log else { return Ok(None) };
        Ok(Some(origin::sent(dir)?))
    };
    let before: Vec<NodeCounters> = counters()?;
    let sent_before = sent()?;
    let links_before = links()?;
    let loopback_before = plan.origin_link.map(|_| origin_link::sent_bytes()).transpose()?;
    let cpu_before = cpu_now(front, nodes);
    let reports = run_together(&runtime, &loads.configs(plan, plan.duration, per_request))?;
    let cpu_after = cpu_now(front, nodes);
    let after = counters()?;
    let link_bytes = hosts::link_bytes_since(&links()?, &links_before);
    // With a shaped link, the bytes are what crossed it (the origin host's link, or the
    // shaped class on loopback); else what the origin logged.
    let link_sent = match loopback_before {
        Some(b) => Some(origin_link::sent_bytes()?.saturating_sub(b)),
        None => link_bytes.iter().find(|l| l.host == ORIGIN_HOST).map(|l| l.sent),
    };
    let sent = sent()?.zip(sent_before).map(|(after, before)| {
        let sent = after.since(&before);
        origin::Sent { bytes: link_sent.unwrap_or(sent.bytes), ..sent }
    });
    let picks_on_holders = picks_on_holders(&front.admins);
    let users_sustained = match plan.ramp {
        Some(Ramp { spec, timeout, max_users }) if plan.kind.profile().ramps => {
            let (base, main) = loads.first();
            let mut config = Config::closed(base.clone(), main.clone(), spec.start);
            config.mode = Mode::Ramp {
                spec,
                limits: RampLimits { avg_connect: timeout, max_connect: timeout * 2, max_users },
            };
            config.timeout = Some(timeout);
            config.connection_per_request = per_request;
            config.cycle = true;
            Some(runtime.block_on(bench::run(&config, |_| {}))?.users)
        }
        _ => None,
    };
    let delta: Vec<NodeCounters> = after.iter().zip(&before).map(|(a, b)| a.since(b)).collect();
    let hits: u64 = delta.iter().map(|d| d.hits).sum();
    let lookups: u64 = delta.iter().map(|d| d.hits + d.misses).sum();
    let disk: u64 = delta.iter().map(|d| d.disk_read_bytes).sum();
    let requests: u64 = reports.iter().map(|r| r.total.requests).sum();
    let served: u64 = reports.iter().map(|r| r.total.body_bytes).sum();
    let seconds = reports.iter().map(|r| r.duration_s).fold(0.0, f64::max);
    let per_req = |i: usize| (cpu_after[i] - cpu_before[i]) * 1e6 / requests.max(1) as f64;
    let main = &reports[0];
    let weighted_mean =
        reports.iter().map(|r| r.total.latency_ms.mean * r.total.requests as f64).sum::<f64>()
            / requests.max(1) as f64;
    Ok(Row {
        workload: String::new(),
        connections: connections.name().to_string(),
        system: String::new(),
        round: 0,
        requests,
        errors: reports.iter().map(|r| r.total.errors.total).sum(),
        throughput_rps: requests as f64 / seconds.max(f64::MIN_POSITIVE),
        mean_ms: weighted_mean,
        p99_ms: match (reports.len(), loads.spread()) {
            (1, _) => main.total.latency_ms.p99,
            (_, true) => {
                let parts: Vec<(u64, &[(f64, f64)])> = reports
                    .iter()
                    .map(|r| (r.total.requests, r.latency_distribution.as_slice()))
                    .collect();
                merged_latency::percentile(&parts, 99.0)
            }
            _ => f64::NAN,
        },
        // Large objects: the share of the bytes served that did not come from the origin.
        hit_ratio: match sent {
            Some(s) => 1.0 - s.bytes as f64 / served.max(1) as f64,
            None => hits as f64 / lookups.max(1) as f64,
        },
        disk_bytes_per_request: disk as f64 / requests.max(1) as f64,
        cpu_us_front: per_req(0),
        cpu_us_nodes: per_req(1),
        cpu_us_client: per_req(2),
        node_requests: delta.iter().map(|d| d.hits + d.misses).collect(),
        users_sustained,
        static_mean_ms: dynamic.map(|_| main.total.latency_ms.mean),
        static_p99_ms: dynamic.map(|_| main.total.latency_ms.p99),
        dynamic_mean_ms: reports.get(1).map(|r| r.total.latency_ms.mean),
        picks_on_holders,
        origin_requests_per_request: plan.kind.profile().origin.then(|| {
            let fetches = sent.map_or_else(
                || delta.iter().map(|d| d.origin_fetches).sum::<u64>(),
                |s| s.responses,
            );
            fetches as f64 / requests.max(1) as f64
        }),
        origin_bytes_per_request: plan.kind.profile().origin.then(|| {
            let bytes =
                sent.map_or_else(|| delta.iter().map(|d| d.origin_bytes).sum::<u64>(), |s| s.bytes);
            bytes as f64 / requests.max(1) as f64
        }),
        served_bytes_per_request: origin_log.map(|_| served as f64 / requests.max(1) as f64),
        link_bytes,
    })
}

/// Over the routers behind `admins`, the share of their recent picks that went to a node
/// holding the target by its own report (each router's share weighted by its picks);
/// `None` when no router counted any (anchors, nodes that report no holdings).
fn picks_on_holders(admins: &[SocketAddr]) -> Option<f64> {
    let (mut picks, mut on_holders) = (0.0, 0.0);
    for &admin in admins {
        let Ok((200, body)) = probe::fetch(admin, "/stats") else { continue };
        let Ok(stats) = serde_json::from_slice::<wire::RouterStats>(&body) else { continue };
        let p = &stats.placement;
        if let Some(share) = p.recent_picks_on_holders {
            let n = p.recent_picks_of_reporting_nodes as f64;
            picks += n;
            on_holders += n * share;
        }
    }
    (picks > 0.0).then(|| on_holders / picks)
}

/// The loads of one run: the plans for each address clients connect to, the users split
/// evenly over the addresses (as a layer-4 switch spreads connections).
struct Loads {
    parts: Vec<(BaseUrl, Plans)>,
}

impl Loads {
    fn new(targets: &[SocketAddr], w: &Workload, dynamic: Option<&Workload>) -> Result<Loads> {
        if dynamic.is_some() && targets.len() > 1 {
            return Err(LabError::Invalid(
                "the dynamic requests' open loops go to one front-end address".into(),
            ));
        }
        // One site: every load names the first address as its `Host`, as a site's
        // clients name the site whichever server a layer-4 switch gives them, so caches
        // that key on the host (Varnish's built-in hash does) store one copy of a URL.
        let site = BaseUrl::parse(&format!(
            "http://{}/",
            targets.first().copied().unwrap_or(ANY_LOCAL_PORT)
        ))?
        .host;
        let parts = targets
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let base =
                    BaseUrl { host: site.clone(), ..BaseUrl::parse(&format!("http://{a}/"))? };
                let plans = Plans::new(&base, w, dynamic, (i, targets.len()))?;
                Ok((base, plans))
            })
            .collect::<Result<Vec<_>>>()?;
        if parts.is_empty() {
            return Err(LabError::Invalid("no address to send the load to".into()));
        }
        Ok(Loads { parts })
    }

    /// Whether the load goes to several addresses.
    fn spread(&self) -> bool {
        self.parts.len() > 1
    }

    /// The first address and its workload plan.
    fn first(&self) -> (&BaseUrl, &Plan) {
        (&self.parts[0].0, &self.parts[0].1.main)
    }

    /// The load for `duration` over every address: `setup.users` in all, as evenly split
    /// as they go (an address left without a user gets no load).
    fn configs(
        &self,
        setup: &ExperimentPlan,
        duration: Duration,
        per_request: bool,
    ) -> Vec<Config> {
        let n = self.parts.len() as u32;
        self.parts
            .iter()
            .zip(0..)
            .map(|((base, plans), i)| {
                let users = setup.users / n + u32::from(i < setup.users % n);
                (users, plans.configs(setup, base, duration, per_request, users))
            })
            .filter(|&(users, _)| users > 0)
            .flat_map(|(_, configs)| configs)
            .collect()
    }
}

/// The plans of one run: the workload's, and the dynamic requests' for `classes`.
struct Plans {
    main: Plan,
    dynamic: Option<Plan>,
}

impl Plans {
    /// The plans of `part` (its index, and how many there are) of the load: its share of
    /// the workload's stream, every `parts`-th request from its index on, so that loads
    /// spread over several addresses ask together what one load would have asked.
    fn new(
        base: &BaseUrl,
        w: &Workload,
        dynamic: Option<&Workload>,
        (part, parts): (usize, usize),
    ) -> Result<Plans> {
        let plan = |w: &Workload| {
            let paths = w.paths.iter().map(|p| base.join(p)).collect();
            let share = w.stream.iter().copied().skip(part).step_by(parts.max(1));
            let plan = Plan::flat(paths, share)?;
            if w.shapes.is_empty() {
                Ok(plan)
            } else {
                plan.with_shapes(w.shapes.clone())
            }
        };
        Ok(Plans { main: plan(w)?, dynamic: dynamic.map(plan).transpose()? })
    }

    /// The load for `duration`: a closed loop of `users` (locality), or the static and the
    /// dynamic open loops side by side (classes).
    fn configs(
        &self,
        setup: &ExperimentPlan,
        base: &BaseUrl,
        duration: Duration,
        per_request: bool,
        users: u32,
    ) -> Vec<Config> {
        let config = |plan: &Plan, mode: Mode| {
            let mut c = Config::closed(base.clone(), plan.clone(), 1);
            c.mode = mode;
            c.duration = Some(duration);
            c.connection_per_request = per_request;
            c.cycle = true;
            c.epoch = duration;
            c
        };
        match &self.dynamic {
            Some(dynamic) => {
                let dyn_rate = setup.rate * setup.dynamic_share;
                let open = |rate: f64| {
                    // Enough connections that a slow answer never holds up the schedule.
                    let connections = ((rate / 50.0).ceil() as u32).clamp(4, 256);
                    Mode::Open { rate, connections }
                };
                vec![
                    config(&self.main, open(setup.rate - dyn_rate)),
                    config(dynamic, open(dyn_rate)),
                ]
            }
            None => vec![config(&self.main, Mode::Closed { users })],
        }
    }
}

/// Runs the loads side by side (the classes experiment's two open loops start together;
/// with no front-end, one load to each address), their reports in order.
fn run_together(runtime: &bench::run::Runtime, configs: &[Config]) -> Result<Vec<Report>> {
    runtime.block_on(async {
        let tasks: Vec<_> = configs
            .iter()
            .cloned()
            .map(|c| tokio::spawn(async move { bench::run(&c, |_| {}).await }))
            .collect();
        let mut reports = Vec::with_capacity(tasks.len());
        for task in tasks {
            let report = task
                .await
                .map_err(|e| LabError::Invalid(format!("the load generator failed: {e}")))?;
            reports.push(report?);
        }
        Ok(reports)
    })
}

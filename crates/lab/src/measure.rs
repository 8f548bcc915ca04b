//! One front-end on one workload: fresh nodes (cold caches), the front-end in front of
//! them, a warm-up, the measured load (and the ramp, if asked), everything stopped, and
//! the figures as a [`Row`]: throughput and latency from the load generator, hit ratios
//! from the nodes' load reports, CPU time per request from /proc.

use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use bench::{BaseUrl, Config, Mode, Plan, RampLimits, Report};

use crate::cache_tier;
use crate::cpu_time::{group_cpu_seconds, own_cpu_seconds};
use crate::error::{LabError, Result};
use crate::front::{self, Front, System};
use crate::hosts::{Rate, ORIGIN_HOST};
use crate::launcher::Launcher;
use crate::load_report::NodeCounters;
use crate::nodes::{self, Nodes};
use crate::origin;
use crate::origin_link;
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
    let (origin, nodes) = match &setup.origin {
        Some(o) => {
            let addr = launcher.address_on(ORIGIN_HOST, o.addr)?;
            let group = origin::start(
                launcher,
                &o.nginx,
                &w.docroot,
                addr,
                dir,
                w.probe_path(),
                w.large(),
                deadline,
            )?
            .ok_or(LabError::Interrupted)?;
            let nodes = match system {
                System::Anchor(a) if a.caches() => {
                    cache_tier::start(launcher, a, &setup.tools, addr, &setup.nodes, dir, deadline)?
                }
                _ => nodes::start_caching(
                    launcher,
                    &[format!("http://{addr}")],
                    &setup.nodes,
                    &w.caching_node_args(),
                    deadline,
                )?,
            };
            (Some(group), nodes)
        }
        None => (None, nodes::start(launcher, &w.docroot, &setup.nodes, &node_args, deadline)?),
    };
    let nodes = nodes.ok_or(LabError::Interrupted)?;
    let front = front::start(
        launcher,
        system,
        run.routers,
        &setup.tools,
        &setup.router,
        &nodes.addrs,
        dir,
        w.probe_path(),
        deadline,
    )?;
    let origin_log = (origin.is_some() && w.large()).then_some(dir);
    let measured = measure(plan, setup, w, dynamic, &front, &nodes, connections, origin_log);
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

/// Measures one run. With `origin_log` (the run's directory: large objects, where the
/// nodes may be another system's caches), the origin's figures and the (byte) hit ratio
/// come from what the origin logged it sent, the same measure for every system; else
/// from the nodes' load reports.
#[allow(clippy::too_many_arguments)]
fn measure(
    plan: &ExperimentPlan,
    setup: &Setup,
    w: &Workload,
    dynamic: Option<&Workload>,
    front: &Front,
    nodes: &Nodes,
    connections: Connections,
    origin_log: Option<&Path>,
) -> Result<Row> {
    let base = BaseUrl::parse(&format!("http://{}/", front.addr))?;
    let runtime = bench::run::runtime(setup.client_threads)?;
    let per_request = connections == Connections::PerRequest;
    let plans = Plans::new(&base, w, dynamic)?;
    if !plan.warmup.is_zero() && !w.cold {
        run_together(&runtime, &plans.configs(plan, &base, plan.warmup, per_request))?;
    }
    let counters = || if origin_log.is_some() { Ok(Vec::new()) } else { nodes.counters() };
    // With a shaped link, the bytes are what crossed it; else what the origin logged.
    let shaped = plan.origin_link.is_some();
    let sent = || -> Result<Option<origin::Sent>> {
        let Some(dir) = origin_log else { return Ok(None) };
        let mut sent = origin::sent(dir)?;
        if shaped {
            sent.bytes = origin_link::sent_bytes()?;
        }
        Ok(Some(sent))
    };
    let before: Vec<NodeCounters> = counters()?;
    let sent_before = sent()?;
    let cpu_before = cpu_now(front, nodes);
    let reports = run_together(&runtime, &plans.configs(plan, &base, plan.duration, per_request))?;
    let cpu_after = cpu_now(front, nodes);
    let after = counters()?;
    let sent = sent()?.zip(sent_before).map(|(after, before)| after.since(&before));
    let picks_on_holders = picks_on_holders(&front.admins);
    let users_sustained = match plan.ramp {
        Some(Ramp { spec, timeout, max_users }) if plan.kind.profile().ramps => {
            let mut config = Config::closed(base.clone(), plans.main.clone(), spec.start);
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
        p99_ms: if reports.len() == 1 { main.total.latency_ms.p99 } else { f64::NAN },
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

/// The plans of one run: the workload's, and the dynamic requests' for `classes`.
struct Plans {
    main: Plan,
    dynamic: Option<Plan>,
}

impl Plans {
    fn new(base: &BaseUrl, w: &Workload, dynamic: Option<&Workload>) -> Result<Plans> {
        let plan = |w: &Workload| {
            let paths = w.paths.iter().map(|p| base.join(p)).collect();
            let plan = Plan::flat(paths, w.stream.iter().copied())?;
            if w.shapes.is_empty() {
                Ok(plan)
            } else {
                plan.with_shapes(w.shapes.clone())
            }
        };
        Ok(Plans { main: plan(w)?, dynamic: dynamic.map(plan).transpose()? })
    }

    /// The load for `duration`: a closed loop of users (locality), or the static and the
    /// dynamic open loops side by side (classes).
    fn configs(
        &self,
        setup: &ExperimentPlan,
        base: &BaseUrl,
        duration: Duration,
        per_request: bool,
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
            None => vec![config(&self.main, Mode::Closed { users: setup.users })],
        }
    }
}

/// Runs the loads side by side (the classes experiment's two open loops start together).
fn run_together(
    runtime: &bench::run::Runtime,
    configs: &[Config],
) -> Result<Vec<Report>, bench::BenchError> {
    runtime.block_on(async {
        match configs {
            [one] => Ok(vec![bench::run(one, |_| {}).await?]),
            [a, b] => {
                let (a, b) = tokio::join!(bench::run(a, |_| {}), bench::run(b, |_| {}));
                Ok(vec![a?, b?])
            }
            _ => unreachable!("a run has one or two loads"),
        }
    })
}

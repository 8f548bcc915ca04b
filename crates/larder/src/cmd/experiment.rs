//! `larder bench experiment`: the headline experiments on real processes and sockets.
//!
//! For every workload, connection mode and round, every front-end runs in turn (A B A B):
//! fresh nodes (cold caches) with unequal caches, the front-end in front of them, a
//! warm-up, a measured closed loop (or, for `classes`, two open loops), optionally the
//! DBench ramp, then everything is stopped. Hit ratios come from the nodes' load reports,
//! CPU time from /proc, latency and throughput from the load generator in this process.
//!
//! - `workload`: what the nodes serve and the request streams.
//! - `measure`: one front-end on one workload: fresh nodes, front-end, load, figures.
//! - `cluster`: the nodes of one run, their counters and CPU time.
//! - `front`: larder route with a policy, HAProxy or nginx.
//! - `results`: rows, tables, JSON and charts.

mod cluster;
mod front;
mod measure;
mod results;
mod workload;

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context};
use bench::{parse_duration, RampSpec};
use clap::ValueEnum;

use super::process::child;
use super::process::signals::Signals;
use super::up::{store, RunDir};
use cluster::NodeSpec;
use front::{RouterSetup, System, Tools};
use results::Row;
use workload::{Content, DynCost, Sizing, Workload, WorkloadKind};

/// Longest wait for a process to start and answer.
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// How long stopped processes get to exit before they are killed.
const STOP_GRACE: Duration = Duration::from_secs(5);

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Kind {
    /// Policies and anchors on cache-bound workloads (LARD's and HACC's headline).
    Locality,
    /// Static files with a share of CPU-heavy dynamic requests: response time of the
    /// static ones under `class` routing vs `rr` (HACC's ASP case).
    Classes,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Connections {
    /// Persistent connections: every request of a user on one connection.
    KeepAlive,
    /// A new connection for every request (HTTP/1.0 style).
    PerRequest,
}

impl Connections {
    fn name(self) -> &'static str {
        match self {
            Connections::KeepAlive => "keep-alive",
            Connections::PerRequest => "per-request",
        }
    }
}

/// Run the headline experiments: start nodes, front-ends (larder route with each policy,
/// HAProxy, nginx) and load, A B A B, and write tables, JSON and SVG charts.
///
/// `locality` (the default): 4 nodes with unequal caches (HACC's 64/64/32 MB scaled to
/// 16/16/8/8 MiB), a cache-bound static workload read with O_DIRECT and a cache-bound
/// dynamic one (larder node's Domino-like views), uniform or Zipf, or a real log's
/// requests; figures per front-end: throughput, aggregate hit ratio, p99, CPU per request,
/// users sustained under the DBench ramp (with --ramp). `classes`: static files plus
/// `--dynamic-share` CPU-heavy dynamic requests at a fixed rate, `class` vs `rr`: the
/// response time of the static requests. bench/experiments.sh runs them all and installs
/// HAProxy and nginx.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[arg(value_enum, default_value = "locality")]
    kind: Kind,
    /// Workloads, comma separated: static-uniform, static-zipf, dynamic-uniform,
    /// dynamic-zipf, trace (needs --trace) [default: dynamic-uniform,static-uniform;
    /// classes: static-uniform].
    #[arg(long, value_delimiter = ',')]
    workloads: Vec<WorkloadKind>,
    /// Access log (Common/Combined Log Format) for the `trace` workload.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Front-ends, comma separated: larder route policies (rr, wrr, least, hash, bounded,
    /// lard, lard-r, hacc, class), haproxy, nginx [default: wrr,least,hash,bounded,lard,
    /// lard-r,hacc,haproxy,nginx; classes: rr,class]. An anchor that is not installed is
    /// skipped with a warning.
    #[arg(long, value_delimiter = ',')]
    systems: Vec<System>,
    /// Each node's cache in MiB, comma separated (one node per entry).
    #[arg(long, value_delimiter = ',', default_value = "16,16,8,8")]
    cache_mb: Vec<u64>,
    /// Pin node i to CPU cpus[i], comma separated (emulates separate machines) [default:
    /// no pinning; classes: nodes spread evenly over the CPUs].
    #[arg(long, value_delimiter = ',')]
    pin: Vec<usize>,
    /// Pin the front-end and the load generator to this CPU [default: none; classes: the
    /// first node's CPU, so the CPU-heavy requests under `class` never share a CPU with
    /// them, as on HACC's separate machines].
    #[arg(long, value_name = "CPU")]
    pin_front: Option<usize>,
    /// Static data set, or all dynamic views together, in MiB [default: 3/4 of all caches].
    #[arg(long, value_name = "MB")]
    dataset_mb: Option<u64>,
    /// Size of every static file.
    #[arg(long, default_value = "16KiB", value_parser = trace::parse_size)]
    file_size: u64,
    /// Zipf exponent of the *-zipf workloads.
    #[arg(long, default_value_t = 0.8)]
    alpha: f64,
    /// CPU cost of computing a dynamic view (a miss), in microseconds.
    #[arg(long, default_value_t = 2000)]
    dyn_cost_us: u64,
    /// Exact hash-loop rounds per dynamic view instead of --dyn-cost-us. Nodes calibrate
    /// --dyn-cost-us against the clock when they start, so on a busy machine a miss costs
    /// less than asked; a fixed count costs the same CPU every run.
    #[arg(long, value_name = "N")]
    dyn_iterations: Option<u64>,
    /// Size of a computed dynamic view (what it takes in a cache).
    #[arg(long, default_value = "64KiB", value_parser = trace::parse_size)]
    dyn_view_size: u64,
    /// Size of a dynamic document response.
    #[arg(long, default_value = "8KiB", value_parser = trace::parse_size)]
    dyn_doc_size: u64,
    /// Seed of the request streams.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Closed-loop users (locality).
    #[arg(long, default_value_t = 32)]
    users: u32,
    /// Connection modes, comma separated: keep-alive, per-request.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "keep-alive")]
    connections: Vec<Connections>,
    /// Measured time per run.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    duration: Duration,
    /// Load before each measured run, to fill the caches (not measured).
    #[arg(long, default_value = "4s", value_parser = parse_duration)]
    warmup: Duration,
    /// Rounds over all front-ends (A B A B …); tables show medians.
    #[arg(long, default_value_t = 2)]
    rounds: u32,
    /// Also run DBench's ramp START:STEP:EPOCH after each measured run: users are added
    /// until a request fails or takes longer than --ramp-timeout; reports users sustained.
    #[arg(long, value_name = "START:STEP:EPOCH", value_parser = parse_ramp)]
    ramp: Option<RampSpec>,
    /// The ramp's per-request limit: a slower request counts as a failure.
    #[arg(long, default_value = "1s", value_parser = parse_duration)]
    ramp_timeout: Duration,
    /// The ramp's last step.
    #[arg(long, default_value_t = 2048)]
    ramp_max_users: u32,
    /// classes: requests per second in total (open loop).
    #[arg(long, default_value_t = 1000.0)]
    rate: f64,
    /// classes: share of the requests that are dynamic.
    #[arg(long, default_value_t = 0.05)]
    dynamic_share: f64,
    /// Worker threads of larder route (the anchors run one).
    #[arg(long, default_value_t = 1)]
    router_threads: usize,
    /// Worker threads of the load generator.
    #[arg(long, default_value_t = 1)]
    client_threads: usize,
    /// The larder executable for nodes and router [default: this one].
    #[arg(long, value_name = "FILE")]
    larder: Option<PathBuf>,
    #[arg(long, value_name = "FILE")]
    haproxy: Option<PathBuf>,
    #[arg(long, value_name = "FILE")]
    nginx: Option<PathBuf>,
    /// Where stores are kept [default: $XDG_CACHE_HOME/larder or ~/.cache/larder].
    #[arg(long, value_name = "DIR")]
    store_dir: Option<PathBuf>,
    /// Directory for table.md, rows.json and the SVG charts.
    #[arg(long, value_name = "DIR", default_value = "experiment-results")]
    out: PathBuf,
}

impl Args {
    /// The arguments these command-line flags give (for commands that run an experiment
    /// of their own, like `larder up --bench`), with every other flag at its default.
    pub fn from_flags<I: IntoIterator<Item = String>>(flags: I) -> anyhow::Result<Args> {
        #[derive(clap::Parser)]
        struct Flags {
            #[command(flatten)]
            args: Args,
        }
        let argv = std::iter::once("experiment".to_string()).chain(flags);
        Ok(<Flags as clap::Parser>::try_parse_from(argv)?.args)
    }
}

fn parse_ramp(s: &str) -> Result<RampSpec, String> {
    RampSpec::parse(s).map_err(|e| e.to_string())
}

/// Everything fixed for the whole experiment.
struct Setup {
    kind: Kind,
    exe: PathBuf,
    tools: Tools,
    router: RouterSetup,
    nodes: Vec<NodeSpec>,
    users: u32,
    duration: Duration,
    warmup: Duration,
    ramp: Option<(RampSpec, Duration, u32)>,
    rate: f64,
    dynamic_share: f64,
    client_threads: usize,
    signals: Signals,
    dir: PathBuf,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    // Before the load generator's threads exist (see process::signals).
    let signals = Signals::block().context("blocking signals")?;
    let (setup, workloads, systems) = prepare(&args, signals)?;
    if let Some(cpu) = setup.router.cpu {
        // Before the load generator's threads exist: they inherit it.
        child::pin_self(cpu).with_context(|| format!("pinning to CPU {cpu}"))?;
    }
    let run_dir = RunDir::create("experiment")?;
    let setup = Setup { dir: run_dir.0.clone(), ..setup };
    let store_root = match &args.store_dir {
        Some(d) => d.clone(),
        None => store::default_root()?,
    };
    let all_cache: u64 = args.cache_mb.iter().sum::<u64>() << 20;
    let sizing = Sizing {
        dataset_bytes: args.dataset_mb.map_or(all_cache * 3 / 4, |m| m << 20),
        file_bytes: args.file_size,
        view_bytes: args.dyn_view_size,
        doc_bytes: args.dyn_doc_size,
        dyn_cost: match args.dyn_iterations {
            Some(n) => DynCost::Iterations(n),
            None => DynCost::Micros(args.dyn_cost_us),
        },
        alpha: args.alpha,
        seed: args.seed,
    };
    let header = describe(&args, &setup, &systems);
    println!("{header}");
    let mut rows = Vec::new();
    let stopped = 'all: {
        for &kind in &workloads {
            let w = workload::build(kind, &sizing, args.trace.as_deref(), &store_root)?;
            println!(
                "\n{kind}: {} objects, {:.1} MiB; nodes cache {} MiB",
                w.objects,
                w.dataset_bytes as f64 / f64::from(1 << 20),
                args.cache_mb.iter().map(u64::to_string).collect::<Vec<_>>().join("/")
            );
            let extra = match setup.kind {
                Kind::Classes => Some(dynamic_part(&sizing, &store_root)?),
                Kind::Locality => None,
            };
            for &connections in &args.connections {
                for round in 0..args.rounds {
                    for system in &systems {
                        if signals.stop_requested(Duration::ZERO) {
                            break 'all true;
                        }
                        let row = measure::run_one(
                            &setup,
                            &w,
                            extra.as_ref(),
                            system,
                            connections,
                            round,
                        )
                        .with_context(|| format!("{system} on {kind}, round {}", round + 1))?;
                        println!("{}", progress_line(&row));
                        rows.push(row);
                    }
                }
            }
        }
        false
    };
    let baseline = match setup.kind {
        Kind::Locality => "wrr",
        Kind::Classes => "rr",
    };
    print!("{}", results::render_table(&rows, baseline));
    let claims = results::claims(&rows);
    if !claims.is_empty() {
        println!("\nclaims (issue 6):");
        for c in &claims {
            println!("  {c}");
        }
    }
    results::write(&args.out, &rows, baseline, &header, &claims)?;
    println!("\nwrote {}/table.md, rows.json and SVG charts", args.out.display());
    if stopped {
        bail!("interrupted; the rows above were measured before the stop");
    }
    Ok(())
}

/// Checks the arguments and fills in the defaults of the experiment's kind.
fn prepare(
    args: &Args,
    signals: Signals,
) -> anyhow::Result<(Setup, Vec<WorkloadKind>, Vec<System>)> {
    if args.cache_mb.is_empty() || args.cache_mb.contains(&0) {
        bail!("--cache-mb needs one size of at least 1 MiB per node");
    }
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let nodes = args.cache_mb.len();
    let pin: Vec<Option<usize>> = match (&args.pin[..], args.kind) {
        ([], Kind::Locality) => vec![None; nodes],
        ([], Kind::Classes) => (0..nodes).map(|i| Some(i * cpus / nodes)).collect(),
        (p, _) if p.len() == nodes => p.iter().map(|&c| Some(c)).collect(),
        (p, _) => bail!("--pin gives {} CPUs for {nodes} nodes", p.len()),
    };
    let pin_front = match (args.pin_front, args.kind) {
        (Some(cpu), _) => Some(cpu),
        (None, Kind::Classes) => pin[0],
        (None, Kind::Locality) => None,
    };
    if let Some(cpu) = pin.iter().flatten().chain(&pin_front).find(|&&c| c >= cpus) {
        bail!("--pin: CPU {cpu} does not exist (this machine has {cpus})");
    }
    if args.rounds == 0 || args.users == 0 || args.duration.is_zero() {
        bail!("--rounds, --users and --duration must be above 0");
    }
    if !(args.rate.is_finite() && args.rate > 0.0) {
        bail!("--rate must be a positive number of requests per second");
    }
    if !(args.dynamic_share > 0.0 && args.dynamic_share < 1.0) {
        bail!("--dynamic-share must be between 0 and 1");
    }
    let exe = match &args.larder {
        Some(p) => p.clone(),
        None => std::env::current_exe().context("finding the larder executable")?,
    };
    let tools = Tools::find(args.haproxy.clone(), args.nginx.clone());
    let mut systems = args.systems.clone();
    if systems.is_empty() {
        let names: &[&str] = match args.kind {
            Kind::Locality => {
                &["wrr", "least", "hash", "bounded", "lard", "lard-r", "hacc", "haproxy", "nginx"]
            }
            Kind::Classes => &["rr", "class"],
        };
        systems = names.iter().map(|n| n.parse().expect("known names")).collect();
    }
    systems.retain(|s| match tools.missing(s) {
        Some(why) => {
            eprintln!("larder experiment: skipping {s}: {why}");
            false
        }
        None => true,
    });
    if systems.is_empty() {
        bail!("no front-end left to run");
    }
    let mut workloads = args.workloads.clone();
    if workloads.is_empty() {
        workloads = match args.kind {
            Kind::Locality => {
                vec!["dynamic-uniform".parse().unwrap(), "static-uniform".parse().unwrap()]
            }
            Kind::Classes => vec!["static-uniform".parse().unwrap()],
        };
    }
    if args.kind == Kind::Classes && workloads.iter().any(|w| w.content != Content::Static) {
        bail!("the classes experiment mixes its own dynamic requests into static workloads only");
    }
    let names: Vec<String> = (1..=nodes).map(|i| format!("n{i}")).collect();
    let setup = Setup {
        kind: args.kind,
        exe,
        tools,
        router: RouterSetup {
            threads: args.router_threads.max(1),
            cpu: pin_front,
            // The second half of the nodes (on the last CPUs when pinned).
            dynamic_pool: names[nodes / 2..].to_vec(),
        },
        nodes: args
            .cache_mb
            .iter()
            .zip(pin)
            .map(|(&cache_mb, cpu)| NodeSpec { cache_mb, cpu })
            .collect(),
        users: args.users,
        duration: args.duration,
        warmup: args.warmup,
        ramp: args.ramp.map(|spec| (spec, args.ramp_timeout, args.ramp_max_users)),
        rate: args.rate,
        dynamic_share: args.dynamic_share,
        client_threads: args.client_threads.max(1),
        signals,
        dir: PathBuf::new(),
    };
    Ok((setup, workloads, systems))
}

/// The classes experiment's dynamic requests: views far more than the caches hold, so
/// nearly every one is computed (HACC's ASP pages were computed every time).
fn dynamic_part(sizing: &Sizing, store_root: &Path) -> anyhow::Result<Workload> {
    let many = Sizing { dataset_bytes: 100_000 * sizing.view_bytes, ..sizing.clone() };
    let kind = WorkloadKind { content: Content::Dynamic, zipf: false };
    workload::build(kind, &many, None, store_root)
}

/// The machine and settings, as the head of the table.
fn describe(args: &Args, setup: &Setup, systems: &[System]) -> String {
    // Online CPUs, not this process's share: the load generator may be pinned to one.
    // SAFETY: sysconf has no preconditions.
    let cpus = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) }.max(1);
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| c.lines().find(|l| l.starts_with("model name")).map(str::to_string))
        .and_then(|l| l.split_once(':').map(|(_, m)| m.trim().to_string()))
        .unwrap_or_else(|| "unknown CPU".into());
    let systems: Vec<String> = systems.iter().map(System::to_string).collect();
    format!(
        "# larder bench experiment {:?}\n\nmachine: {cpus} CPUs ({model}); nodes: caches {} MiB{}; \
         front-ends: {}; {}, warm-up {:?}, {:?} measured, {} rounds; router threads {}, \
         load generator threads {}",
        args.kind,
        args.cache_mb.iter().map(u64::to_string).collect::<Vec<_>>().join("/"),
        if setup.nodes.iter().any(|n| n.cpu.is_some()) {
            format!(
                ", pinned to CPUs {}",
                setup.nodes.iter().map(|n| n.cpu.map_or("-".into(), |c| c.to_string())).collect::<Vec<_>>().join("/")
            )
        } else {
            String::new()
        } + &setup
            .router
            .cpu
            .map_or(String::new(), |c| format!("; front-end and load generator on CPU {c}")),
        systems.join(", "),
        match args.kind {
            Kind::Locality => format!("{} users", args.users),
            Kind::Classes => format!("open loop {} req/s ({}% dynamic)", args.rate, args.dynamic_share * 100.0),
        },
        args.warmup,
        args.duration,
        args.rounds,
        setup.router.threads,
        setup.client_threads,
    )
}

fn progress_line(r: &Row) -> String {
    let mut line = format!(
        "  {:<10} {:<11} round {}  {:>8.0} req/s  hit {:.3}  mean {:>7.2} ms  p99 {:>7.2} ms  errors {}",
        r.system, r.connections, r.round + 1, r.throughput_rps, r.hit_ratio, r.mean_ms, r.p99_ms, r.errors
    );
    if let Some(u) = r.users_sustained {
        line.push_str(&format!("  users sustained {u}"));
    }
    if let (Some(s), Some(d)) = (r.static_mean_ms, r.dynamic_mean_ms) {
        line.push_str(&format!("  static mean {s:.2} ms  dynamic mean {d:.2} ms"));
    }
    line
}

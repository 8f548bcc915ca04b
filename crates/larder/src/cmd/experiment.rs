//! `larder bench experiment`: the headline experiments, run by [`lab::experiment`]; this
//! file turns the flags into a [`lab::ExperimentPlan`].

use std::path::PathBuf;
use std::time::Duration;

use bench::{parse_duration, RampSpec};
use lab::{
    Connections, DynCost, ExperimentPlan, Kind, LargeObjects, OriginLink, Ramp, System,
    WorkloadKind,
};

use crate::cmd::hosts::HostsArgs;
use crate::console::Console;

/// Run the headline experiments: start nodes, front-ends (larder route with each policy,
/// HAProxy, nginx) and load, A B A B, and write tables, JSON and SVG charts.
///
/// `locality` (the default): 4 nodes with unequal caches (HACC's 64/64/32 MB scaled to
/// 16/16/8/8 MiB), a cache-bound static workload read with O_DIRECT and a cache-bound
/// dynamic one (larder node's Domino-like views), uniform or Zipf, or a real log's
/// requests; figures per front-end: throughput, aggregate hit ratio, p99, CPU per request,
/// users sustained under the DBench ramp (with --ramp). `classes`: static files plus
/// `--dynamic-share` CPU-heavy dynamic requests at a fixed rate, `class` vs `rr`: the
/// response time of the static requests. `origin`: the nodes cache an origin (nginx serving
/// the store) over a link limited with --origin-mbit; figures add origin requests and bytes
/// per request. With --hosts, every process on a host of its own with shaped links, and
/// several --link-rate values run every system at each. `churn`: a flash crowd, a node added, restarted or removed mid-run, figures
/// every second. bench/experiments.sh runs them all and installs HAProxy, nginx and Varnish.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[arg(value_enum, default_value = "locality")]
    kind: Kind,
    /// Workloads, comma separated: static-uniform, static-zipf, dynamic-uniform,
    /// dynamic-zipf, trace (needs --trace); origin also video (large objects, whole and
    /// by ranges, Zipf) and video-crowd (a cold crowd on the largest) [default:
    /// dynamic-uniform,static-uniform; classes: static-uniform].
    #[arg(long, value_delimiter = ',')]
    workloads: Vec<WorkloadKind>,
    /// Access log (Common/Combined Log Format) for the `trace` workload.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Front-ends, comma separated: larder route policies (rr, wrr, least, hash, bounded,
    /// lard, lard-r, hacc, class; lard, lard-r and hacc place targets alike on every
    /// router, POLICY/per-router keeps each router's own table instead, and hacc@N fixes
    /// HACC's subtrees at N directory levels), haproxy,
    /// nginx; peers (larder's nodes as peers: every node takes clients, no router); in the
    /// origin experiment on the video workloads (on any workload with --hosts) also the
    /// caching clusters varnish-cluster (Varnish instances sharded by a front Varnish's
    /// shard director), varnish-self-routing (every Varnish takes clients, its shard
    /// director names the owner, a non-owner passes the request to it) and nginx-slice
    /// (nginx proxy_cache with its slice module behind nginx's consistent hash) [default:
    /// wrr,least,hash,bounded,lard,lard-r,hacc,haproxy,nginx; classes: rr,class]. An anchor that is not installed is skipped with a warning. A system
    /// listed twice runs twice, the second time named NAME#2 (e.g. lard,lard-r,lard): an
    /// A/A control whose ratio to the first is the noise of the measurement itself.
    #[arg(long, value_delimiter = ',')]
    systems: Vec<System>,
    /// Run every front-end as this many instances on one address (SO_REUSEPORT, the
    /// kernel spreading connections over them), comma separated for several runs
    /// (1..=16; e.g. 1,2,4).
    #[arg(long, value_delimiter = ',', default_value = "1")]
    routers: Vec<u8>,
    /// Each node's cache in MiB, comma separated (one node per entry).
    #[arg(long, value_delimiter = ',', default_value = "16,16,8,8")]
    cache_mb: Vec<u64>,
    // --help prints this text as written: its brackets are not links.
    #[allow(rustdoc::broken_intra_doc_links)]
    /// Pin node i to CPU cpus[i], comma separated (emulates separate machines) [default:
    /// no pinning; classes: nodes spread evenly over the CPUs].
    #[arg(long, value_delimiter = ',')]
    pin: Vec<usize>,
    /// Pin the front-end and the load generator to this CPU [default: none; classes: the
    /// first node's CPU, so the CPU-heavy requests under `class` never share a CPU with
    /// them, as on HACC's separate machines].
    #[arg(long, value_name = "CPU")]
    pin_front: Option<usize>,
    /// Cap every node process's CPU time at this share of one core (a Linux cgroup per
    /// node, v1 or v2; needs root): nodes on machines of their own, emulated where nodes
    /// outnumber cores, so a node with more work than its share becomes the bottleneck it
    /// would be. E.g. 0.25 on 2 cores: 4 nodes share one, the front-end and load the other.
    #[arg(long, value_name = "SHARE")]
    node_cpu_share: Option<f64>,
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
    /// Rounds over all front-ends (A B, then B A, …); tables show medians.
    #[arg(long, default_value_t = 2)]
    rounds: u32,
    /// Also run DBench's ramp START:STEP:EPOCH after each measured run: users are added
    /// until a request fails or takes longer than --ramp-timeout; reports users sustained.
    #[arg(long, value_name = "START:STEP:EPOCH", value_parser = RampSpec::parse)]
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
    /// varnishd, for the `varnish` front-end (the shard director, passing every request).
    #[arg(long, value_name = "FILE")]
    varnish: Option<PathBuf>,
    /// origin: limit the origin's link to this many Mbit/s with tc on loopback (needs a
    /// private network namespace: `unshare -n larder bench experiment origin …`).
    #[arg(long, value_name = "MBIT")]
    origin_mbit: Option<u64>,
    /// origin: the link's queue in KiB (beyond it, packets are dropped).
    #[arg(long, value_name = "KB", default_value_t = 1024)]
    origin_queue_kb: u64,
    /// origin, video workloads: distinct large objects (2–64 MiB, sizes spaced evenly on a
    /// log scale).
    #[arg(long, value_name = "N", default_value_t = 16)]
    large_objects: u32,
    /// origin, video workloads: share of the requests that ask for a byte range (the rest
    /// fetch whole objects).
    #[arg(long, value_name = "SHARE", default_value_t = 0.5)]
    range_share: f64,
    /// origin, video workloads: size of a range request in KiB.
    #[arg(long, value_name = "KB", default_value_t = 1024)]
    range_kb: u64,
    /// Weigh every front-end's nodes by their caches (HAProxy, nginx, Varnish, larder's
    /// wrr and hash; lard, lard-r and hacc weigh the capacities nodes report already).
    #[arg(long)]
    weigh_by_cache: bool,
    /// churn: scenarios, comma separated: flash, add, restart, remove [default: all]; each
    /// event (the last node; the crowd) comes at the end of --warmup.
    #[arg(long, value_enum, value_delimiter = ',')]
    scenarios: Vec<lab::ScenarioKind>,
    /// churn: the flash scenario's crowd share=S,at=TIME[,targets=N].
    #[arg(long, value_name = "SPEC")]
    flash_crowd: Option<trace::FlashCrowd>,
    /// churn: one more scenario of these membership events, comma separated
    /// (add|remove|restart:nN@TIME, e.g. add:n4@20s).
    #[arg(long, value_delimiter = ',', value_name = "EVENTS")]
    events: Vec<trace::MembershipEvent>,
    /// Where stores are kept [default: $XDG_CACHE_HOME/larder or ~/.cache/larder].
    #[arg(long, value_name = "DIR")]
    store_dir: Option<PathBuf>,
    /// Directory for table.md, rows.json, shape.json and the SVG charts.
    #[arg(long, value_name = "DIR", default_value = "experiment-results")]
    out: PathBuf,
    /// Also show every started process's output as it comes, each line prefixed with
    /// its name (it always goes to logs/ under --out).
    #[arg(long)]
    verbose: bool,
    /// Instead of running: fit the simulator to the rows of an earlier run in DIR
    /// (rows.json; shape.json names the machine, caches and users) and compare what it
    /// predicts with what was measured, into DIR/sim-vs-reality.md. The other shape flags
    /// (--dataset-mb, --alpha, --seed, --file-size, --dyn-view-size) say how it ran.
    #[arg(long, value_name = "DIR")]
    sim_fit: Option<PathBuf>,
    #[command(flatten)]
    hosts: HostsArgs,
    /// With --sim-fit: microseconds of one O_DIRECT read of a static file.
    #[arg(long, value_name = "US", default_value_t = 55.0, requires = "sim_fit")]
    sim_disk_us: f64,
}

impl Args {
    fn plan(self) -> ExperimentPlan {
        ExperimentPlan {
            kind: self.kind,
            workloads: self.workloads,
            trace: self.trace,
            systems: self.systems,
            routers: self.routers,
            cache_mb: self.cache_mb,
            pin: self.pin,
            pin_front: self.pin_front,
            node_cpu_share: self.node_cpu_share,
            dataset_mb: self.dataset_mb,
            file_size: self.file_size,
            alpha: self.alpha,
            dyn_cost: DynCost::new(self.dyn_cost_us, self.dyn_iterations),
            dyn_view_size: self.dyn_view_size,
            dyn_doc_size: self.dyn_doc_size,
            seed: self.seed,
            users: self.users,
            connections: self.connections,
            duration: self.duration,
            warmup: self.warmup,
            rounds: self.rounds,
            ramp: self.ramp.map(|spec| Ramp {
                spec,
                timeout: self.ramp_timeout,
                max_users: self.ramp_max_users,
            }),
            rate: self.rate,
            dynamic_share: self.dynamic_share,
            router_threads: self.router_threads,
            client_threads: self.client_threads,
            larder: self.larder,
            haproxy: self.haproxy,
            nginx: self.nginx,
            varnish: self.varnish,
            origin_link: self
                .origin_mbit
                .map(|mbit| OriginLink { mbit, queue_kb: self.origin_queue_kb }),
            large: LargeObjects {
                objects: self.large_objects,
                range_share: self.range_share,
                range_bytes: self.range_kb << 10,
            },
            weigh_by_cache: self.weigh_by_cache,
            store_dir: self.store_dir,
            scenarios: self.scenarios,
            flash_crowd: self.flash_crowd,
            events: self.events,
            out: self.out,
            verbose: self.verbose,
            link_rates: if self.hosts.hosts { self.hosts.link_rate.clone() } else { Vec::new() },
            hosts: self.hosts.config(),
        }
    }
}

pub fn run(args: Args) -> anyhow::Result<()> {
    if let Some(dir) = &args.sim_fit {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
        let shape = lab::sim_fit::Shape {
            cpus,
            cache_mb: args.cache_mb.clone(),
            users: args.users,
            dataset_mb: args.dataset_mb.map(|m| m as f64),
            alpha: args.alpha,
            seed: args.seed,
            file_size: args.file_size,
            view_size: args.dyn_view_size,
            disk_us: args.sim_disk_us,
        };
        return Ok(lab::sim_fit::run(dir, &shape, &Console::default())?);
    }
    Ok(lab::experiment::run(&args.plan(), Console::shared())?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Flags {
        #[command(flatten)]
        args: Args,
    }

    #[test]
    fn the_flags_defaults_are_the_plans() {
        let args = Flags::try_parse_from(["experiment"]).unwrap().args;
        assert_eq!(args.plan(), ExperimentPlan::default());
    }

    #[test]
    fn ramp_flags_make_one_ramp() {
        let argv = ["experiment", "--ramp", "10:10:30s", "--ramp-timeout", "2s"];
        let plan = Flags::try_parse_from(argv).unwrap().args.plan();
        let ramp = plan.ramp.unwrap();
        assert_eq!(
            (ramp.spec.start, ramp.timeout, ramp.max_users),
            (10, Duration::from_secs(2), 2048)
        );
    }
}

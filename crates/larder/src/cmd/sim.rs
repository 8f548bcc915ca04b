//! `larder sim`: replay a trace (or a generated workload) on a simulated cluster running
//! larder's own policies, and print throughput, hit ratio, utilisation and imbalance.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context};
use cache::Kind;
use policy::{PolicyKind, PolicySpec};
use sim::{
    CacheSizes, GeneratedWorkload, ModelUnits, NodeRange, PolicyOverrides, RouterRange, RunClock,
    SimConfig, Simulator,
};
use trace::{Popularity, SizeMix, Workload};

/// Popularity of a generated workload.
#[derive(clap::ValueEnum, Copy, Clone, Debug)]
pub enum Generator {
    /// Every document equally likely.
    Uniform,
    /// Zipf(alpha) over popularity ranks (see --alpha).
    Zipf,
}

/// Replay a trace on a simulated cluster and compare policies.
///
/// The model: a front-end running a policy and n back-end nodes, each with a CPU,
/// a disk and a bounded cache (LARD paper's model). Clients are closed-loop and always
/// enough to keep the front-end at its limit S = (n−1)·T_high + T_low − 1 requests in
/// flight, so the throughput shown is the cluster's capacity. Log times are ignored.
///
/// Example: larder sim --gen zipf --nodes 1..16 --policy wrr,lard,lard-r --svg out.svg
///
/// Unequal nodes (HACC's 64/64/32 MB, scaled): larder sim --gen uniform --cache-mb 16,16,8,8
///
/// One machine (as `larder bench experiment` runs): --shared-cpus 2 puts the nodes'
/// threads, the front-end and the clients on 2 shared cores (--front-us, --miss-cpu-us),
/// and --route-keys names targets as larder route does, so hashing places them alike
/// (bench/sim-vs-reality.sh fits these to measurements).
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Access log to replay (Common or Combined Log Format, plain or .gz).
    #[arg(long, value_name = "FILE", required_unless_present = "gen", conflicts_with = "gen")]
    pub trace: Option<PathBuf>,
    /// Generate the workload instead of reading a log.
    #[arg(long, value_enum, value_name = "POPULARITY")]
    pub gen: Option<Generator>,
    /// Generated requests.
    #[arg(long, default_value_t = 1_000_000, value_name = "N")]
    pub requests: u64,
    /// Generated documents [default: as many as make --dataset-mb].
    #[arg(long, value_name = "N")]
    pub docs: Option<u32>,
    /// Generated data set size in MiB [default: 4 × the mean of --cache-mb, where locality
    /// pays].
    #[arg(long, value_name = "MB", conflicts_with = "docs")]
    pub dataset_mb: Option<f64>,
    /// Zipf exponent of --gen zipf.
    #[arg(long, default_value_t = 1.0, value_name = "A")]
    pub alpha: f64,
    /// Generated document sizes: `hacc` (HACC's long-tail mix) or `fixed:SIZE` (e.g. fixed:8KB).
    #[arg(long, default_value = "hacc", value_name = "MIX")]
    pub sizes: SizeMix,
    /// Seed of the generated workload.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Membership events, comma separated (add|remove|restart:nN@TIME, e.g. add:n4@10s),
    /// played when the replay reaches TIME in the workload's own clock.
    #[arg(long, value_delimiter = ',', value_name = "EVENTS")]
    pub events: Vec<trace::MembershipEvent>,
    /// A flash crowd share=S,at=TIME[,targets=N] applied to the workload by its times.
    #[arg(long, value_name = "SPEC")]
    pub flash_crowd: Option<trace::FlashCrowd>,

    /// Back-end nodes: a count, a range swept inclusively (1..16, 1..64:4) or a list (1,2,4,8)
    /// [default: 8, or as many as --cache-mb lists].
    #[arg(long, value_name = "N|A..B")]
    pub nodes: Option<NodeRange>,
    /// Cache in MiB, each more than 0: one size for every node (32), or a comma list with one
    /// size per node (16,16,8,8), whose length is the cluster size (--nodes, if given, must
    /// equal it and cannot be a sweep).
    #[arg(long, default_value = "32", value_name = "MB|MB,MB,…")]
    pub cache_mb: CacheSizes,
    /// Cache replacement on every node: gds (GreedyDual-Size, as LARD simulated) or lru
    /// (as `larder node` runs).
    #[arg(long, default_value = "gds", value_name = "KIND")]
    pub cache: Kind,
    /// Front-ends, each with its own policy instance, before the same nodes: a count or a
    /// sweep as --nodes (1,2,4,16,64). Requests go to them per client (per request when the
    /// workload has one client), by a hash of --seed.
    #[arg(long, default_value = "1", value_name = "N|A..B")]
    pub routers: RouterRange,
    /// With several front-ends: how often each polls the nodes' load, so the age of the
    /// reports it acts on (0: exact), ms. Its own requests in flight it always knows.
    #[arg(long, default_value_t = 200.0, value_name = "MS")]
    pub report_delay_ms: f64,
    /// Policies to compare, comma-separated (rr, wrr, least, hash, bounded, lard, lard-r,
    /// hacc), or `all` (every policy except `class`, which needs pools configured).
    #[arg(long, default_value = "all", value_name = "P[,P…]|all")]
    pub policy: String,

    /// LARD T_low, in requests in flight [default: 25].
    #[arg(long, value_name = "N")]
    pub t_low: Option<f64>,
    /// LARD T_high, in requests in flight [default: 65].
    #[arg(long, value_name = "N")]
    pub t_high: Option<f64>,
    /// `bounded`: load bound factor c (HAProxy hash-balance-factor / 100) [default: 1.25].
    #[arg(long, value_name = "C")]
    pub balance_factor: Option<f64>,
    /// Most target-table entries a policy keeps [default: 1048576].
    #[arg(long, value_name = "N")]
    pub table_cap: Option<usize>,
    /// `lard-r`: a server set unchanged this long loses a node [default: 20].
    #[arg(long, value_name = "SECONDS")]
    pub shrink_after_secs: Option<f64>,
    /// `hacc`: split a subtree above this times its node's fair share of requests [default: 0.25].
    #[arg(long, value_name = "FACTOR")]
    pub hacc_split: Option<f64>,
    /// lard, lard-r, hacc: "shared" placement (alike on every front-end, from node names
    /// and the nodes' reports of what they hold) or "per-router" (each front-end's own
    /// least loaded choice) [default: shared].
    #[arg(long, value_name = "MODE")]
    pub placement: Option<policy::PlacementMode>,

    /// CPU per connection set-up, µs [default: 145].
    #[arg(long, value_name = "US")]
    pub setup_us: Option<f64>,
    /// CPU per connection tear-down, µs [default: 145].
    #[arg(long, value_name = "US")]
    pub teardown_us: Option<f64>,
    /// CPU per transmit unit, µs [default: 40].
    #[arg(long, value_name = "US")]
    pub transmit_us: Option<f64>,
    /// Bytes per transmit unit [default: 512].
    #[arg(long, value_name = "BYTES")]
    pub transmit_unit_bytes: Option<u64>,
    /// Disk positioning per read, ms [default: 28].
    #[arg(long, value_name = "MS")]
    pub disk_read_ms: Option<f64>,
    /// Disk time per block, µs [default: 410].
    #[arg(long, value_name = "US")]
    pub disk_block_us: Option<f64>,
    /// Bytes per disk block [default: 4096].
    #[arg(long, value_name = "BYTES")]
    pub disk_block_bytes: Option<u64>,
    /// Disk time per further chunk beyond the first, ms [default: 14].
    #[arg(long, value_name = "MS")]
    pub disk_chunk_ms: Option<f64>,
    /// Bytes per disk chunk [default: 45056 (44 KiB)].
    #[arg(long, value_name = "BYTES")]
    pub disk_chunk_bytes: Option<u64>,

    /// CPU per request outside the nodes (front-end and clients), µs [default: 0].
    #[arg(long, value_name = "US")]
    pub front_us: Option<f64>,
    /// CPU per miss on the node's helper thread before the disk read (a dynamic page's
    /// computation), µs [default: 0].
    #[arg(long, value_name = "US")]
    pub miss_cpu_us: Option<f64>,
    /// The nodes, the front-end and the clients share this many cores of one machine,
    /// each node being an event loop and a helper thread [default: a CPU per node and one
    /// for the front-end].
    #[arg(long, value_name = "N")]
    pub shared_cpus: Option<u32>,

    /// Name targets as larder route does: key and subtree from each target's URL through
    /// the router's URL mapper (with --tree-depth), not from its index.
    #[arg(long)]
    pub route_keys: bool,
    // --help prints this text as written: its brackets are not links.
    #[allow(rustdoc::broken_intra_doc_links)]
    /// Directory levels of a fixed subtree (larder route's [mapping] tree_depth), with
    /// --route-keys [default: the router's: subtrees split and merged by load].
    #[arg(long, value_name = "N", requires = "route_keys")]
    pub tree_depth: Option<usize>,
    /// With --route-keys: the URL of each target, one per line in target order, instead
    /// of the URLs of the workload's paths (e.g. larder node's dynamic view URLs).
    #[arg(long, value_name = "FILE", requires = "route_keys")]
    pub target_urls: Option<PathBuf>,

    /// Share of the requests that only warms caches and tables (not measured).
    #[arg(long, default_value_t = 0.2, value_name = "FRACTION")]
    pub warmup: f64,
    /// Requests the front-end admits at once [default: (n−1)·T_high + T_low − 1].
    #[arg(long, value_name = "N")]
    pub max_in_flight: Option<u64>,

    /// One JSON object per run, one per line, instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Also draw throughput vs cluster size, one line per policy, into this SVG file.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Report wall time and replay speed (simulated requests per wall second) per run.
    #[arg(long)]
    pub timing: bool,
}

impl Args {
    fn model(&self) -> ModelUnits {
        ModelUnits {
            setup_us: self.setup_us,
            teardown_us: self.teardown_us,
            transmit_us: self.transmit_us,
            transmit_unit_bytes: self.transmit_unit_bytes,
            disk_read_ms: self.disk_read_ms,
            disk_block_us: self.disk_block_us,
            disk_block_bytes: self.disk_block_bytes,
            disk_chunk_ms: self.disk_chunk_ms,
            disk_chunk_bytes: self.disk_chunk_bytes,
            front_us: self.front_us,
            miss_cpu_us: self.miss_cpu_us,
        }
    }

    fn policies(&self) -> PolicyOverrides {
        PolicyOverrides {
            t_low: self.t_low,
            t_high: self.t_high,
            balance_factor: self.balance_factor,
            table_cap: self.table_cap,
            shrink_after_secs: self.shrink_after_secs,
            hacc_split: self.hacc_split,
            placement: self.placement,
        }
    }

    fn workload(&self, nodes: usize) -> anyhow::Result<(Workload, String)> {
        if let Some(path) = &self.trace {
            // The trace error names the file already.
            let (workload, name, note) = sim::replayed_workload(path)?;
            eprintln!("{note}");
            return Ok((workload, name));
        }
        let Some(gen) = self.gen else { bail!("give --trace FILE or --gen uniform|zipf") };
        let popularity = match gen {
            Generator::Uniform => Popularity::Uniform,
            Generator::Zipf => Popularity::Zipf { alpha: self.alpha },
        };
        let (requests, docs, dataset_mb, sizes, seed) =
            (self.requests, self.docs, self.dataset_mb, self.sizes, self.seed);
        let gen = GeneratedWorkload { popularity, requests, docs, dataset_mb, sizes, seed };
        Ok(gen.generate(self.cache_mb.mean(nodes))?)
    }
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let policies = args.policies().specs(&args.policy)?;
    let cluster_sizes = args.cache_mb.cluster_sizes(args.nodes.as_ref())?;
    let base = SimConfig {
        cache_kind: args.cache,
        model: args.model().model()?,
        warmup: args.warmup,
        max_in_flight: args.max_in_flight,
        shared_cpus: args.shared_cpus,
        routers: args.routers.0[0],
        report_delay_ns: sim::report_delay_ns(args.report_delay_ms)?,
        spread_seed: args.seed,
        events: args.events.clone(),
        ..SimConfig::with_caches(
            cluster_sizes[0],
            args.cache_mb.clone(),
            PolicySpec::new(PolicyKind::Rr),
        )
    };
    let (mut workload, name) = args.workload(cluster_sizes[0])?;
    if let Some(crowd) = args.flash_crowd {
        crowd.apply(&mut workload, args.seed).map_err(anyhow::Error::msg)?;
    }
    let mut sim = if args.route_keys {
        let urls = sim::target_urls(args.target_urls.as_deref(), &workload)?;
        Simulator::with_targets(&workload, sim::route_targets(&urls, args.tree_depth)?)?
    } else {
        Simulator::new(&workload)
    };
    let started = Instant::now();
    let mut clock = RunClock::start();
    let (sizes, routers) = (&cluster_sizes, &args.routers.0);
    let runs = sizes.len() * routers.len() * policies.len();
    let progress = crate::progress::Progress::new(runs as u64, "runs");
    let results = sim::sweep_routers(&mut sim, &base, sizes, routers, &policies, |r, wall| {
        let timed = clock.lap(r, wall);
        if args.json {
            progress.println(&timed.json_line(args.timing));
        } else if args.timing {
            progress.eprintln(&timed.summary());
        }
        progress.advance();
    })?;
    progress.finish();
    let wall = started.elapsed().as_secs_f64();
    let caches = args.cache_mb.label(cluster_sizes[0]);
    if !args.json {
        println!("workload: {name}; cache {caches} ({})", args.cache);
        print!("{}", sim::table(&results, Some(wall)));
        if let Some(line) = clock.total(&results) {
            println!("{line}");
        }
    }
    if let Some(path) = &args.svg {
        let title = format!("throughput vs cluster size: {name}, cache {caches}");
        std::fs::write(path, sim::throughput_svg(&results, &title))
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

//! `larder bench`: drive a server with a URL, a replayed access log or a synthetic
//! workload; closed loop, DBench ramp or open loop; report as a table, JSON and HTML.
//! `larder bench compare` runs the same workload against several targets, A B A B;
//! `larder bench experiment` runs the headline experiments (see `super::experiment`).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context};
use bench::duration_text::Timeout;
use bench::{
    compare, html, parse_duration, table, BaseUrl, Config, Plan, RampLimits, RampSpec, Report,
};
use bench::{load_shape::LoadShape, workload_plan::PlanShape};
use clap::Subcommand;
use trace::{generate, load_workload, LoadOptions, Popularity, SynthConfig, Workload};

/// Load generation and benchmark reports.
#[derive(clap::Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Args {
    #[command(subcommand)]
    command: Option<BenchCommand>,
    /// The URL to request over and over, or with --trace/--synth the base URL that every
    /// workload path is sent under (e.g. http://127.0.0.1:8080/).
    #[arg(long, visible_alias = "base", value_name = "URL")]
    url: Option<String>,
    #[command(flatten)]
    workload: WorkloadArgs,
    #[command(flatten)]
    load: LoadArgs,
    /// Write the report as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Write the report as a self-contained HTML page with charts to FILE.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
enum BenchCommand {
    /// Run the same workload against several targets in turn (A B A B ...) and print each
    /// figure's median per target with its ratio to the first target.
    Compare(Box<CompareArgs>),
    Experiment(Box<super::experiment::Args>),
}

#[derive(clap::Args, Debug)]
struct CompareArgs {
    /// A target URL (as --url); give it two or more times.
    #[arg(long = "target", value_name = "URL", required = true, num_args = 1)]
    targets: Vec<String>,
    /// Rounds over all targets.
    #[arg(long, value_name = "N", default_value_t = 3)]
    rounds: u32,
    #[command(flatten)]
    workload: WorkloadArgs,
    #[command(flatten)]
    load: LoadArgs,
    /// Write every run's report as JSON (an array per target) to FILE.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

/// What to send.
#[derive(clap::Args, Debug)]
struct WorkloadArgs {
    /// Replay this access log (Common/Combined Log Format, plain or .gz).
    #[arg(long, value_name = "FILE", conflicts_with = "synth")]
    trace: Option<PathBuf>,
    /// Send a synthetic workload from the generator of `larder trace gen` (Zipf popularity,
    /// HACC size mix; see the --synth-* flags).
    #[arg(long)]
    synth: bool,
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    synth_docs: u32,
    #[arg(long, value_name = "N", default_value_t = 100_000)]
    synth_requests: u64,
    #[arg(long, value_name = "N", default_value_t = 1_000)]
    synth_users: u32,
    #[arg(long, value_name = "A", default_value_t = 1.0)]
    synth_alpha: f64,
    #[arg(long, value_name = "REQ_PER_S", default_value_t = 1_000)]
    synth_rate: u32,
    #[arg(long, value_name = "S", default_value_t = 1)]
    synth_seed: u64,
    /// Send the workload as one stream shared by all users, without sessions or think times.
    #[arg(long)]
    flat: bool,
    /// Multiply recorded think times by this (0 replays sessions without thinking).
    #[arg(long, value_name = "X", default_value_t = 1.0)]
    think_scale: f64,
    /// Idle time after which a user's next request starts a new session, in minutes.
    #[arg(long, value_name = "MIN", default_value_t = 30)]
    idle_gap_min: u64,
    /// Send each target at the URL where a static server rooted at a docroot written by
    /// `larder trace docroot` serves its file (percent-encoded file names).
    #[arg(long)]
    docroot_urls: bool,
}

/// How to apply load.
#[derive(clap::Args, Debug)]
struct LoadArgs {
    /// Concurrent users (closed loop), or connections (with --rate).
    #[arg(long, value_name = "N", default_value_t = 10)]
    users: u32,
    /// Open a new connection for every request (HTTP/1.0 style) instead of keep-alive.
    #[arg(long)]
    connection_per_request: bool,
    /// Open loop: send this many requests per second in total, whatever the server does;
    /// latency counts from each request's intended send time.
    #[arg(long, value_name = "R", conflicts_with = "ramp")]
    rate: Option<f64>,
    /// DBench ramp START:STEP:EPOCH: start with START users, add STEP every EPOCH until a
    /// request fails or connects get slow; reports the users sustained.
    #[arg(long, value_name = "START:STEP:EPOCH", value_parser = RampSpec::parse)]
    ramp: Option<RampSpec>,
    /// Ramp: stop when an epoch's average connect time exceeds this.
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = parse_duration)]
    ramp_avg_connect: Duration,
    /// Ramp: stop when any connect takes longer than this.
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = parse_duration)]
    ramp_max_connect: Duration,
    /// Ramp: stop after the epoch at this many users.
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    ramp_max_users: u32,
    /// Stop after this long (after the warm-up). Default 10s for a single URL.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    duration: Option<Duration>,
    /// Stop after exactly this many requests (after the warm-up).
    #[arg(long, value_name = "N")]
    requests: Option<u64>,
    /// Requests due during this first period are sent but not counted.
    #[arg(long, value_name = "DURATION", default_value = "0s", value_parser = parse_duration)]
    warmup: Duration,
    /// Per-request timeout, connect included; `none` waits forever.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = Timeout::parse)]
    timeout: Timeout,
    /// Length of an epoch for the per-epoch statistics (the ramp uses its own epoch).
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration)]
    epoch: Duration,
    /// A flash crowd share=S,at=TIME[,targets=N]: from TIME after the start on, share S of
    /// the requests go to N targets of the workload (drawn with a fixed seed).
    #[arg(long, value_name = "SPEC")]
    flash_crowd: Option<trace::FlashCrowd>,
    /// Worker threads of the load generator [default: number of cores].
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
}

/// The workload to send, loaded once for every target.
enum Source {
    Single,
    Workload(Workload),
}

impl WorkloadArgs {
    fn source(&self) -> anyhow::Result<Source> {
        if let Some(path) = &self.trace {
            let (workload, report) = load_workload(path, &LoadOptions::default())
                .with_context(|| format!("loading {}", path.display()))?;
            eprintln!(
                "larder bench: {}: {} requests for {} targets ({} lines skipped)",
                path.display(),
                report.requests,
                workload.targets.len(),
                report.skipped_lines
            );
            return Ok(Source::Workload(workload));
        }
        if self.synth {
            let config = SynthConfig {
                docs: self.synth_docs,
                requests: self.synth_requests,
                users: self.synth_users,
                seed: self.synth_seed,
                popularity: Popularity::Zipf { alpha: self.synth_alpha },
                requests_per_sec: self.synth_rate,
                ..SynthConfig::default()
            };
            return Ok(Source::Workload(generate(&config).context("generating the workload")?));
        }
        Ok(Source::Single)
    }

    fn plan(&self, source: &Source, base: &BaseUrl) -> anyhow::Result<Plan> {
        let Source::Workload(workload) = source else { return Ok(Plan::single(base.path.clone())) };
        let (flat, think_scale, docroot_urls) = (self.flat, self.think_scale, self.docroot_urls);
        let shape = PlanShape { flat, think_scale, idle_gap_min: self.idle_gap_min, docroot_urls };
        Ok(shape.plan(workload, base)?)
    }
}

impl LoadArgs {
    fn config(&self, target: BaseUrl, plan: Plan, single: bool) -> anyhow::Result<Config> {
        let (avg_connect, max_connect) = (self.ramp_avg_connect, self.ramp_max_connect);
        let limits = RampLimits { avg_connect, max_connect, max_users: self.ramp_max_users };
        let shape = LoadShape {
            users: self.users,
            connection_per_request: self.connection_per_request,
            rate: self.rate,
            ramp: self.ramp.map(|spec| (spec, limits)),
            duration: self.duration,
            requests: self.requests,
            warmup: self.warmup,
            timeout: self.timeout.0,
            epoch: self.epoch,
            flash_crowd: self.flash_crowd,
        };
        Ok(shape.config(target, plan, single)?)
    }

    fn runtime(&self) -> anyhow::Result<bench::run::Runtime> {
        Ok(bench::run::runtime_or_per_core(self.threads)?)
    }
}

pub fn run(args: Args) -> anyhow::Result<()> {
    match args.command {
        Some(BenchCommand::Compare(compare)) => return run_compare(*compare),
        Some(BenchCommand::Experiment(experiment)) => return super::experiment::run(*experiment),
        None => {}
    }
    let Some(url) = &args.url else {
        bail!("give --url URL (or `larder bench compare --target URL --target URL`)");
    };
    let base = BaseUrl::parse(url)?;
    let source = args.workload.source()?;
    let plan = args.workload.plan(&source, &base)?;
    let config = args.load.config(base, plan, matches!(source, Source::Single))?;
    let progress = bench::progress::Progress::new();
    let report = args.load.runtime()?.block_on(bench::run(&config, |e| progress.epoch(e)))?;
    progress.clear();
    print!("{}", table::render(&report));
    write_outputs(&report, args.json.as_ref(), args.html.as_ref())
}

fn write_outputs(
    report: &Report,
    json: Option<&PathBuf>,
    page: Option<&PathBuf>,
) -> anyhow::Result<()> {
    if let Some(path) = json {
        report.write_json(path)?;
    }
    if let Some(path) = page {
        bench::report::write_file(path, &html::render_html(report))?;
    }
    Ok(())
}

fn run_compare(args: CompareArgs) -> anyhow::Result<()> {
    if args.targets.len() < 2 {
        bail!("compare needs at least two --target URLs");
    }
    let targets = args.targets.iter().map(|t| BaseUrl::parse(t)).collect::<Result<Vec<_>, _>>()?;
    let source = args.workload.source()?;
    let single = matches!(source, Source::Single);
    let progress = bench::progress::Progress::new();
    let reports = args.load.runtime()?.block_on(compare::run_alternating(
        &targets,
        args.rounds,
        |target| {
            let plan = args
                .workload
                .plan(&source, target)
                .map_err(|e| bench::BenchError::Config(format!("{e:#}")))?;
            args.load
                .config(target.clone(), plan, single)
                .map_err(|e| bench::BenchError::Config(format!("{e:#}")))
        },
        |e| progress.epoch(e),
    ))?;
    progress.clear();
    print!("{}", compare::render_comparison(&reports));
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&reports).context("encoding the reports")?;
        bench::report::write_file(path, &text)?;
    }
    Ok(())
}

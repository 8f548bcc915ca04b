//! `larder trace`: generate synthetic workloads, summarise logs, build docroots.

use anyhow::Context;
use clap::{Subcommand, ValueEnum};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;
use trace::{
    generate, human_bytes, load_workload, parse_size, parse_status_range, stats_table,
    write_docroot_watched, write_log_file, LoadOptions, Popularity, SizeMix, Stats, SynthConfig,
    Workload,
};

/// Generated logs start at this instant (2001-09-09T01:46:40Z): any fixed, plausible
/// date works, and a fixed one keeps `gen` output byte-for-byte reproducible.
const GENERATED_LOG_START_MS: i64 = 1_000_000_000_000;

/// Access logs and synthetic workloads.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    command: TraceCommand,
}

#[derive(Subcommand, Debug)]
enum TraceCommand {
    /// Generate a synthetic workload and write it as a Common Log Format log.
    ///
    /// The same seed and flags always give the same log. With --docroot, also write the
    /// documents themselves so the workload can be served by real servers.
    Gen(GenArgs),
    /// Summarise a log: requests, targets, data set, sessions, skipped lines and the
    /// cache an ideal single cache needs to cover 90..99% of requests.
    Stats(StatsArgs),
    /// Write every target of a log as a file of its recorded size under DIR.
    ///
    /// Paths are mapped safely and reversibly: every byte outside `A-Za-z0-9-_.` is
    /// percent-encoded (so `?`, `%`, `..` and odd bytes never escape DIR); a plain
    /// static server rooted at DIR serves a target at its path with `%` written `%25`.
    /// Files that already exist with the right size are left alone.
    Docroot(DocrootArgs),
}

#[derive(ValueEnum, Clone, Copy, Debug)]
enum Dist {
    /// Every document equally likely.
    Uniform,
    /// Rank k requested with probability proportional to 1/k^alpha (see --alpha).
    Zipf,
}

#[derive(clap::Args, Debug)]
struct GenArgs {
    /// Number of documents in the store.
    #[arg(long, value_name = "N", conflicts_with_all = ["dataset_mb", "single_file"])]
    docs: Option<u32>,
    /// Size the store by bytes instead: as many documents as it takes to reach M MiB
    /// (1 MiB = 1,048,576 bytes) with the chosen size mix and seed. [default: 10,000 docs]
    #[arg(long, value_name = "M", conflicts_with = "single_file")]
    dataset_mb: Option<f64>,
    /// Popularity of documents.
    #[arg(long, value_enum, default_value = "zipf", conflicts_with = "single_file")]
    dist: Dist,
    /// Zipf exponent (0 = uniform; web traces are usually 0.6..1.0). Used with --dist zipf.
    #[arg(long, value_name = "A", default_value_t = 1.0)]
    alpha: f64,
    /// Number of requests in the log.
    #[arg(long, value_name = "N", default_value_t = 1_000_000)]
    requests: u64,
    /// Number of distinct users (client hosts); each request's user is drawn uniformly.
    #[arg(long, value_name = "U", default_value_t = 1_000)]
    users: u32,
    /// Request rate of the generated stream; sets the time span and think times.
    #[arg(long, value_name = "REQ_PER_S", default_value_t = 1_000)]
    rate: u32,
    /// Seed of the generator: the same seed and flags give the same log.
    #[arg(long, value_name = "S", default_value_t = 1)]
    seed: u64,
    /// Document sizes: `hacc` (40% 5-8 KiB, the rest log-uniform up to 1.4 MiB, as in
    /// the HACC paper) or `fixed:SIZE` (e.g. fixed:8KiB).
    #[arg(long, value_name = "MIX", default_value = "hacc")]
    size_mix: SizeMix,
    /// Make the lowest-numbered documents the most popular (by default popularity
    /// ranks are shuffled, so popularity is unrelated to path and size).
    #[arg(long)]
    popular_first: bool,
    /// A single document of this size (e.g. 8KB, 1.4MiB) requested over and over.
    /// Sizes: B, KB/MB/GB (powers of 1000), KiB/MiB/GiB (powers of 1024).
    #[arg(long, value_name = "SIZE", value_parser = parse_size, conflicts_with = "size_mix")]
    single_file: Option<u64>,
    /// Output log; a name ending in .gz is gzip-compressed.
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,
    /// Also write every document as a file under DIR (created if missing).
    #[arg(long, value_name = "DIR")]
    docroot: Option<PathBuf>,
}

/// Which log lines become requests (shared by `stats` and `docroot`).
#[derive(clap::Args, Debug)]
struct LoadArgs {
    /// Methods whose lines become requests, comma-separated.
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_value = "GET,HEAD")]
    methods: Vec<String>,
    /// Statuses whose lines become requests: codes or ranges, comma-separated.
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_value = "200-299,304",
          value_parser = parse_status_range)]
    statuses: Vec<(u16, u16)>,
    /// Lines longer than this are skipped (and counted) without being held in memory.
    #[arg(long, value_name = "SIZE", default_value = "64KiB", value_parser = parse_size)]
    max_line: u64,
}

impl LoadArgs {
    fn options(&self) -> anyhow::Result<LoadOptions> {
        Ok(LoadOptions {
            methods: self.methods.clone(),
            statuses: self.statuses.clone(),
            max_line_bytes: usize::try_from(self.max_line).context("--max-line is too large")?,
        })
    }
}

#[derive(clap::Args, Debug)]
struct StatsArgs {
    /// Access log in Common or Combined Log Format, plain or gzip.
    file: PathBuf,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
    /// Idle time after which a user's next request starts a new session, in minutes.
    #[arg(long, value_name = "MIN", default_value_t = 30)]
    idle_gap_min: u64,
    #[command(flatten)]
    load: LoadArgs,
}

#[derive(clap::Args, Debug)]
struct DocrootArgs {
    /// Access log in Common or Combined Log Format, plain or gzip.
    file: PathBuf,
    /// Directory to write the files under (created if missing).
    dir: PathBuf,
    #[command(flatten)]
    load: LoadArgs,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    match args.command {
        TraceCommand::Gen(a) => gen(&a),
        TraceCommand::Stats(a) => stats(&a),
        TraceCommand::Docroot(a) => docroot(&a),
    }
}

fn synth_config(a: &GenArgs) -> anyhow::Result<SynthConfig> {
    let popularity = match a.dist {
        Dist::Uniform => Popularity::Uniform,
        Dist::Zipf => Popularity::Zipf { alpha: a.alpha },
    };
    let config = SynthConfig {
        requests: a.requests,
        users: a.users,
        seed: a.seed,
        sizes: a.size_mix,
        popularity,
        popular_first: a.popular_first,
        requests_per_sec: a.rate,
        ..SynthConfig::default()
    };
    Ok(config.sized(a.single_file, a.docs, a.dataset_mb)?)
}

fn gen(a: &GenArgs) -> anyhow::Result<()> {
    let config = synth_config(a)?;
    let started = Instant::now();
    let workload = generate(&config)?;
    let generated_s = started.elapsed().as_secs_f64();
    write_log_file(&workload, &a.output, GENERATED_LOG_START_MS)?;
    eprintln!(
        "larder: {} requests for {} docs ({}) generated in {generated_s:.2} s; \
         log written to {} in {:.2} s total",
        workload.requests.len(),
        workload.targets.len(),
        human_bytes(workload.dataset_bytes()),
        a.output.display(),
        started.elapsed().as_secs_f64()
    );
    if let Some(dir) = &a.docroot {
        report_docroot(&workload, dir)?;
    }
    Ok(())
}

fn stats(a: &StatsArgs) -> anyhow::Result<()> {
    let (workload, report) = load_workload(&a.file, &a.load.options()?)?;
    let gap_ms = a.idle_gap_min.checked_mul(60_000).context("--idle-gap-min is too large")?;
    let stats = Stats::of(&workload, Some(&report), gap_ms);
    let mut out = std::io::stdout().lock();
    if a.json {
        serde_json::to_writer(&mut out, &stats)?;
        writeln!(out)?;
    } else {
        write!(out, "{}", stats_table(&stats))?;
    }
    Ok(())
}

fn docroot(a: &DocrootArgs) -> anyhow::Result<()> {
    let (workload, _) = load_workload(&a.file, &a.load.options()?)?;
    report_docroot(&workload, &a.dir)
}

fn report_docroot(workload: &Workload, dir: &Path) -> anyhow::Result<()> {
    let progress = crate::progress::Progress::new(workload.targets.len() as u64, "files");
    let report = write_docroot_watched(workload, dir, || progress.advance())?;
    progress.finish();
    eprintln!("larder: docroot {}: {report}", dir.display());
    Ok(())
}

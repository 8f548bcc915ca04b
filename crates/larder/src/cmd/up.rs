//! `larder up`: a whole cluster on this machine — a document store, N `larder node`s and a
//! `larder route` in front of them — started with one command and stopped with Ctrl-C.
//!
//! - `store`: the synthetic document store, built once per size and reused.
//! - `router_config`: the router's TOML with the started nodes put in.
//!
//! The processes themselves are handled by [`super::process`].

pub(crate) mod router_config;
pub(crate) mod store;

use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use clap::value_parser;

use super::process::child::{self, Child};
use super::process::probe;
use super::process::signals::{Signals, Wake};
use router_config::RouterConfig;
use trace::SizeMix;

/// The largest store, as a multiple of one node's cache (the LARD papers' interesting
/// case: more than one node holds, less than all of them together).
const STORE_PER_CACHE: u64 = 3;
/// The store never exceeds this share (in quarters) of all caches together, so fewer
/// than 4 nodes still get a store their caches can hold.
const STORE_QUARTERS_OF_ALL_CACHES: u64 = 3;
/// How long the main loop sleeps between checks when nothing happens (signals wake it).
const IDLE_WAKE: Duration = Duration::from_secs(60);

/// Start a cluster on this machine: nodes and a router, ready for traffic.
///
/// With no arguments: a synthetic document store about 3× one node's cache and smaller
/// than all caches together (HACC's size mix; written once under --store-dir and reused),
/// 4 `larder node`s with --direct-io and one `larder route` with lard-r in front of them,
/// all on 127.0.0.1. It prints the traffic, admin and node addresses and runs until Ctrl-C
/// or SIGTERM, which stops every process it started and exits 0. If a process dies on its
/// own, the rest are stopped and it exits 1. The processes are killed if `larder up` is.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Number of back-end nodes.
    #[arg(long, default_value_t = 4, value_parser = value_parser!(u16).range(1..=256))]
    nodes: u16,
    /// Each node's cache in MiB. The synthetic store is 3× this, or 3/4 of all caches
    /// together when there are fewer than 4 nodes.
    #[arg(long, value_name = "M", default_value_t = 64,
          value_parser = value_parser!(u64).range(1..=1 << 20))]
    cache_mb: u64,
    /// Distribution policy: rr, wrr, least, hash, bounded, lard, lard-r, hacc or class
    /// [default: lard-r, or the --config file's].
    #[arg(long)]
    policy: Option<String>,
    /// Serve the files under DIR instead of the synthetic store.
    #[arg(long, value_name = "DIR")]
    docroot: Option<PathBuf>,
    /// Router configuration (TOML, see examples/router.toml) for everything else; its
    /// nodes are replaced by the started ones, and its listen and admin addresses by
    /// --listen and --admin.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Address clients connect to; port 0 takes a free port (the bound one is printed).
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// Router admin API address (/stats, /metrics, /targets) [default: a free port on
    /// 127.0.0.1].
    #[arg(long)]
    admin: Option<SocketAddr>,
    /// Nodes read cache misses through the page cache instead of with O_DIRECT (then a
    /// miss costs little once the page cache holds the store).
    #[arg(long)]
    no_direct_io: bool,
    /// Where synthetic stores are kept [default: $XDG_CACHE_HOME/larder or
    /// ~/.cache/larder].
    #[arg(long, value_name = "DIR", conflicts_with = "docroot")]
    store_dir: Option<PathBuf>,
    /// Instead of serving: compare the policies (wrr, hash, bounded, lard, lard-r) on a
    /// cluster of this shape (--nodes, --cache-mb) with a cache-bound dynamic workload,
    /// each policy on freshly started nodes so none inherits another's caches; print the
    /// table and exit. `larder bench experiment --help` has the full experiments.
    #[arg(long, conflicts_with_all = ["docroot", "config", "policy", "listen", "admin"])]
    bench: bool,
    /// With --bench: seconds measured per policy (after as long again of warm-up).
    #[arg(long, value_name = "S", default_value_t = 5, requires = "bench",
          value_parser = value_parser!(u64).range(1..=3600))]
    bench_secs: u64,
    /// Milliseconds each process gets to report its address and answer.
    #[arg(long, default_value_t = 30_000)]
    start_timeout_ms: u64,
    /// Milliseconds the processes get to exit after SIGTERM before they are killed.
    #[arg(long, default_value_t = 10_000)]
    stop_timeout_ms: u64,
}

/// Everything started so far; dropping it stops all of it, so no error path leaves a
/// process behind.
struct Cluster {
    router: Vec<Child>,
    nodes: Vec<Child>,
    grace: Duration,
    signals: Signals,
}

impl Cluster {
    /// Router first, so requests in flight finish on nodes that are still there.
    fn stop(&mut self) {
        child::stop(&mut self.router, self.grace, &self.signals);
        child::stop(&mut self.nodes, self.grace, &self.signals);
    }

    /// The first process that has exited: what happened, and its last stderr lines.
    fn exited(&mut self) -> anyhow::Result<Option<(String, String)>> {
        for c in self.router.iter_mut().chain(self.nodes.iter_mut()) {
            if let Some(status) = c.exit_status()? {
                return Ok(Some((
                    format!("{} exited on its own ({status})", c.describe()),
                    c.tail(),
                )));
            }
        }
        Ok(None)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A directory for this run's files (configurations), removed when dropped.
pub(crate) struct RunDir(pub(crate) PathBuf);

impl RunDir {
    /// `$TMPDIR/larder-<what>-<pid>`.
    pub(crate) fn create(what: &str) -> anyhow::Result<RunDir> {
        let dir = std::env::temp_dir().join(format!("larder-{what}-{}", std::process::id()));
        // A leftover of an earlier process with our pid.
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir(&dir).with_context(|| format!("creating {}", dir.display()))?;
        Ok(RunDir(dir))
    }
}

impl Drop for RunDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn run(args: Args) -> anyhow::Result<()> {
    if args.bench {
        return compare_policies(&args);
    }
    // First, before any thread exists (see `signals`).
    let signals = Signals::block().context("blocking signals")?;
    // The config before the store: a typo should not wait for a store to be written.
    let mut router_config = RouterConfig::new(args.config.as_deref())?;
    if let Some(p) = &args.policy {
        router_config.set_policy(p);
    }
    let (docroot, example) = documents(&args)?;
    // A store can take seconds to write: honour a Ctrl-C pressed meanwhile.
    if signals.stop_requested(Duration::ZERO) {
        return Ok(());
    }
    let run_dir = RunDir::create("up")?;
    let exe = std::env::current_exe().context("finding the larder executable")?;
    let deadline = Instant::now() + Duration::from_millis(args.start_timeout_ms);
    let grace = Duration::from_millis(args.stop_timeout_ms);
    let mut cluster = Cluster { router: Vec::new(), nodes: Vec::new(), grace, signals };

    let Some(nodes) = start_nodes(&mut cluster, &exe, &docroot, &args, deadline)? else {
        return stopped(cluster);
    };
    router_config.set_nodes(&nodes);
    let config_file = run_dir.0.join("router.toml");
    router_config.write(&config_file)?;
    let admin = admin_address(args.admin)?;
    let cmd = router_command(&exe, &config_file, args.listen, admin);
    let Some(listen) = start_router(&mut cluster, cmd, admin, deadline)? else {
        return stopped(cluster);
    };
    println!(
        "  router      http://{listen}  pid {}  policy {}",
        cluster.router[0].pid(),
        router_config.policy()
    );
    println!("  admin       http://{admin}/stats  (also /metrics, /targets?top=20)");
    println!("  try         curl -i http://{listen}{example}");
    println!("larder up: ready; Ctrl-C or SIGTERM stops every process above");

    loop {
        match signals.wait(IDLE_WAKE) {
            Wake::Stop => return stopped(cluster),
            Wake::ChildExited | Wake::Timeout => {
                if let Some((what, tail)) = cluster.exited()? {
                    eprintln!("larder up: {what}{tail}");
                    eprintln!("larder up: stopping the rest");
                    cluster.stop();
                    bail!("{what}");
                }
            }
        }
    }
}

/// The directory the nodes serve (`--docroot`, or the synthetic store, built if need be)
/// and the URL path of a document to try first.
fn documents(args: &Args) -> anyhow::Result<(PathBuf, String)> {
    match &args.docroot {
        Some(dir) if dir.is_dir() => {
            println!(
                "larder up: docroot {}; each node caches {} MiB",
                dir.display(),
                args.cache_mb
            );
            Ok((dir.clone(), "/".to_string()))
        }
        Some(dir) => bail!("--docroot {}: not a directory", dir.display()),
        None => {
            let root = match &args.store_dir {
                Some(d) => d.clone(),
                None => store::default_root()?,
            };
            let s = store::ensure(&root, store_bytes(args.nodes, args.cache_mb), SizeMix::Hacc)?;
            println!(
                "larder up: store {} ({} documents, {:.1} MiB; each node caches {} MiB)",
                s.dir.display(),
                s.docs,
                s.bytes as f64 / (1 << 20) as f64,
                args.cache_mb
            );
            Ok((s.dir, s.example))
        }
    }
}

/// Starts `--nodes` nodes and waits until each answers; their names and addresses, or
/// None if a stop was requested meanwhile.
fn start_nodes(
    cluster: &mut Cluster,
    exe: &Path,
    docroot: &Path,
    args: &Args,
    deadline: Instant,
) -> anyhow::Result<Option<Vec<(String, SocketAddr)>>> {
    let signals = cluster.signals;
    for i in 1..=args.nodes {
        let cmd = node_command(exe, docroot, args.cache_mb, !args.no_direct_io);
        cluster.nodes.push(child::spawn(&format!("n{i}"), cmd, node_address, &signals)?);
    }
    let mut nodes = Vec::new();
    for node in &mut cluster.nodes {
        let Some(addr) = node.address(deadline, &signals)? else { return Ok(None) };
        let answered = probe::answers(addr, "/.larder/load", deadline, &signals)
            .with_context(|| node.describe())?;
        if !answered {
            return Ok(None);
        }
        println!("  node {:<6} http://{addr}  pid {}", node.name, node.pid());
        nodes.push((node.name.clone(), addr));
    }
    Ok(Some(nodes))
}

/// Starts the router and waits until its admin API answers; its traffic address, or None
/// if a stop was requested meanwhile.
fn start_router(
    cluster: &mut Cluster,
    cmd: Command,
    admin: SocketAddr,
    deadline: Instant,
) -> anyhow::Result<Option<SocketAddr>> {
    let signals = cluster.signals;
    cluster.router.push(child::spawn("router", cmd, router_address, &signals)?);
    let router = &mut cluster.router[0];
    let Some(listen) = router.address(deadline, &signals)? else { return Ok(None) };
    let answered =
        probe::answers(admin, "/stats", deadline, &signals).with_context(|| router.describe())?;
    Ok(answered.then_some(listen))
}

/// `larder up --bench`: the locality experiment, short, on this cluster's shape.
fn compare_policies(args: &Args) -> anyhow::Result<()> {
    let caches = vec![args.cache_mb.to_string(); usize::from(args.nodes)].join(",");
    let out = match &args.store_dir {
        Some(d) => d.clone(),
        None => store::default_root()?,
    }
    .join("up-bench");
    let secs = format!("{}s", args.bench_secs);
    let mut flags: Vec<String> =
        ["--workloads", "dynamic-uniform", "--systems"].iter().map(|s| s.to_string()).collect();
    flags.push("wrr,hash,bounded,lard,lard-r".into());
    flags.extend(["--cache-mb".into(), caches, "--rounds".into(), "1".into()]);
    flags.extend(["--duration".into(), secs.clone(), "--warmup".into(), secs]);
    flags.push("--out".into());
    flags.push(out.display().to_string());
    if let Some(d) = &args.store_dir {
        flags.push("--store-dir".into());
        flags.push(d.display().to_string());
    }
    super::experiment::run(super::experiment::Args::from_flags(flags)?)
}

/// Bytes of synthetic store for `nodes` nodes of `cache_mb` MiB each.
fn store_bytes(nodes: u16, cache_mb: u64) -> u64 {
    let cache = cache_mb << 20;
    (cache * STORE_PER_CACHE).min(cache * u64::from(nodes) * STORE_QUARTERS_OF_ALL_CACHES / 4)
}

fn stopped(mut cluster: Cluster) -> anyhow::Result<()> {
    eprintln!("larder up: stopping");
    cluster.stop();
    eprintln!("larder up: stopped");
    Ok(())
}

fn node_command(exe: &Path, docroot: &Path, cache_mb: u64, direct_io: bool) -> Command {
    let mut cmd = Command::new(exe);
    cmd.arg("node").arg("--docroot").arg(docroot);
    cmd.args(["--listen", "127.0.0.1:0", "--cache-mb", &cache_mb.to_string()]);
    if direct_io {
        cmd.arg("--direct-io");
    }
    cmd
}

fn router_command(exe: &Path, config: &Path, listen: SocketAddr, admin: SocketAddr) -> Command {
    let mut cmd = Command::new(exe);
    cmd.arg("route").arg("--config").arg(config);
    cmd.args(["--listen", &listen.to_string(), "--admin", &admin.to_string(), "--node-header"]);
    cmd
}

/// The router reports only its traffic address, so a free admin port is found by binding
/// port 0 and letting it go; another process taking it in between makes the router fail
/// to start with a clear error.
pub(crate) fn admin_address(requested: Option<SocketAddr>) -> anyhow::Result<SocketAddr> {
    let wanted = requested.unwrap_or((IpAddr::V4(Ipv4Addr::LOCALHOST), 0).into());
    if wanted.port() != 0 {
        return Ok(wanted);
    }
    let probe = TcpListener::bind(wanted).with_context(|| format!("finding a port on {wanted}"))?;
    Ok(probe.local_addr()?)
}

/// `larder node: serving DIR on http://ADDR (cache …)`.
pub(crate) fn node_address(line: &str) -> Option<SocketAddr> {
    let rest = line.strip_prefix("larder node: serving ")?;
    let (_, after) = rest.rsplit_once(" on http://")?;
    after.split(' ').next()?.parse().ok()
}

/// The router's `{"level":"info","msg":"listening","addr":…}` event.
pub(crate) fn router_address(line: &str) -> Option<SocketAddr> {
    let event: serde_json::Value = serde_json::from_str(line).ok()?;
    if event.get("msg")?.as_str()? != "listening" {
        return None;
    }
    event.get("addr")?.as_str()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_is_three_caches_and_less_than_all() {
        assert_eq!(store_bytes(4, 64), 192 << 20);
        assert_eq!(store_bytes(8, 64), 192 << 20);
        assert_eq!(store_bytes(2, 64), 96 << 20);
        assert_eq!(store_bytes(1, 4), 3 << 20);
    }

    #[test]
    fn reads_the_address_lines() {
        let node = "larder node: serving /a on http://x on http://127.0.0.1:4100 (cache 2 MiB)";
        assert_eq!(node_address(node), Some("127.0.0.1:4100".parse().unwrap()));
        assert_eq!(node_address("larder node: warning: open-file limit"), None);
        let router = r#"{"level":"info","msg":"listening","addr":"127.0.0.1:8080","threads":"2"}"#;
        assert_eq!(router_address(router), Some("127.0.0.1:8080".parse().unwrap()));
        assert_eq!(router_address(r#"{"msg":"node down","addr":"127.0.0.1:1"}"#), None);
        assert_eq!(router_address("not json"), None);
    }
}

//! `larder up`: a whole cluster on this machine, run by [`lab::UpConfig`]; `--bench`
//! runs [`lab::experiment`] on the cluster's shape. This file turns the flags into them.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::value_parser;
use lab::UpConfig;
use policy::PolicyKind;

use crate::cmd::hosts::HostsArgs;
use crate::console::Console;

/// Start a cluster on this machine: nodes and a router (or, with --peers, peers), ready for
/// traffic.
///
/// With no arguments: a synthetic document store about 3× one node's cache and smaller
/// than all caches together (HACC's size mix; written once under --store-dir and reused),
/// 4 `larder node`s with --direct-io and one `larder route` with lard-r in front of them,
/// all on 127.0.0.1 (with --tls, HTTPS and HTTP/2 beside). It prints the traffic, admin
/// and node addresses and runs until Ctrl-C or SIGTERM, which stops every process it
/// started and exits 0. If a process dies on its own, the rest are stopped and it exits
/// 1. The processes are killed if `larder up` is.
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
    policy: Option<PolicyKind>,
    /// Serve the files under DIR instead of the synthetic store.
    #[arg(long, value_name = "DIR")]
    docroot: Option<PathBuf>,
    // --help prints this text as written: its brackets are not links.
    #[allow(rustdoc::broken_intra_doc_links)]
    /// Instead of serving files, make the nodes caches in front of this existing site
    /// (http://host[:port][/path], e.g. your nginx); repeat for fallbacks tried in order.
    /// Each node fetches what it misses and keeps it as HTTP caching allows.
    #[arg(long, value_name = "URL", conflicts_with_all = ["docroot", "bench", "hosts"])]
    origin: Vec<String>,
    /// How the caching nodes store and fetch (with --origin).
    #[command(flatten, next_help_heading = "Caching nodes (with --origin)")]
    caching: node::OriginFlags,
    /// Router configuration (TOML, see examples/router.toml) for everything else; its
    /// nodes are replaced by the started ones, and its listen and admin addresses by
    /// --listen and --admin.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Address clients connect to; port 0 takes a free port (the bound one is printed).
    /// With --hosts, its port on the router host's own address.
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// Also serve HTTPS, HTTP/2 and HTTP/1.1 (ALPN h2, http/1.1), on --tls-listen, with a
    /// self-signed certificate generated at start for localhost and the loopback addresses
    /// (kept in the run's directory while it runs); the printed `https` line is a curl
    /// command that trusts it. Not with --peers or --hosts.
    #[arg(long, conflicts_with_all = ["peers", "bench"])]
    tls: bool,
    /// The HTTPS address with --tls; port 0 takes a free port (the bound one is printed).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8443", requires = "tls")]
    tls_listen: SocketAddr,
    /// Router processes sharing --listen (SO_REUSEPORT), named r1..rN in X-Larder-Router.
    #[arg(long, default_value_t = 1,
          value_parser = value_parser!(u8).range(1..=i64::from(lab::MAX_ROUTERS)))]
    routers: u8,
    /// No router tier: start --nodes peers (`larder peer`), each a node and a distributor
    /// that takes clients itself, serves what it should and forwards the rest to the node
    /// that should serve it. On this machine they share --listen (SO_REUSEPORT); with
    /// --hosts each peer listens on its own host's address, and any of them serves every
    /// document.
    #[arg(long, conflicts_with_all = ["routers", "bench"])]
    peers: bool,
    /// With --peers on this machine: each peer hands a plain HTTP/1.1 client connection to
    /// the node of its first request over a Unix socket instead of relaying its responses,
    /// and that node forwards a later request on it that belongs to another node (`larder
    /// peer --handoff`). Not with --hosts.
    #[arg(long, requires = "peers", conflicts_with = "hosts")]
    handoff: bool,
    /// Router admin API address (/stats, /metrics, /targets) [default: a free port on
    /// 127.0.0.1; with several routers, the first's, and the others take free ports].
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
    /// cluster of this shape (--nodes; half of them --cache-mb, the rest a quarter of
    /// that) with a skewed (Zipf) dynamic workload as large as 3/4 of all caches, whose
    /// hot set is more than one node can serve, each policy on freshly started nodes so
    /// none inherits another's caches; show progress, print the table and exit. `larder bench experiment --help` has the full experiments.
    #[arg(long, conflicts_with_all = ["docroot", "config", "policy", "listen", "admin", "routers"])]
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
    /// Also show the processes' output as it comes, each line prefixed with its name (it
    /// always goes to log files in the run's directory; with --bench, under its results).
    #[arg(long)]
    verbose: bool,
    #[command(flatten)]
    hosts: HostsArgs,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    // A mistyped origin is refused here, before any process starts.
    for url in &args.origin {
        node::origin::OriginUrl::parse(url)?;
    }
    if args.hosts.link_rate.len() > 1 {
        anyhow::bail!(
            "--link-rate: larder up takes one rate (larder bench experiment --hosts \
             --link-rate compares several)"
        );
    }
    let config = UpConfig {
        nodes: args.nodes,
        cache_mb: args.cache_mb,
        policy: args.policy,
        docroot: args.docroot,
        origins: args.origin,
        caching_args: args.caching.to_args(),
        host_in_key: args.caching.origin_host == node::origin::OriginHost::Client,
        config: args.config,
        listen: args.listen,
        routers: args.routers,
        admin: args.admin,
        direct_io: !args.no_direct_io,
        store_dir: args.store_dir,
        start_timeout: Duration::from_millis(args.start_timeout_ms),
        stop_timeout: Duration::from_millis(args.stop_timeout_ms),
        verbose: args.verbose,
        hosts: args.hosts.config(),
        peers: args.peers,
        handoff: args.handoff,
        tls: args.tls.then_some(args.tls_listen),
    };
    if args.bench {
        return Ok(lab::experiment::run(&config.bench_plan(args.bench_secs)?, Console::shared())?);
    }
    Ok(config.run(Console::shared())?)
}

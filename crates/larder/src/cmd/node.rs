//! `larder node`: run the back-end web server (Flash-like AMPED) on a document root.

use anyhow::Context;
use clap::Parser;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// Serve a document root, or cache an origin: the back-end web server (Flash-like).
///
/// Serves over HTTP/1.1 the way Flash did: one event loop that never waits
/// for the disk, helper threads for path translation and disk reads, and caches for path
/// translation, response headers and file data. Reports its load at `--load-path` for the
/// router. SIGTERM (or Ctrl-C) stops accepting, finishes in-flight requests and exits.
///
/// With --origin the node is a cache in front of web servers instead: it serves what it
/// holds and fetches misses from the origins over pooled keep-alive connections, keeping
/// responses as HTTP caching allows (Cache-Control, Expires, Age, Vary, revalidation with
/// 304, stale-if-error). Concurrent misses for one URL cause one origin request.
/// Responses carry X-Larder-Cache: HIT, MISS, REVALIDATED, STALE or PASS.
#[derive(Parser, Debug)]
pub struct Args {
    /// Directory to serve. Paths can never leave it. Not needed with --origin.
    #[arg(long, required_unless_present = "origin")]
    docroot: Option<PathBuf>,
    /// Be a cache in front of this origin (http://host[:port][/path]) instead of serving a
    /// docroot. Repeat for fallbacks: each request tries them in order until one answers.
    #[arg(long, value_name = "URL", conflicts_with = "docroot")]
    origin: Vec<String>,
    /// Seconds an origin response without Cache-Control max-age/s-maxage or Expires stays
    /// fresh (for the statuses HTTP allows to be cached that way, such as 200 and 404).
    #[arg(long, value_name = "SECS", default_value_t = 60)]
    origin_default_ttl: u64,
    /// Seconds past expiry a stale response may be served when the origin is unreachable,
    /// times out or answers 500/502/503/504 (a response's own stale-if-error wins;
    /// must-revalidate, proxy-revalidate and s-maxage forbid it).
    #[arg(long, value_name = "SECS", default_value_t = 300)]
    origin_stale_if_error: u64,
    /// Milliseconds allowed for an origin fetch up to the response head, and for each wait
    /// for body bytes after it; 504 Gateway Timeout when exceeded before the head.
    #[arg(long, default_value_t = 10_000)]
    origin_timeout_ms: u64,
    /// Idle keep-alive connections kept open per origin.
    #[arg(long, default_value_t = 32)]
    origin_max_idle: usize,
    /// Largest origin response head in KiB (502 Bad Gateway beyond).
    #[arg(long, default_value_t = 64)]
    origin_max_head_kb: usize,
    /// Most header fields in an origin response head (502 Bad Gateway beyond).
    #[arg(long, default_value_t = 128)]
    origin_max_head_fields: usize,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// File-data cache size in MiB (file bodies and computed dynamic views share it).
    #[arg(long, default_value_t = 64)]
    cache_mb: u64,
    /// Read cache misses with O_DIRECT, so a miss costs a real disk read even when the page
    /// cache could hold everything (falls back, with a warning, where O_DIRECT is refused).
    #[arg(long)]
    direct_io: bool,
    /// Helper threads for path translation (stat, open) and disk reads.
    #[arg(long, default_value_t = 4)]
    threads: usize,
    /// Helper threads for computing dynamic views.
    #[arg(long, default_value_t = 1)]
    cpu_threads: usize,
    /// Files (and origin responses) up to this many KiB are cached whole; larger files are
    /// streamed with sendfile, larger origin responses relayed uncached as they arrive.
    #[arg(long, default_value_t = 1024)]
    max_cached_file_kb: u64,
    /// Entries in the path-translation cache (each keeps a file open).
    #[arg(long, default_value_t = 4096)]
    path_cache_entries: u64,
    /// How long a path translation (stat result) is trusted, in milliseconds.
    #[arg(long, default_value_t = 2000)]
    stat_ttl_ms: u64,
    /// Serve files reached through symlinks that point outside the docroot.
    #[arg(long)]
    follow_outside_symlinks: bool,
    /// File served for a directory URL.
    #[arg(long, default_value = "index.html")]
    index: String,
    /// Maximum bytes of a request head (431 beyond).
    #[arg(long, default_value_t = 16 * 1024)]
    max_header_bytes: usize,
    /// Maximum header fields in a request (431 beyond).
    #[arg(long, default_value_t = 64)]
    max_headers: usize,
    /// Maximum bytes of the request target (414 beyond).
    #[arg(long, default_value_t = 8 * 1024)]
    max_uri_bytes: usize,
    /// Largest request body read and discarded (413 beyond).
    #[arg(long, default_value_t = 64 * 1024)]
    max_body_bytes: u64,
    /// Connections served at once; more wait in the listen backlog.
    #[arg(long, default_value_t = 10_240)]
    max_connections: usize,
    /// Milliseconds from a request's first byte to the end of its head (408 and close after).
    #[arg(long, default_value_t = 10_000)]
    header_timeout_ms: u64,
    /// Milliseconds an idle keep-alive connection is kept.
    #[arg(long, default_value_t = 60_000)]
    idle_timeout_ms: u64,
    /// Milliseconds a write may wait for a client that does not read.
    #[arg(long, default_value_t = 60_000)]
    send_timeout_ms: u64,
    /// Milliseconds to keep draining client input after an error answer before closing.
    #[arg(long, default_value_t = 2000)]
    linger_ms: u64,
    /// Milliseconds shutdown waits for in-flight requests.
    #[arg(long, default_value_t = 30_000)]
    shutdown_grace_ms: u64,
    /// Listen backlog.
    #[arg(long, default_value_t = 4096)]
    backlog: i32,
    /// Path of the JSON load report.
    #[arg(long, default_value = wire::LOAD_REPORT_PATH)]
    load_path: String,
    /// Turn the load report off.
    #[arg(long)]
    no_load_report: bool,
    /// Path of the Prometheus metrics.
    #[arg(long, default_value = "/.larder/metrics")]
    metrics_path: String,
    /// Turn the metrics off.
    #[arg(long)]
    no_metrics: bool,
    /// First path segment of the dynamic route /<mount>/<db>/<view>/<doc>?OpenDocument.
    #[arg(long, default_value = "app")]
    dyn_mount: String,
    /// Turn the dynamic route off.
    #[arg(long)]
    no_dynamic: bool,
    /// CPU cost of computing one view (a miss), in microseconds, calibrated at start-up.
    #[arg(long, default_value_t = 2000)]
    dyn_cost_us: u64,
    /// Exact hash-loop rounds per view instead of --dyn-cost-us (reproducible bytes across
    /// machines).
    #[arg(long)]
    dyn_iterations: Option<u64>,
    /// KiB of a computed view (its size in the cache).
    #[arg(long, default_value_t = 64)]
    dyn_view_kb: usize,
    /// KiB of a dynamic document response.
    #[arg(long, default_value_t = 8)]
    dyn_doc_kb: usize,
    /// Append a Combined Log Format access log to this file (buffered).
    #[arg(long)]
    access_log: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let origins: Vec<node::origin::OriginUrl> =
        args.origin.iter().map(|u| node::origin::OriginUrl::parse(u)).collect::<Result<_, _>>()?;
    // A caching node has no docroot: its ready line names the first origin instead.
    let docroot = match (&args.docroot, origins.first()) {
        (Some(d), _) => d.clone(),
        (None, Some(o)) => PathBuf::from(o.to_string()),
        (None, None) => anyhow::bail!("--docroot or --origin is required"),
    };
    let mut cfg = node::Config::new(&docroot);
    if !origins.is_empty() {
        let mut o = node::origin::OriginConfig::new(origins);
        o.defaults.ttl = Duration::from_secs(args.origin_default_ttl);
        o.defaults.stale_if_error = Duration::from_secs(args.origin_stale_if_error);
        o.timeout = Duration::from_millis(args.origin_timeout_ms);
        o.max_idle_per_origin = args.origin_max_idle;
        o.max_head_bytes = args.origin_max_head_kb << 10;
        o.max_head_fields = args.origin_max_head_fields;
        cfg.origin = Some(o);
    }
    cfg.cache_bytes = args.cache_mb << 20;
    cfg.max_cached_file_bytes = args.max_cached_file_kb << 10;
    cfg.direct_io = args.direct_io;
    cfg.disk_threads = args.threads;
    cfg.cpu_threads = args.cpu_threads;
    cfg.path_cache_entries = args.path_cache_entries;
    cfg.stat_ttl = Duration::from_millis(args.stat_ttl_ms);
    cfg.follow_outside_symlinks = args.follow_outside_symlinks;
    cfg.index_file = args.index;
    let (max_header_bytes, max_headers) = (args.max_header_bytes, args.max_headers);
    cfg.limits = node::Limits { max_header_bytes, max_headers, max_uri_len: args.max_uri_bytes };
    cfg.max_body_bytes = args.max_body_bytes;
    cfg.max_connections = args.max_connections;
    cfg.header_timeout = Duration::from_millis(args.header_timeout_ms);
    cfg.idle_timeout = Duration::from_millis(args.idle_timeout_ms);
    cfg.send_timeout = Duration::from_millis(args.send_timeout_ms);
    cfg.linger_timeout = Duration::from_millis(args.linger_ms);
    cfg.shutdown_grace = Duration::from_millis(args.shutdown_grace_ms);
    cfg.backlog = args.backlog;
    cfg.load_path = (!args.no_load_report).then_some(args.load_path);
    cfg.metrics_path = (!args.no_metrics).then_some(args.metrics_path);
    cfg.access_log = args.access_log;
    cfg.dynamic = (!args.no_dynamic).then(|| node::DynamicConfig {
        mount: args.dyn_mount,
        iterations: node::DynamicConfig::iterations_for(args.dyn_cost_us, args.dyn_iterations),
        view_bytes: args.dyn_view_kb << 10,
        doc_bytes: args.dyn_doc_kb << 10,
    });
    cfg.validate()?;
    // Each connection and each cached path holds a descriptor: raise the soft limit to
    // the hard one (10,000 keep-alive clients need more than the usual 1024).
    let fds = rlimit::increase_nofile_limit(u64::MAX).context("raising the open-file limit")?;
    let needed = cfg.max_connections as u64 + cfg.path_cache_entries + 64;
    if fds < needed {
        eprintln!(
            "larder node: warning: open-file limit {fds} is below max-connections + \
             path-cache-entries ({needed}); accepts will fail when it runs out"
        );
    }
    let listener = std::net::TcpListener::bind(args.listen)
        .with_context(|| format!("binding {}", args.listen))?;
    let ready = wire::NodeReady {
        docroot,
        addr: listener.local_addr()?,
        cache_mib: args.cache_mb,
        direct_io: args.direct_io,
    };
    eprintln!("{ready}");
    node::serve(listener, cfg, termination_signal())?;
    Ok(())
}

/// Completes on SIGTERM or SIGINT: the node's shutdown future.
async fn termination_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    match (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) {
        (Ok(mut term), Ok(mut int)) => {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
        }
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("larder node: cannot watch for SIGTERM ({e}); stop it with SIGKILL");
            std::future::pending::<()>().await;
        }
    }
}

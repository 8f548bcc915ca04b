//! `larder node`'s flags (with the `clap` feature): every setting of [`Config`] as a
//! command-line flag with its default and its help, and the one conversion from flags to a
//! config, so the binary only binds, raises limits and waits for signals.

use std::path::PathBuf;
use std::time::Duration;

use crate::config::Config;
use crate::dynamic::DynamicConfig;

/// Flags that do not make a config, said as the user gave them.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct FlagsError(pub String);

/// The node's settings as flags (`#[command(flatten)]` them into a command).
#[derive(clap::Args, Debug)]
pub struct Flags {
    /// Directory to serve. Paths can never leave it. Not needed with --origin.
    #[arg(long, required_unless_present = "origin")]
    pub docroot: Option<PathBuf>,
    // --help prints this text as written: its brackets are not links.
    #[allow(rustdoc::broken_intra_doc_links)]
    /// Be a cache in front of this origin (http://host[:port][/path]) instead of serving a
    /// docroot. Repeat for fallbacks: each request tries them in order until one answers.
    /// Never stored, only relayed to the client whose request fetched them: responses with
    /// Cache-Control no-store or private, Vary: *, or Set-Cookie (see --origin-set-cookie);
    /// answers to requests with Authorization unless public, s-maxage or must-revalidate
    /// allow it; 206, 304 and statuses HTTP does not let a cache store without freshness.
    /// Every method but GET and HEAD (POST, PUT, DELETE, …) is passed to the origin with its
    /// body streamed (up to --max-body-bytes) and its answer relayed, never stored; a 2xx
    /// or 3xx answer to an unsafe one drops the stored URL (and same-origin Location and
    /// Content-Location). A single Range (bytes=a-b, a-, -n) on a stored 200 is answered
    /// 206 from the store (416 beyond its end); several ranges, a Range on a miss whose
    /// body is still arriving, or an If-Range that does not match get the whole 200.
    #[arg(long, value_name = "URL", conflicts_with = "docroot")]
    pub origin: Vec<String>,
    /// Address (besides loopback, always allowed) of a router allowed to send this caching
    /// node invalidations (POST /.larder/invalidate?target=…, after an unsafe request for
    /// the target succeeded on another node); repeat for each router. Others get 403.
    #[arg(long = "invalidate-from", value_name = "IP")]
    pub invalidate_from: Vec<std::net::IpAddr>,
    /// Address (ip:port) of another caching node of the cluster; repeat for each (this
    /// node's own address may be listed too). A miss on a URL that a router says another
    /// node holds or is filling (larder route names that node on requests it sends a
    /// replica) is filled from that node, coalesced, instead of from the origin, so a
    /// replicated URL costs the origin one fetch cluster-wide. Only listed nodes are ever
    /// asked. larder up passes its nodes.
    #[arg(long = "peer", value_name = "ADDR")]
    pub peers: Vec<std::net::SocketAddr>,
    /// The caching settings of a node in front of an origin.
    #[command(flatten)]
    pub cache: crate::origin_flags::OriginFlags,
    /// File-data cache size in MiB (file bodies and computed dynamic views share it).
    #[arg(long, default_value_t = 64)]
    pub cache_mb: u64,
    /// Read cache misses with O_DIRECT, so a miss costs a real disk read even when the page
    /// cache could hold everything (falls back, with a warning, where O_DIRECT is refused).
    #[arg(long)]
    pub direct_io: bool,
    /// Helper threads for path translation (stat, open) and disk reads.
    #[arg(long, default_value_t = 4)]
    pub threads: usize,
    /// Helper threads for computing dynamic views.
    #[arg(long, default_value_t = 1)]
    pub cpu_threads: usize,
    /// Files (and origin responses) up to this many KiB are cached whole; larger files are
    /// streamed with sendfile, larger origin responses relayed uncached as they arrive.
    #[arg(long, default_value_t = 1024)]
    pub max_cached_file_kb: u64,
    /// Entries in the path-translation cache (each keeps a file open).
    #[arg(long, default_value_t = 4096)]
    pub path_cache_entries: u64,
    /// How long a path translation (stat result) is trusted, in milliseconds.
    #[arg(long, default_value_t = 2000)]
    pub stat_ttl_ms: u64,
    /// Serve files reached through symlinks that point outside the docroot.
    #[arg(long)]
    pub follow_outside_symlinks: bool,
    /// File served for a directory URL.
    #[arg(long, default_value = "index.html")]
    pub index: String,
    /// Maximum bytes of a request head (431 beyond).
    #[arg(long, default_value_t = 16 * 1024)]
    pub max_header_bytes: usize,
    /// Maximum header fields in a request (431 beyond).
    #[arg(long, default_value_t = 64)]
    pub max_headers: usize,
    /// Maximum bytes of the request target (414 beyond).
    #[arg(long, default_value_t = 8 * 1024)]
    pub max_uri_bytes: usize,
    /// Largest request body (413 beyond): read and discarded, or on a caching node passed to
    /// the origin as it arrives (POST, PUT, …; never held whole in memory).
    #[arg(long, default_value_t = 64 * 1024)]
    pub max_body_bytes: u64,
    /// Connections served at once; more wait in the listen backlog.
    #[arg(long, default_value_t = 10_240)]
    pub max_connections: usize,
    /// Milliseconds from a request's first byte to the end of its head (408 and close after);
    /// also the longest wait for each piece of a body passed to an origin.
    #[arg(long, default_value_t = 10_000)]
    pub header_timeout_ms: u64,
    /// Milliseconds an idle keep-alive connection is kept.
    #[arg(long, default_value_t = 60_000)]
    pub idle_timeout_ms: u64,
    /// Milliseconds a write may wait for a client that does not read.
    #[arg(long, default_value_t = 60_000)]
    pub send_timeout_ms: u64,
    /// Milliseconds to keep draining client input after an error answer before closing.
    #[arg(long, default_value_t = 2000)]
    pub linger_ms: u64,
    /// Milliseconds shutdown waits for in-flight requests.
    #[arg(long, default_value_t = 30_000)]
    pub shutdown_grace_ms: u64,
    /// Listen backlog.
    #[arg(long, default_value_t = 4096)]
    pub backlog: i32,
    /// Path of the JSON load report.
    #[arg(long, default_value = wire::LOAD_REPORT_PATH)]
    pub load_path: String,
    /// Turn the load report off.
    #[arg(long)]
    pub no_load_report: bool,
    /// Milliseconds a router that polled the load report still counts in its `routers`
    /// figure (routers name themselves on each poll; one that stopped is forgotten after
    /// this). Keep it well above the routers' poll period (200 ms unless set): a router
    /// alone places as LARD does, several share one placement. Default is 10000.
    #[arg(long, default_value_t = 10_000)]
    pub routers_window_ms: u64,
    /// Most router ids the load report's `routers` count keeps (the oldest go first).
    /// Default is 1024.
    #[arg(long, default_value_t = 1024)]
    pub max_routers: usize,
    /// Path of the Prometheus metrics. Under /.larder/ (the default) routers refuse it
    /// from their clients, as they do the load report; elsewhere they relay it.
    #[arg(long, default_value = "/.larder/metrics")]
    pub metrics_path: String,
    /// Turn the metrics off.
    #[arg(long)]
    pub no_metrics: bool,
    // --help prints this text as written: its <…> are not HTML.
    #[allow(rustdoc::invalid_html_tags)]
    /// First path segment of the dynamic route /<mount>/<db>/<view>/<doc>?OpenDocument.
    #[arg(long, default_value = "app")]
    pub dyn_mount: String,
    /// Turn the dynamic route off.
    #[arg(long)]
    pub no_dynamic: bool,
    /// CPU cost of computing one view (a miss), in microseconds, calibrated at start-up.
    #[arg(long, default_value_t = 2000)]
    pub dyn_cost_us: u64,
    /// Exact hash-loop rounds per view instead of --dyn-cost-us (reproducible bytes across
    /// machines).
    #[arg(long)]
    pub dyn_iterations: Option<u64>,
    /// KiB of a computed view (its size in the cache).
    #[arg(long, default_value_t = 64)]
    pub dyn_view_kb: usize,
    /// KiB of a dynamic document response.
    #[arg(long, default_value_t = 8)]
    pub dyn_doc_kb: usize,
    /// Append a Combined Log Format access log to this file (buffered).
    #[arg(long)]
    pub access_log: Option<PathBuf>,
    /// Adopt client connections a router on this host hands over (larder route
    /// --handoff) on this Unix socket, advertised in the load report; the node then serves
    /// them itself. Created mode 0600; a stale socket at the path is replaced.
    #[arg(long, value_name = "PATH")]
    pub handoff_socket: Option<PathBuf>,
    /// Handed-off connections served at once; more are refused (the router relays them).
    #[arg(long, default_value_t = 4096)]
    pub handoff_max_connections: usize,
    /// Most bytes a router may pass with a handed-off connection.
    #[arg(long, default_value_t = 64 * 1024)]
    pub handoff_max_bytes: usize,
}

impl Flags {
    /// The config these flags describe (not yet validated), and what the ready line calls
    /// the content: the docroot, or the first origin of a caching node.
    pub fn config(self) -> Result<(Config, PathBuf), FlagsError> {
        let origins: Vec<crate::origin::OriginUrl> = self
            .origin
            .iter()
            .map(|u| crate::origin::OriginUrl::parse(u))
            .collect::<Result<_, _>>()
            .map_err(|e| FlagsError(e.to_string()))?;
        // A caching node has no docroot: its ready line names the first origin instead.
        let docroot = match (&self.docroot, origins.first()) {
            (Some(d), _) => d.clone(),
            (None, Some(o)) => PathBuf::from(o.to_string()),
            (None, None) => return Err(FlagsError("--docroot or --origin is required".into())),
        };
        let mut cfg = Config::new(&docroot);
        if !origins.is_empty() {
            let mut o = crate::origin::OriginConfig::new(origins);
            self.cache.apply(&mut o);
            o.invalidate_from = self.invalidate_from;
            o.peers = self.peers;
            cfg.origin = Some(o);
        }
        cfg.cache_bytes = self.cache_mb << 20;
        cfg.max_cached_file_bytes = self.max_cached_file_kb << 10;
        cfg.direct_io = self.direct_io;
        cfg.disk_threads = self.threads;
        cfg.cpu_threads = self.cpu_threads;
        cfg.path_cache_entries = self.path_cache_entries;
        cfg.stat_ttl = Duration::from_millis(self.stat_ttl_ms);
        cfg.follow_outside_symlinks = self.follow_outside_symlinks;
        cfg.index_file = self.index;
        let (max_header_bytes, max_headers) = (self.max_header_bytes, self.max_headers);
        cfg.limits =
            http1::Limits { max_header_bytes, max_headers, max_uri_len: self.max_uri_bytes };
        cfg.max_body_bytes = self.max_body_bytes;
        cfg.max_connections = self.max_connections;
        cfg.header_timeout = Duration::from_millis(self.header_timeout_ms);
        cfg.idle_timeout = Duration::from_millis(self.idle_timeout_ms);
        cfg.send_timeout = Duration::from_millis(self.send_timeout_ms);
        cfg.linger_timeout = Duration::from_millis(self.linger_ms);
        cfg.shutdown_grace = Duration::from_millis(self.shutdown_grace_ms);
        cfg.backlog = self.backlog;
        cfg.load_path = (!self.no_load_report).then_some(self.load_path);
        cfg.routers_window = Duration::from_millis(self.routers_window_ms);
        cfg.max_routers = self.max_routers;
        cfg.metrics_path = (!self.no_metrics).then_some(self.metrics_path);
        cfg.access_log = self.access_log;
        cfg.handoff = self.handoff_socket.map(|socket| {
            let mut h = crate::HandoffConfig::new(socket);
            h.max_connections = self.handoff_max_connections;
            h.max_message_bytes = self.handoff_max_bytes;
            h
        });
        cfg.dynamic = (!self.no_dynamic).then(|| DynamicConfig {
            mount: self.dyn_mount,
            iterations: DynamicConfig::iterations_for(self.dyn_cost_us, self.dyn_iterations),
            view_bytes: self.dyn_view_kb << 10,
            doc_bytes: self.dyn_doc_kb << 10,
        });
        Ok((cfg, docroot))
    }
}

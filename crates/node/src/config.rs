//! Everything a node can be told, with defaults that are safe on an open network.

use crate::dynamic::DynamicConfig;
use crate::handoff_config::HandoffConfig;
use crate::origin::OriginConfig;
use http1::Limits;
use std::path::PathBuf;
use std::time::Duration;

/// The node's configuration. `Config::new(docroot)` gives the defaults.
#[derive(Clone, Debug)]
pub struct Config {
    pub docroot: PathBuf,
    /// Capacity of the file-data cache (`--cache-mb`), shared with computed views.
    pub cache_bytes: u64,
    /// Files up to this size are read whole and cached; larger ones stream from the page
    /// cache with sendfile (or through helpers) and are never cached.
    pub max_cached_file_bytes: u64,
    /// Read cache misses with O_DIRECT so they cost a real disk read.
    pub direct_io: bool,
    /// Helper threads for path translation and disk reads.
    pub disk_threads: usize,
    /// Helper threads for computing dynamic views.
    pub cpu_threads: usize,
    /// Entries in the path-translation cache (each holds an open file descriptor).
    pub path_cache_entries: u64,
    /// How long a path translation (stat result) is trusted before it is checked again.
    pub stat_ttl: Duration,
    /// Serve files reached through symlinks that point outside the docroot.
    pub follow_outside_symlinks: bool,
    /// The file served for a directory URL.
    pub index_file: String,
    pub limits: Limits,
    /// Largest request body accepted (413 beyond): discarded, or on a caching node passed
    /// to the origin as it arrives for every method but GET and HEAD.
    pub max_body_bytes: u64,
    pub max_connections: usize,
    /// Time allowed from the first byte of a request to the end of its head (and body), so
    /// a client that trickles bytes cannot hold a connection slot forever; a body passed
    /// to an origin gets this long for each piece instead (it may be large).
    pub header_timeout: Duration,
    /// How long an idle keep-alive connection is kept.
    pub idle_timeout: Duration,
    /// How long a write may wait for a client that does not read.
    pub send_timeout: Duration,
    /// After an error answer, how long to keep reading (and dropping) client input so the
    /// answer is not destroyed by a reset (lingering close).
    pub linger_timeout: Duration,
    /// How long shutdown waits for in-flight requests.
    pub shutdown_grace: Duration,
    /// Listen backlog applied to the listener.
    pub backlog: i32,
    /// Path of the JSON load report; `None` turns it off.
    pub load_path: Option<String>,
    /// How long a router that polled the load report (naming itself, [`wire::PollerId`])
    /// still counts in the report's `routers`: a few of the routers' poll periods.
    pub routers_window: Duration,
    /// Most router ids kept for that count (older ones go first).
    pub max_routers: usize,
    /// Path of the Prometheus metrics; `None` turns it off.
    pub metrics_path: Option<String>,
    /// The synthetic dynamic route; `None` turns it off.
    pub dynamic: Option<DynamicConfig>,
    /// Combined Log Format access log; `None` turns it off.
    pub access_log: Option<PathBuf>,
    /// Serve from origins instead of the docroot (`--origin`); `None` serves files.
    pub origin: Option<OriginConfig>,
    /// Adopt client connections a router on this host hands over (`--handoff-socket`);
    /// `None` takes none.
    pub handoff: Option<HandoffConfig>,
}

impl Config {
    pub fn new(docroot: impl Into<PathBuf>) -> Config {
        Config {
            docroot: docroot.into(),
            cache_bytes: 64 << 20,
            max_cached_file_bytes: 1 << 20,
            direct_io: false,
            disk_threads: 4,
            cpu_threads: 1,
            path_cache_entries: 4096,
            stat_ttl: Duration::from_secs(2),
            follow_outside_symlinks: false,
            index_file: "index.html".into(),
            limits: Limits::default(),
            max_body_bytes: 64 * 1024,
            max_connections: 10_240,
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            send_timeout: Duration::from_secs(60),
            linger_timeout: Duration::from_secs(2),
            shutdown_grace: Duration::from_secs(30),
            backlog: 4096,
            load_path: Some(wire::LOAD_REPORT_PATH.into()),
            routers_window: Duration::from_secs(10),
            max_routers: 1024,
            metrics_path: Some("/.larder/metrics".into()),
            dynamic: Some(DynamicConfig::default()),
            access_log: None,
            origin: None,
            handoff: None,
        }
    }

    /// Refuse settings that cannot work, before any socket is served.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let positive = [
            ("max_connections", self.max_connections as u64),
            ("path_cache_entries", self.path_cache_entries),
            ("max_header_bytes", self.limits.max_header_bytes as u64),
            ("max_headers", self.limits.max_headers as u64),
            ("max_uri_len", self.limits.max_uri_len as u64),
            ("max_routers", self.max_routers as u64),
            ("routers_window", self.routers_window.as_millis() as u64),
        ];
        if let Some((name, _)) = positive.iter().find(|(_, v)| *v == 0) {
            return Err(ConfigError::Zero(name));
        }
        if self.max_connections > u32::MAX as usize / 2 {
            return Err(ConfigError::TooManyConnections);
        }
        for d in [self.header_timeout, self.idle_timeout, self.send_timeout] {
            if d.is_zero() {
                return Err(ConfigError::Zero("timeout"));
            }
        }
        for p in [&self.load_path, &self.metrics_path].into_iter().flatten() {
            if !p.starts_with('/') {
                return Err(ConfigError::ReportPath(p.clone()));
            }
        }
        if self.dynamic.as_ref().is_some_and(|d| d.mount.is_empty() || d.mount.contains('/')) {
            return Err(ConfigError::Mount);
        }
        if let Some(h) = &self.handoff {
            if h.max_connections == 0 || h.max_message_bytes == 0 || h.timeout.is_zero() {
                return Err(ConfigError::Zero(
                    "handoff max connections, message bytes and timeout",
                ));
            }
            if h.forward.max_connections_per_node == 0 || h.forward.timeout.is_zero() {
                return Err(ConfigError::Zero("forward max connections and timeout"));
            }
        }
        if let Some(o) = &self.origin {
            if o.origins.is_empty() {
                return Err(ConfigError::NoOrigin);
            }
            if o.timeout.is_zero() {
                return Err(ConfigError::Zero("origin timeout"));
            }
            if o.peer_timeout.is_zero() {
                return Err(ConfigError::Zero("peer timeout"));
            }
            if o.max_head_bytes == 0 || o.max_head_fields == 0 {
                return Err(ConfigError::Zero("origin max_head_bytes and max_head_fields"));
            }
            // A caching node needs no docroot.
            return Ok(());
        }
        if !self.docroot.is_dir() {
            return Err(ConfigError::Docroot(self.docroot.clone()));
        }
        Ok(())
    }
}

/// A configuration that cannot be served.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("{0} must be greater than zero")]
    Zero(&'static str),
    #[error("max_connections is too large")]
    TooManyConnections,
    #[error("report path {0:?} must start with /")]
    ReportPath(String),
    #[error("the dynamic mount must be one non-empty path segment")]
    Mount,
    #[error("origin mode needs at least one origin")]
    NoOrigin,
    #[error("docroot {0} is not a directory")]
    Docroot(PathBuf),
}

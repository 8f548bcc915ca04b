//! The router's configuration: one TOML file (`examples/router.toml` explains every key),
//! or the same structure filled from command-line flags.
//!
//! Every limit and timeout has a safe default, so a file needs only `[[nodes]]`.

use std::net::SocketAddr;
use std::time::Duration;

use policy::mapper::{ClassRule, PathMatch, ViewRule};
use policy::{ClassId, LoadWeights, MapperConfig, NodeId, PolicyKind, PolicySpec, SECOND};
use serde::{Deserialize, Serialize};

pub use crate::discovery::config::{DiscoveryConfig, DnsKind, DnsName};
pub use crate::node_addr::NodeAddr;
use crate::RouterError;
use http1::ChunkLimits;

/// Everything the router needs to run; reloadable except the listen addresses.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RouterConfig {
    /// Traffic listener (used by `larder route`; `serve` takes a bound listener).
    pub listen: SocketAddr,
    /// The traffic listener's accept queue (used by `larder route`): a burst of connects
    /// beyond it waits for a SYN retransmit (a second or more). The node's default, and
    /// the kernel's usual `somaxconn`, which caps it.
    pub backlog: u32,
    /// Worker threads; 0 means one per core.
    pub threads: usize,
    /// Add `X-Larder-Node: <node name>` to every response.
    pub node_header: bool,
    /// Add `X-Larder-Router: <name>` to every response, so a client behind several
    /// routers on one address sees which one served it.
    pub router_header: bool,
    /// This router's name in `X-Larder-Router`; empty means `router-<pid>`.
    pub name: String,
    /// Bind the traffic listener with SO_REUSEPORT, so several router processes share
    /// one address and the kernel spreads connections among them (used by `larder route`).
    pub reuseport: bool,
    /// Write requests to nodes and responses to clients after reading everything that is
    /// ready in the same turn of the event loop, so that each peer wakes once for a batch
    /// rather than once per request; off writes each as soon as it is read (one poll of
    /// the event loop less per request when idle, at more wake-ups under load).
    pub write_batching: bool,
    /// Token sent in `Via` (`1.1 <via>`).
    pub via: String,
    /// Combined Log Format access log: a path, `-` for stdout, empty for none.
    pub access_log: String,
    pub nodes: Vec<NodeConfig>,
    pub policy: PolicyConfig,
    pub mapping: MappingConfig,
    pub admin: AdminConfig,
    pub load: LoadConfig,
    pub health: HealthConfig,
    pub limits: Limits,
    pub timeouts: Timeouts,
    /// Nodes found through DNS, merged with `nodes`.
    pub discovery: DiscoveryConfig,
    pub tls: TlsConfig,
    pub node_tls: NodeTlsConfig,
}

impl Default for RouterConfig {
    fn default() -> Self {
        RouterConfig {
            listen: SocketAddr::from(([0, 0, 0, 0], 8080)),
            backlog: 4096,
            threads: 0,
            node_header: false,
            router_header: false,
            name: String::new(),
            reuseport: false,
            write_batching: true,
            via: "larder".to_string(),
            access_log: String::new(),
            nodes: Vec::new(),
            policy: PolicyConfig::default(),
            mapping: MappingConfig::default(),
            admin: AdminConfig::default(),
            load: LoadConfig::default(),
            health: HealthConfig::default(),
            limits: Limits::default(),
            timeouts: Timeouts::default(),
            discovery: DiscoveryConfig::default(),
            tls: TlsConfig::default(),
            node_tls: NodeTlsConfig::default(),
        }
    }
}

/// TLS termination: a listener of its own beside the plain one, with certificates from PEM
/// files (re-read on every reload, so a renewed certificate is served after SIGHUP).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct TlsConfig {
    /// TLS listener address (used by `larder route`); empty means no TLS listener.
    pub listen: String,
    /// PEM certificate chain, leaf first: served to clients that name no host, or a host
    /// no `[[tls.sni]]` entry lists.
    pub cert: String,
    /// PEM private key of `cert` (PKCS#8, PKCS#1 or SEC1).
    pub key: String,
    /// More certificates, each served to clients asking for one of its names (SNI).
    pub sni: Vec<SniCertificate>,
}

/// A certificate served by name.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SniCertificate {
    /// Host names (case-insensitive, exact) this certificate is for.
    pub names: Vec<String>,
    pub cert: String,
    pub key: String,
}

/// TLS to nodes: the certificate authorities a node's certificate is checked against,
/// for nodes given as `https://HOST:PORT`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct NodeTlsConfig {
    /// PEM file of CA certificates (re-read on every reload); needed when any node is
    /// `https://`.
    pub ca: String,
}

/// One back-end node. In a file, `addr` is `HOST:PORT`, or `https://HOST:PORT` for a node
/// that speaks TLS ([`NodeAddr`]).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(try_from = "NodeEntry", into = "NodeEntry")]
pub struct NodeConfig {
    pub addr: SocketAddr,
    /// For a node that speaks TLS: the name its certificate must be valid for, also sent
    /// as SNI; `None` for plain HTTP.
    pub server_name: Option<String>,
    /// Shown in `X-Larder-Node`, `/stats` and the access log; defaults to the address.
    pub name: String,
    /// Relative capacity; 0 drains the node (no new work).
    pub weight: u32,
    /// Poll this node's `/.larder/load` (larder nodes offer it; nginx does not).
    pub load_report: bool,
}

/// A node as a config file writes it.
#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct NodeEntry {
    addr: String,
    /// The name a TLS node's certificate is checked against, when it is not the host of
    /// `addr` (an address given as an IP, a certificate issued for a name).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    server_name: String,
    #[serde(default)]
    name: String,
    #[serde(default = "one")]
    weight: u32,
    #[serde(default)]
    load_report: bool,
}

impl TryFrom<NodeEntry> for NodeConfig {
    type Error = RouterError;

    fn try_from(e: NodeEntry) -> Result<NodeConfig, RouterError> {
        let NodeAddr { addr, mut server_name } = e.addr.parse()?;
        if !e.server_name.is_empty() {
            if server_name.is_none() {
                return Err(RouterError::Config(format!(
                    "node {}: server_name is for https:// nodes",
                    e.addr
                )));
            }
            server_name = Some(e.server_name);
        }
        Ok(NodeConfig {
            addr,
            server_name,
            name: e.name,
            weight: e.weight,
            load_report: e.load_report,
        })
    }
}

impl From<NodeConfig> for NodeEntry {
    fn from(n: NodeConfig) -> NodeEntry {
        let at = NodeAddr { addr: n.addr, server_name: n.server_name.clone() };
        // The address form names the IP; a name other than the IP goes beside it.
        let server_name =
            n.server_name.filter(|s| *s != n.addr.ip().to_string()).unwrap_or_default();
        NodeEntry {
            addr: at.to_string(),
            server_name,
            name: n.name,
            weight: n.weight,
            load_report: n.load_report,
        }
    }
}

fn one() -> u32 {
    1
}

impl NodeConfig {
    pub fn new(addr: SocketAddr) -> Self {
        Self::at(NodeAddr::plain(addr))
    }

    /// A node at `at`, plain or TLS, with the defaults.
    pub fn at(at: NodeAddr) -> Self {
        let NodeAddr { addr, server_name } = at;
        NodeConfig { addr, server_name, name: String::new(), weight: 1, load_report: false }
    }

    /// The node's address as written: `HOST:PORT` or `https://…`.
    pub fn address(&self) -> NodeAddr {
        NodeAddr { addr: self.addr, server_name: self.server_name.clone() }
    }

    /// The node's display name.
    pub fn display_name(&self) -> String {
        if self.name.is_empty() {
            self.addr.to_string()
        } else {
            self.name.clone()
        }
    }
}

/// The policy and its parameters (see `policy::PolicySpec` for their meaning).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct PolicyConfig {
    pub kind: String,
    pub t_low: f64,
    pub t_high: f64,
    pub balance_factor: f64,
    pub table_cap: usize,
    pub shrink_after_ms: u64,
    /// `hacc`: a subtree splits above this times its node's fair share of the requests.
    pub hacc_split: f64,
    /// `hacc`: a split subtree merges back below this times its node's fair share.
    pub hacc_merge: f64,
    /// `hacc`: a node above this times its fair share hands subtrees to others.
    pub hacc_balance: f64,
    /// `hacc`: the deepest subtree level placed on its own (0: the root).
    pub hacc_max_depth: usize,
    /// `hacc`: requests are counted over a window that halves in this many ms.
    pub hacc_half_life_ms: u64,
    pub classes: Vec<ClassPoolConfig>,
    /// `lard`, `lard-r`, `hacc`: `shared` (every router places a target alike, from the
    /// nodes' names and their reports of what they hold) or `per-router` (each router's
    /// own table, least loaded first: the papers' single front-end).
    pub placement: String,
    /// The longest warm-up of a node that joins or restarts (it takes its share of
    /// targets as its hit ratio catches up with the others', and fully at this uptime);
    /// 0 turns warm-up off.
    pub warmup_max_ms: u64,
    /// `lard-r`: a target taking at least this share (0–1) of the router's recent
    /// requests gets replicas on its next candidates, the same nodes on every router;
    /// 0 turns heat replicas off.
    pub hot_share: f64,
    /// `lard-r`: and at least this many requests a second at this router.
    pub hot_min_rps: f64,
    /// `lard-r`: a hot target whose share stays below half of `hot_share` this long
    /// loses its replicas.
    pub hot_cool_ms: u64,
}

impl Default for PolicyConfig {
    fn default() -> Self {
        let spec = PolicySpec::new(PolicyKind::Rr);
        PolicyConfig {
            kind: "rr".to_string(),
            t_low: spec.t_low,
            t_high: spec.t_high,
            balance_factor: spec.balance_factor,
            table_cap: spec.table_cap,
            shrink_after_ms: spec.shrink_after / (SECOND / 1000),
            hacc_split: spec.hacc_split,
            hacc_merge: spec.hacc_merge,
            hacc_balance: spec.hacc_balance,
            hacc_max_depth: spec.hacc_max_depth,
            hacc_half_life_ms: spec.hacc_half_life / (SECOND / 1000),
            classes: Vec::new(),
            placement: spec.placement.name().to_string(),
            warmup_max_ms: spec.warmup_max / (SECOND / 1000),
            hot_share: spec.heat.share,
            hot_min_rps: spec.heat.min_rate,
            hot_cool_ms: spec.heat.cool_after / (SECOND / 1000),
        }
    }
}

/// A pool of nodes (by name or address) for one content class (policy `class`).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ClassPoolConfig {
    pub class: u8,
    pub nodes: Vec<String>,
    #[serde(default = "rr")]
    pub inner: String,
}

fn rr() -> String {
    "rr".to_string()
}

/// URL → target mapping (see `policy::mapper` for the rule).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct MappingConfig {
    /// The query is part of a target's key (off: a static file ignores its query).
    pub query_in_key: bool,
    /// Directory levels of a fixed tree (HACC assigns subtrees); absent: HACC's subtrees
    /// split and merge by load.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tree_depth: Option<usize>,
    /// Rules keying dynamic URLs by their view; absent means the mapper's defaults
    /// (Domino `*.nsf` and larder node's `/app`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub views: Option<Vec<RuleConfig>>,
    /// Rules giving paths a content class; absent means the mapper's defaults.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub classes: Option<Vec<RuleConfig>>,
}

impl Default for MappingConfig {
    fn default() -> Self {
        let m = MapperConfig::default();
        MappingConfig {
            query_in_key: m.query_in_key,
            tree_depth: m.tree_depth,
            views: None,
            classes: None,
        }
    }
}

/// One mapping rule: exactly one of `prefix` or `extension`, with `levels` (views) or
/// `class` (classes).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RuleConfig {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extension: Option<String>,
    #[serde(default)]
    pub levels: usize,
    #[serde(default)]
    pub class: u8,
}

impl RuleConfig {
    fn matcher(&self) -> Result<PathMatch, RouterError> {
        match (&self.prefix, &self.extension) {
            (Some(p), None) => Ok(PathMatch::Prefix(p.clone())),
            (None, Some(e)) => Ok(PathMatch::Extension(e.clone())),
            _ => Err(RouterError::Config(
                "a mapping rule needs exactly one of `prefix` or `extension`".to_string(),
            )),
        }
    }
}

/// The admin listener (`/stats`, `/metrics`, `/targets`).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct AdminConfig {
    /// Empty disables the admin listener.
    pub listen: String,
}

impl Default for AdminConfig {
    fn default() -> Self {
        AdminConfig { listen: "127.0.0.1:9090".to_string() }
    }
}

/// The load monitor: HACC polled every node's load every 200 ms.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct LoadConfig {
    pub poll_ms: u64,
    pub path: String,
    /// Weight of requests in flight (observed by the router itself).
    pub w_in_flight: f64,
    /// Weight of the reported CPU percentage.
    pub w_cpu: f64,
    /// Weight of the reported disk percentage.
    pub w_disk: f64,
    /// For nodes that report a disk read rate rather than a percentage: the rate that
    /// counts as 100%.
    pub disk_full_mb_per_sec: f64,
}

impl Default for LoadConfig {
    fn default() -> Self {
        let w = LoadWeights::default();
        LoadConfig {
            poll_ms: 200,
            path: wire::LOAD_REPORT_PATH.to_string(),
            w_in_flight: w.in_flight,
            w_cpu: w.cpu,
            w_disk: w.disk,
            disk_full_mb_per_sec: 100.0,
        }
    }
}

impl LoadConfig {
    pub fn weights(&self) -> LoadWeights {
        LoadWeights { in_flight: self.w_in_flight, cpu: self.w_cpu, disk: self.w_disk }
    }
}

/// Active checks, passive ejection and slow start.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct HealthConfig {
    /// Path probed with GET; empty disables active checks (then an ejected node is tried
    /// again after `eject_ms`).
    pub path: String,
    pub interval_ms: u64,
    pub timeout_ms: u64,
    /// Consecutive good checks that bring a down node back.
    pub rise: u32,
    /// Consecutive failures (checks or requests) that take a node down. A refused or
    /// timed-out connect takes it down at once.
    pub fall: u32,
    /// Without active checks, how long an ejected node stays out. A node taken out for
    /// refusing connects is back as soon as its load report answers again.
    pub eject_ms: u64,
    /// A node that comes back ramps its weight from 1% to 100% over this long. Not with
    /// `lard`, `lard-r` and `hacc` under shared placement, whose hit-ratio warm-up gives a
    /// node that reports its load its share as its cache fills.
    pub slow_start_ms: u64,
}

impl Default for HealthConfig {
    fn default() -> Self {
        HealthConfig {
            path: String::new(),
            interval_ms: 1000,
            timeout_ms: 1000,
            rise: 2,
            fall: 3,
            eject_ms: 5000,
            slow_start_ms: 10_000,
        }
    }
}

/// Size limits; every one is enforced with a clear status, never a panic.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Request or response head, request line included (431 / 502 beyond it).
    pub max_header_bytes: usize,
    pub max_headers: usize,
    /// 414 beyond it.
    pub max_uri_bytes: usize,
    /// Client connections open at once; more wait in the kernel's accept queue.
    pub max_connections: usize,
    /// Idle pooled upstream connections kept per node.
    pub pool_idle_per_node: usize,
    /// Request body size: a larger `Content-Length` is refused with 413 before anything
    /// is forwarded, and a chunked body is cut off (413) as it streams past it. 0 means
    /// unlimited (bodies stream, so memory stays bounded either way).
    pub max_body_bytes: u64,
    pub max_chunk_line_bytes: usize,
    pub max_trailer_bytes: usize,
    /// Relay buffer per direction, taken while a request is in progress.
    pub buffer_bytes: usize,
    /// Relay buffers kept for reuse once given back (process-wide): a busy client's next
    /// request takes one instead of allocating. As many splice pipes are kept likewise.
    pub spare_buffers: usize,
    /// A request or response body of known length with at least this many bytes beyond
    /// what came with its head moves socket to socket by splice(2) on Linux when both
    /// ends are plain TCP (chunked, close-delimited and TLS bodies are copied); 0 turns
    /// splicing off. Below the default, the extra system calls cost more than the copy
    /// saves.
    pub splice_min_bytes: u64,
    /// The capacity of each splice pipe: a spliced body moves in steps of at most this
    /// many bytes, each step a wake-up of the router and of the receiver, so a larger
    /// pipe means fewer of them. Pipe memory is taken only for bytes in flight; the
    /// kernel rounds up to whole pages and caps it (`fs.pipe-max-size`, 1 MiB by
    /// default); where it refuses, pipes keep their default 64 KiB.
    pub splice_pipe_bytes: usize,
    /// Hot-target table size for `/targets`.
    pub hot_targets: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_header_bytes: 16 * 1024,
            max_headers: 100,
            max_uri_bytes: 8 * 1024,
            max_connections: 10_000,
            pool_idle_per_node: 128,
            // nginx's default `client_max_body_size`: uploads are not what larder serves.
            max_body_bytes: 1 << 20,
            max_chunk_line_bytes: 4096,
            max_trailer_bytes: 16 * 1024,
            buffer_bytes: 32 * 1024,
            spare_buffers: 64,
            splice_min_bytes: 64 * 1024,
            splice_pipe_bytes: 1 << 20,
            hot_targets: 4096,
        }
    }
}

impl Limits {
    pub fn chunk_limits(&self) -> ChunkLimits {
        ChunkLimits { max_line: self.max_chunk_line_bytes, max_trailer: self.max_trailer_bytes }
    }
}

/// Timeouts, in milliseconds.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Timeouts {
    /// From a request's first byte to the end of its head (408 beyond it).
    pub header_ms: u64,
    /// A keep-alive client connection with no request in progress.
    pub idle_ms: u64,
    pub upstream_connect_ms: u64,
    /// From the end of the request to the response head.
    pub upstream_response_ms: u64,
    /// Longest pause while relaying a body in either direction.
    pub body_ms: u64,
    /// A pooled upstream connection idle longer than this is closed, not reused.
    pub pool_idle_ms: u64,
    /// On SIGTERM, how long in-flight requests get to finish.
    pub drain_ms: u64,
    /// After refusing a request whose body is still coming (or relaying a node's early
    /// answer to one), how long the router reads and drops the rest before it closes, so
    /// the client reads the answer instead of a reset; 0 closes at once.
    pub linger_ms: u64,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            header_ms: 10_000,
            idle_ms: 60_000,
            upstream_connect_ms: 2_000,
            upstream_response_ms: 30_000,
            body_ms: 60_000,
            pool_idle_ms: 4_000,
            drain_ms: 30_000,
            linger_ms: 2_000,
        }
    }
}

pub(crate) fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}

impl RouterConfig {
    /// Parse a TOML document and check it.
    pub fn from_toml(text: &str) -> Result<RouterConfig, RouterError> {
        let config: RouterConfig =
            toml::from_str(text).map_err(|e| RouterError::Config(e.to_string()))?;
        config.validate()?;
        Ok(config)
    }

    /// The config as TOML that [`RouterConfig::from_toml`] reads back (for a router
    /// started by another process with a config it built).
    pub fn to_toml(&self) -> Result<String, RouterError> {
        toml::to_string(self).map_err(|e| RouterError::Config(e.to_string()))
    }

    /// Read and parse a TOML file.
    pub fn load(path: &std::path::Path) -> Result<RouterConfig, RouterError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| RouterError::Config(format!("{}: {e}", path.display())))?;
        Self::from_toml(&text)
    }

    /// The policy spec this config describes. Class pools name nodes by name or address;
    /// `ids[i]` is the router's id of `nodes[i]` (ids follow addresses across reloads).
    pub fn policy_spec(&self, ids: &[NodeId]) -> Result<PolicySpec, RouterError> {
        let p = &self.policy;
        let kind: PolicyKind = p.kind.parse().map_err(|e| RouterError::Config(format!("{e}")))?;
        let mut spec = PolicySpec::new(kind);
        spec.t_low = p.t_low;
        spec.t_high = p.t_high;
        spec.balance_factor = p.balance_factor;
        spec.table_cap = p.table_cap;
        spec.shrink_after = p.shrink_after_ms.saturating_mul(SECOND / 1000);
        spec.hacc_split = p.hacc_split;
        spec.hacc_merge = p.hacc_merge;
        spec.hacc_balance = p.hacc_balance;
        spec.hacc_max_depth = p.hacc_max_depth;
        spec.hacc_half_life = p.hacc_half_life_ms.saturating_mul(SECOND / 1000);
        spec.placement = p.placement.parse().map_err(|e| RouterError::Config(format!("{e}")))?;
        spec.warmup_max = p.warmup_max_ms.saturating_mul(SECOND / 1000);
        spec.heat = policy::heat::HeatConfig {
            share: p.hot_share,
            min_rate: p.hot_min_rps,
            cool_after: p.hot_cool_ms.saturating_mul(SECOND / 1000),
        };
        for pool in &p.classes {
            let inner = pool.inner.parse().map_err(|e| RouterError::Config(format!("{e}")))?;
            let nodes =
                pool.nodes.iter().map(|n| self.node_named(n, ids)).collect::<Result<_, _>>()?;
            spec.classes.push(policy::spec::ClassPool { class: ClassId(pool.class), nodes, inner });
        }
        spec.validate().map_err(|e| RouterError::Config(e.to_string()))?;
        Ok(spec)
    }

    /// The id of the node named `name` (its name or address).
    fn node_named(&self, name: &str, ids: &[NodeId]) -> Result<NodeId, RouterError> {
        self.nodes
            .iter()
            .position(|n| n.display_name() == name || n.addr.to_string() == name)
            .and_then(|i| ids.get(i).copied())
            .ok_or_else(|| RouterError::Config(format!("class pool names unknown node `{name}`")))
    }

    /// The mapper's configuration; URIs are bounded by `limits.max_uri_bytes`.
    pub fn mapper_config(&self) -> Result<MapperConfig, RouterError> {
        let m = &self.mapping;
        let mut c = MapperConfig {
            max_uri_len: self.limits.max_uri_bytes,
            query_in_key: m.query_in_key,
            tree_depth: m.tree_depth,
            ..MapperConfig::default()
        };
        if let Some(views) = &m.views {
            c.view_rules = views
                .iter()
                .map(|r| Ok(ViewRule { matcher: r.matcher()?, levels: r.levels }))
                .collect::<Result<_, RouterError>>()?;
        }
        if let Some(classes) = &m.classes {
            c.class_rules = classes
                .iter()
                .map(|r| Ok(ClassRule { matcher: r.matcher()?, class: ClassId(r.class) }))
                .collect::<Result<_, RouterError>>()?;
        }
        Ok(c)
    }

    /// This router's name: `name`, or `router-<pid>` when it is empty (unique among the
    /// processes of one host, which is where SO_REUSEPORT shares an address).
    pub fn router_name(&self) -> String {
        if self.name.is_empty() {
            format!("router-{}", std::process::id())
        } else {
            self.name.clone()
        }
    }

    /// Worker threads to run: `threads`, or one per core when it is 0.
    pub fn worker_threads(&self) -> usize {
        match self.threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        }
    }

    /// Ids in config order: what a fresh router assigns.
    pub fn config_order_ids(&self) -> Vec<NodeId> {
        (0..self.nodes.len()).map(|i| NodeId(i as u32)).collect()
    }

    /// Check everything that can be checked without opening a socket.
    pub fn validate(&self) -> Result<(), RouterError> {
        let bad = |m: &str| Err(RouterError::Config(m.to_string()));
        if self.nodes.is_empty() && self.discovery.dns.is_empty() {
            return bad("at least one node (or a discovery name) is needed");
        }
        self.discovery.validate()?;
        for (i, n) in self.nodes.iter().enumerate() {
            if self.nodes[..i].iter().any(|m| m.addr == n.addr) {
                return Err(RouterError::Config(format!("node {} is listed twice", n.addr)));
            }
        }
        let tls = &self.tls;
        if !tls.listen.is_empty() && (tls.cert.is_empty() || tls.key.is_empty()) {
            return bad("tls: a TLS listener needs cert and key");
        }
        if tls.cert.is_empty() != tls.key.is_empty() || (tls.cert.is_empty() && !tls.sni.is_empty())
        {
            return bad("tls: cert and key go together, and SNI certificates need a default one");
        }
        if let Some(n) = self.nodes.iter().find(|n| n.server_name.is_some()) {
            if self.node_tls.ca.is_empty() {
                return Err(RouterError::Config(format!(
                    "node {}: a TLS node needs a CA file to check its certificate \
                     (--node-ca, or ca in [node_tls])",
                    n.address()
                )));
            }
        }
        if self.backlog == 0 || self.backlog > 65_535 {
            return bad("backlog: 1..=65535");
        }
        if self.name.len() > 64 || !self.name.bytes().all(|b| b.is_ascii_graphic()) {
            return bad("name: at most 64 visible ASCII characters (it is a header value)");
        }
        self.policy_spec(&self.config_order_ids())?;
        self.mapper_config()?;
        let l = &self.limits;
        if l.max_header_bytes < 64 || l.max_headers == 0 || l.max_uri_bytes == 0 {
            return bad("limits: max_header_bytes >= 64, max_headers and max_uri_bytes >= 1");
        }
        if l.max_connections == 0
            || l.max_connections > 1_000_000
            || l.buffer_bytes < 1024
            || l.max_chunk_line_bytes < 3
            || !(4096..=1 << 30).contains(&l.splice_pipe_bytes)
        {
            return bad("limits: max_connections in 1..=1000000, buffer_bytes >= 1024, max_chunk_line_bytes >= 3, splice_pipe_bytes in 4096..=1073741824");
        }
        let t = &self.timeouts;
        if [t.header_ms, t.idle_ms, t.upstream_connect_ms, t.upstream_response_ms, t.body_ms]
            .contains(&0)
        {
            return bad("timeouts must be above 0 ms");
        }
        let h = &self.health;
        if h.rise == 0 || h.fall == 0 || h.interval_ms == 0 || h.timeout_ms == 0 {
            return bad("health: rise, fall, interval_ms and timeout_ms must be above 0");
        }
        if self.load.poll_ms == 0 {
            return bad("load.poll_ms must be above 0");
        }
        let w = self.load.weights();
        if [w.in_flight, w.cpu, w.disk].iter().any(|x| !x.is_finite() || *x < 0.0) {
            return bad("load weights must be finite and >= 0");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The router configuration the Kubernetes ConfigMap carries reads as the router reads
    /// it, and finds its nodes through the headless Service's SRV records.
    #[test]
    fn the_kubernetes_config_map_holds_a_valid_config() {
        let manifest = include_str!("../../../deploy/kubernetes/configmap.yaml");
        let (_, block) = manifest.split_once("router.toml: |\n").expect("a router.toml key");
        let text: String =
            block.lines().map(|l| format!("{}\n", l.strip_prefix("    ").unwrap_or(l))).collect();
        let c = RouterConfig::from_toml(&text).unwrap();
        c.validate().unwrap();
        assert_eq!(c.policy.kind, "lard-r");
        assert_eq!(c.admin.listen, "0.0.0.0:9090");
        assert_eq!(c.discovery.dns.len(), 1);
        assert_eq!(c.discovery.dns[0].name, "_http._tcp.larder-node.larder.svc.cluster.local");
    }

    #[test]
    fn the_example_config_parses() {
        let text = include_str!("../../../examples/router.toml");
        let c = RouterConfig::from_toml(text).unwrap();
        assert_eq!(c.nodes.len(), 3);
        assert_eq!(c.policy_spec(&c.config_order_ids()).unwrap().kind, PolicyKind::Lard);
    }

    #[test]
    fn the_example_discovery_names_parse_when_uncommented() {
        let text = include_str!("../../../examples/router.toml");
        let (head, discovery) = text.split_once("\n[discovery]\n").unwrap();
        let uncommented: String = discovery
            .lines()
            .map(|l| match l.strip_prefix("# ") {
                Some(rest) if rest.starts_with('[') || rest.contains(" = ") => rest,
                _ => l,
            })
            .map(|l| format!("{l}\n"))
            .collect();
        let c = RouterConfig::from_toml(&format!("{head}\n[discovery]\n{uncommented}")).unwrap();
        assert_eq!(c.discovery.dns.len(), 2);
        assert_eq!((c.discovery.dns[0].port, c.discovery.dns[1].kind), (8081, DnsKind::Srv));
        assert_eq!(c.discovery.refresh_ms, DiscoveryConfig::default().refresh_ms);
        assert_eq!(RouterConfig::from_toml(&c.to_toml().unwrap()).unwrap(), c);
    }

    #[test]
    fn a_config_written_as_toml_reads_back_the_same() {
        let text = include_str!("../../../examples/router.toml");
        let c = RouterConfig::from_toml(text).unwrap();
        assert_eq!(RouterConfig::from_toml(&c.to_toml().unwrap()).unwrap(), c);
    }

    #[test]
    fn router_name_header_and_reuseport_read_back() {
        let text = "name = \"r2\"\nrouter_header = true\nreuseport = true\n\
                    [[nodes]]\naddr = \"127.0.0.1:1\"\n";
        let c = RouterConfig::from_toml(text).unwrap();
        assert_eq!((c.name.as_str(), c.router_header, c.reuseport), ("r2", true, true));
        assert_eq!(c.router_name(), "r2");
        assert_eq!(RouterConfig::from_toml(&c.to_toml().unwrap()).unwrap(), c);
        let unnamed = RouterConfig::from_toml("[[nodes]]\naddr = \"127.0.0.1:1\"\n").unwrap();
        assert!(!unnamed.router_header && !unnamed.reuseport);
        assert_eq!(unnamed.router_name(), format!("router-{}", std::process::id()));
    }

    #[test]
    fn a_minimal_config_takes_defaults() {
        let c = RouterConfig::from_toml("[[nodes]]\naddr = \"127.0.0.1:1\"\n").unwrap();
        assert_eq!(c.limits, Limits::default());
        assert_eq!(c.nodes[0].weight, 1);
        assert_eq!(c.load.poll_ms, 200);
    }

    #[test]
    fn tls_nodes_read_back_with_their_names() {
        let text = "[node_tls]\nca = \"ca.pem\"\n\
                    [[nodes]]\naddr = \"https://127.0.0.1:8443\"\n\
                    [[nodes]]\naddr = \"https://127.0.0.2:8443\"\nserver_name = \"n2.internal\"\n\
                    [[nodes]]\naddr = \"127.0.0.3:8080\"\n";
        let c = RouterConfig::from_toml(text).unwrap();
        let names: Vec<_> = c.nodes.iter().map(|n| n.server_name.as_deref()).collect();
        assert_eq!(names, [Some("127.0.0.1"), Some("n2.internal"), None]);
        assert_eq!(c.nodes[1].address().to_string(), "https://127.0.0.2:8443");
        assert_eq!(RouterConfig::from_toml(&c.to_toml().unwrap()).unwrap(), c);
    }

    #[test]
    fn bad_configs_say_why() {
        for (text, want) in [
            ("", "at least one node"),
            ("[[nodes]]\naddr = \"nonsense\"\n", "invalid"),
            ("bogus = 1\n[[nodes]]\naddr = \"127.0.0.1:1\"\n", "unknown field"),
            ("[policy]\nkind = \"zz\"\n[[nodes]]\naddr = \"127.0.0.1:1\"\n", "unknown policy"),
            ("[timeouts]\nidle_ms = 0\n[[nodes]]\naddr = \"127.0.0.1:1\"\n", "above 0"),
            ("[[nodes]]\naddr = \"127.0.0.1:1\"\n[[nodes]]\naddr = \"127.0.0.1:1\"\n", "twice"),
            ("name = \"a b\"\n[[nodes]]\naddr = \"127.0.0.1:1\"\n", "name"),
            ("[[nodes]]\naddr = \"https://127.0.0.1:1\"\n", "needs a CA file"),
            ("[[nodes]]\naddr = \"127.0.0.1:1\"\nserver_name = \"a\"\n", "https://"),
        ] {
            let err = RouterConfig::from_toml(text).unwrap_err().to_string();
            assert!(err.contains(want), "{text:?}: {err}");
        }
    }
}

//! The router's configuration: one TOML file (`examples/router.toml` explains every key),
//! or the same structure filled from command-line flags.
//!
//! Every limit and timeout has a safe default, so a file needs only `[[nodes]]`.

use std::net::SocketAddr;
use std::time::Duration;

use policy::mapper::{ClassRule, PathMatch, ViewRule};
use policy::{
    ClassId, LoadWeights, MapperConfig, Nanos, NodeId, Param, PlacementMode, PolicyKind,
    PolicySpec, SpecError,
};
use serde::{Deserialize, Serialize};

pub use crate::discovery::config::{DiscoveryConfig, DnsKind, DnsName};
pub use crate::http2::config::Http2Config;
pub use crate::ip_network::IpNetwork;
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
    /// This router's name in `X-Larder-Router`, so clients of several routers on one
    /// address can tell them apart. Default is `router-<pid>`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Bind the traffic listener with SO_REUSEPORT, so several router processes share
    /// one address and the kernel spreads connections among them (used by `larder route`).
    pub reuseport: bool,
    /// Token sent in `Via` (`1.1 <via>`).
    pub via: String,
    /// Peer mode: the address (as `nodes` lists it) of the node running in this same
    /// process. A request whose `Via` already names `via` was forwarded by another peer's
    /// distributor; it is served by this node and never forwarded again, so a peer list
    /// that names a distributor instead of a node cannot make a loop. Default is none (a
    /// router of a tier of its own, which places every request).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub local_node: Option<SocketAddr>,
    /// Combined Log Format access log: a path, or `-` for stdout. Default is none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub access_log: Option<String>,
    /// After relaying a 2xx or 3xx answer to an unsafe request (POST, PUT, DELETE, …), tell
    /// every other node to drop what it stores for the target (`POST
    /// /.larder/invalidate?target=…`, RFC 9111 §4.4 across caching nodes), so no node
    /// serves the old object. Off for back-ends that cache nothing (they would answer
    /// each such request 404 or 405). Default is on.
    pub invalidate_nodes: bool,
    /// On a request the policy sends to a replica of a target (lard-r's server set beyond
    /// its first node), name that first node to the replica (`X-Larder-Peer`), so a
    /// caching node that misses fills from the node holding or filling the target before
    /// the origin. For caching nodes told each other's addresses (`larder node --peer`);
    /// other back-ends ignore the field. Default is off.
    pub peer_fill: bool,
    /// The networks whose clients may send `PURGE` on the traffic listener (others get
    /// 403): a purge empties caches, so not every client may. Default is loopback
    /// (`127.0.0.0/8`, `::1/128`). The admin listener's `/purge` is guarded by where that
    /// listener is bound instead.
    pub purge_from: Vec<IpNetwork>,
    pub nodes: Vec<NodeConfig>,
    pub policy: PolicyConfig,
    pub mapping: MappingConfig,
    pub admin: AdminConfig,
    pub load: LoadConfig,
    pub health: HealthConfig,
    pub limits: Limits,
    pub timeouts: Timeouts,
    pub tuning: Tuning,
    /// Nodes found through DNS, merged with `nodes`.
    pub discovery: DiscoveryConfig,
    pub tls: TlsConfig,
    pub node_tls: NodeTlsConfig,
    /// HTTP/2 for clients and its limits.
    pub http2: Http2Config,
    /// Passing plain HTTP/1.1 client connections to nodes on this host.
    pub handoff: HandoffConfig,
}

impl Default for RouterConfig {
    fn default() -> Self {
        RouterConfig {
            listen: SocketAddr::from(([0, 0, 0, 0], 8080)),
            backlog: 4096,
            threads: 0,
            node_header: false,
            router_header: false,
            name: None,
            reuseport: false,
            via: "larder".to_string(),
            local_node: None,
            access_log: None,
            invalidate_nodes: true,
            peer_fill: false,
            purge_from: IpNetwork::loopback(),
            nodes: Vec::new(),
            policy: PolicyConfig::default(),
            mapping: MappingConfig::default(),
            admin: AdminConfig::default(),
            load: LoadConfig::default(),
            health: HealthConfig::default(),
            limits: Limits::default(),
            timeouts: Timeouts::default(),
            tuning: Tuning::default(),
            discovery: DiscoveryConfig::default(),
            tls: TlsConfig::default(),
            node_tls: NodeTlsConfig::default(),
            http2: Http2Config::default(),
            handoff: HandoffConfig::default(),
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

/// The policy and its parameters (see `policy::PolicySpec` for their meaning): those
/// several policies read at `[policy]`, those of one policy alone in that policy's own
/// table (`[policy.bounded]`, `[policy.lard_r]`, `[policy.hacc]`, `[policy.class]`), so a
/// file says which policy a number is for.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct PolicyConfig {
    /// Which policy spreads requests over the nodes. Default is `rr`.
    pub kind: PolicyKind,
    /// `lard`, `lard-r`, `hacc`: `shared` (every router places a target alike, from the
    /// nodes' names and their reports of what they hold) or `per-router` (each router's
    /// own table, least loaded first: the papers' single front-end). Default is `shared`.
    pub placement: PlacementMode,
    /// `lard`, `lard-r`, `hacc`: LARD's T_low, below which a node is underused (load
    /// units). Default is 25.
    pub t_low: f64,
    /// `lard`, `lard-r`, `hacc`: LARD's T_high, above which a node is overloaded (at twice
    /// it a target moves regardless). Default is 65.
    pub t_high: f64,
    /// `lard`, `lard-r`, `hacc`: the most targets a router's table keeps, so memory stays
    /// bounded; the coldest is evicted beyond it. Default is 1048576.
    pub table_cap: usize,
    /// The longest warm-up of a node that joins or restarts (it takes its share of
    /// targets as its hit ratio catches up with the others', and fully at this uptime);
    /// 0 turns warm-up off. Default is 30000 ms.
    #[serde(rename = "warmup_max_ms", with = "crate::millis")]
    pub warmup_max: Duration,
    pub bounded: BoundedConfig,
    pub lard_r: LardRConfig,
    pub hacc: HaccConfig,
    pub class: ClassConfig,
}

impl Default for PolicyConfig {
    fn default() -> Self {
        let spec = PolicySpec::new(PolicyKind::Rr);
        PolicyConfig {
            kind: spec.kind,
            placement: spec.placement,
            t_low: spec.t_low,
            t_high: spec.t_high,
            table_cap: spec.table_cap,
            warmup_max: Duration::from_nanos(spec.warmup_max),
            bounded: BoundedConfig { balance_factor: spec.balance_factor },
            lard_r: LardRConfig {
                shrink_after: Duration::from_nanos(spec.shrink_after),
                hot_share: spec.heat.share,
                hot_min_rps: spec.heat.min_rate,
                hot_cool: Duration::from_nanos(spec.heat.cool_after),
                local_copies: spec.local_copies,
            },
            hacc: HaccConfig {
                split: spec.hacc_split,
                merge: spec.hacc_merge,
                balance: spec.hacc_balance,
                max_depth: spec.hacc_max_depth,
                half_life: Duration::from_nanos(spec.hacc_half_life),
            },
            class: ClassConfig::default(),
        }
    }
}

/// `[policy.bounded]`: consistent hashing with bounded loads.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct BoundedConfig {
    /// No node takes more than this times the average load (HAProxy's
    /// `hash-balance-factor` 125 is 1.25). Default is 1.25.
    pub balance_factor: f64,
}

impl Default for BoundedConfig {
    fn default() -> Self {
        PolicyConfig::default().bounded
    }
}

/// `[policy.lard_r]`: LARD with replication, and replicas of flash-crowd targets.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct LardRConfig {
    /// A target's server set unchanged this long loses a node (the paper's K). Default is
    /// 20000 ms.
    #[serde(rename = "shrink_after_ms", with = "crate::millis")]
    pub shrink_after: Duration,
    /// A target taking at least this share (0–1) of the router's recent requests gets
    /// replicas on its next candidates, the same nodes on every router; 0 turns heat
    /// replicas off. Default is 0.2.
    pub hot_share: f64,
    /// And at least this many requests a second at this router, so a quiet router never
    /// sees a crowd. Default is 50.
    pub hot_min_rps: f64,
    /// A hot target whose share stays below half of `hot_share` this long loses its
    /// replicas (a crowd that flickers keeps them). Default is 2000 ms.
    #[serde(rename = "hot_cool_ms", with = "crate::millis")]
    pub hot_cool: Duration,
    /// On a peer (`larder peer`): the share (0–1) of its own node's cache that copies of
    /// the hottest targets may take; the peer serves those from its own node, whichever
    /// node owns them, which fills each copy from the owner. A router has no node of its
    /// own and ignores it; 0 turns local copies off. Default is 0.125.
    pub local_copies: f64,
}

impl Default for LardRConfig {
    fn default() -> Self {
        PolicyConfig::default().lard_r
    }
}

/// `[policy.hacc]`: subtrees of the URL tree placed by their share of the requests.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct HaccConfig {
    /// A subtree splits above this times its node's fair share of the requests. Default
    /// is 0.25.
    pub split: f64,
    /// A split subtree merges back below this times its node's fair share (below `split`,
    /// so it does not flap). Default is 0.0625.
    pub merge: f64,
    /// A node above this times its fair share hands subtrees to others. Default is 1.1.
    pub balance: f64,
    /// The deepest subtree level placed on its own (0: the root). Default is the
    /// mapper's deepest level.
    pub max_depth: usize,
    /// Requests are counted over a window that halves in this long. Default is 1000 ms.
    #[serde(rename = "half_life_ms", with = "crate::millis")]
    pub half_life: Duration,
}

impl Default for HaccConfig {
    fn default() -> Self {
        PolicyConfig::default().hacc
    }
}

/// `[policy.class]`: nodes pooled by content class.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct ClassConfig {
    /// One pool per class (`[[policy.class.pools]]`); classes without one use every node
    /// in no pool. Default is none: the mapper's dynamic class on the last quarter of the
    /// nodes.
    pub pools: Vec<ClassPoolConfig>,
}

/// A pool of nodes (by name or address) for one content class (policy `class`).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ClassPoolConfig {
    pub class: u8,
    pub nodes: Vec<String>,
    /// The policy that spreads the class over its pool. Default is `rr`.
    #[serde(default = "rr")]
    pub inner: PolicyKind,
}

fn rr() -> PolicyKind {
    PolicyKind::Rr
}

/// The config key of a policy parameter, for errors.
fn policy_key(param: Param) -> &'static str {
    match param {
        Param::TLow => "policy.t_low",
        Param::TableCap => "policy.table_cap",
        Param::BalanceFactor => "policy.bounded.balance_factor",
        Param::HotShare => "policy.lard_r.hot_share",
        Param::HotMinRate => "policy.lard_r.hot_min_rps",
        Param::LocalCopies => "policy.lard_r.local_copies",
        Param::HaccMerge => "policy.hacc.merge",
        Param::HaccBalance => "policy.hacc.balance",
        Param::HaccHalfLife => "policy.hacc.half_life_ms",
        Param::Classes => "policy.class.pools",
    }
}

/// A duration on the policy's clock.
fn nanos(d: Duration) -> Nanos {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// URL → target mapping (see `policy::mapper` for the rule).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct MappingConfig {
    /// The query is part of a target's key (off: a static file ignores its query).
    pub query_in_key: bool,
    /// The request's `Host` is part of a target's key, so each site's objects are placed
    /// on their own: for nodes that cache several sites of one origin server and pass the
    /// client's `Host` to it (`larder node --origin-host client`). Default is false (one
    /// site: every `Host` names the same objects).
    pub host_in_key: bool,
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
            host_in_key: false,
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
    /// Time between polls of a node's load report. Default is 200 ms.
    #[serde(rename = "poll_ms", with = "crate::millis")]
    pub poll: Duration,
    /// A load report unanswered this long is given up; until then the node is not polled
    /// again (one report in flight a node), so a report that takes longer than one poll
    /// period (a TLS handshake to a busy node) still arrives. Default is 1000 ms.
    #[serde(rename = "timeout_ms", with = "crate::millis")]
    pub timeout: Duration,
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
            poll: Duration::from_millis(200),
            timeout: Duration::from_millis(1000),
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
    /// Path probed with GET by active checks. Default is none: no active checks, and an
    /// ejected node is tried again after `eject_ms`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Time between active checks of a node. Default is 1000 ms.
    #[serde(rename = "interval_ms", with = "crate::millis")]
    pub interval: Duration,
    /// An active check unanswered this long failed. Default is 1000 ms.
    #[serde(rename = "timeout_ms", with = "crate::millis")]
    pub timeout: Duration,
    /// Consecutive good checks that bring a down node back.
    pub rise: u32,
    /// Consecutive failures (checks or requests) that take a node down. A refused or
    /// timed-out connect takes it down at once.
    pub fall: u32,
    /// Without active checks, how long an ejected node stays out. A node taken out for
    /// refusing connects is back as soon as its load report answers again. Default is
    /// 5000 ms.
    #[serde(rename = "eject_ms", with = "crate::millis")]
    pub eject: Duration,
    /// A node that comes back ramps its weight from 1% to 100% over this long. Not with
    /// `lard`, `lard-r` and `hacc` under shared placement, whose hit-ratio warm-up gives a
    /// node that reports its load its share as its cache fills. Default is 10000 ms.
    #[serde(rename = "slow_start_ms", with = "crate::millis")]
    pub slow_start: Duration,
}

impl Default for HealthConfig {
    fn default() -> Self {
        HealthConfig {
            path: None,
            interval: Duration::from_secs(1),
            timeout: Duration::from_secs(1),
            rise: 2,
            fall: 3,
            eject: Duration::from_secs(5),
            slow_start: Duration::from_secs(10),
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
    /// Idle pooled upstream connections kept per node. Every request in flight at a node
    /// holds a connection of its own, and one HTTP/2 client connection may carry 100
    /// requests at once: a pool smaller than the requests in flight closes connections
    /// after their response and opens new ones for the next requests. Default is 1024.
    pub pool_idle_per_node: usize,
    /// Request body size: a larger `Content-Length` is refused with 413 before anything
    /// is forwarded, and a chunked body is cut off (413) as it streams past it. 0 means
    /// unlimited (bodies stream, so memory stays bounded either way).
    pub max_body_bytes: u64,
    pub max_chunk_line_bytes: usize,
    pub max_trailer_bytes: usize,
    /// Relay buffer per direction, taken while a request is in progress.
    pub buffer_bytes: usize,
    /// Relay buffers kept for reuse once given back (each router its own): a busy client's next
    /// request takes one instead of allocating. As many splice pipes are kept likewise.
    pub spare_buffers: usize,
    /// Hot-target table size for `/targets`.
    pub hot_targets: usize,
    /// Relay protocol upgrades (`Connection: upgrade`, as a WebSocket handshake asks):
    /// the request goes to the node the policy picks, and after its `101` both directions
    /// are tunnelled until either side closes. Off, such a request is refused with 501.
    /// Default is true.
    pub upgrades: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_header_bytes: 16 * 1024,
            max_headers: 100,
            max_uri_bytes: 8 * 1024,
            max_connections: 10_000,
            pool_idle_per_node: 1024,
            // nginx's default `client_max_body_size`: uploads are not what larder serves.
            max_body_bytes: 1 << 20,
            max_chunk_line_bytes: 4096,
            max_trailer_bytes: 16 * 1024,
            buffer_bytes: 32 * 1024,
            spare_buffers: 64,
            hot_targets: 4096,
            upgrades: true,
        }
    }
}

impl Limits {
    pub fn chunk_limits(&self) -> ChunkLimits {
        ChunkLimits { max_line: self.max_chunk_line_bytes, max_trailer: self.max_trailer_bytes }
    }
}

/// How the router moves bytes: switches whose defaults are what measurements chose
/// (`docs/results.md`), kept settable so a benchmark can compare against the other
/// choice. Not for operators to tune by feel: each default is the faster one measured.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Tuning {
    /// Write requests to nodes and responses to clients after reading everything that is
    /// ready in the same turn of the event loop, so that each peer wakes once for a batch
    /// rather than once per request; off writes each as soon as it is read (one poll of
    /// the event loop less per request when idle, at more wake-ups under load). Default
    /// is true.
    pub write_batching: bool,
    /// A request or response body of known length with at least this many bytes beyond
    /// what came with its head moves socket to socket by splice(2) on Linux when both
    /// ends are plain TCP (chunked, close-delimited and TLS bodies are copied); 0 turns
    /// splicing off. Below the default, the extra system calls cost more than the copy
    /// saves. Default is 65536.
    pub splice_min_bytes: u64,
    /// The capacity of each splice pipe: a spliced body moves in steps of at most this
    /// many bytes, each step a wake-up of the router and of the receiver, so a larger
    /// pipe means fewer of them. Pipe memory is taken only for bytes in flight; the
    /// kernel rounds up to whole pages and caps it (`fs.pipe-max-size`, 1 MiB by
    /// default); where it refuses, pipes keep their default 64 KiB. Default is 1048576.
    pub splice_pipe_bytes: usize,
}

impl Default for Tuning {
    fn default() -> Self {
        Tuning { write_batching: true, splice_min_bytes: 64 * 1024, splice_pipe_bytes: 1 << 20 }
    }
}

/// Connection handoff: a plain HTTP/1.1 client connection is passed, after its first
/// request is placed, to that request's node as a file descriptor over the Unix socket the
/// node names in its load report (`handoff_socket`), with the bytes already read; the node
/// serves the connection from then on, and its responses never cross the router. Only for
/// nodes on the router's own host (a socket path means nothing elsewhere); TLS and HTTP/2
/// connections, requests with a body or an upgrade, and nodes without a socket are relayed
/// as before, and so is a request whose node refuses or does not answer in time.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct HandoffConfig {
    /// Offer connections to nodes that advertise a handoff socket. Behind a router, later
    /// requests on a handed-off connection are served by the node it went to, wherever the
    /// policy would have placed them; on peers (`larder peer --handoff`) the node hands the
    /// connection on to the node a later request belongs to. Default is false.
    pub enabled: bool,
    /// How long the router waits for a node to take a connection (connect, message,
    /// answer) before it relays the request itself. Default is 500 ms.
    #[serde(rename = "answer_ms", with = "crate::millis")]
    pub answer: Duration,
}

impl Default for HandoffConfig {
    fn default() -> Self {
        HandoffConfig { enabled: false, answer: Duration::from_millis(500) }
    }
}

/// Timeouts, each written in milliseconds.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Timeouts {
    /// From a request's first byte to the end of its head (408 beyond it), so a
    /// slow-header client cannot hold a connection. Default is 10000 ms.
    #[serde(rename = "header_ms", with = "crate::millis")]
    pub header: Duration,
    /// A keep-alive client connection with no request in progress. Default is 60000 ms.
    #[serde(rename = "idle_ms", with = "crate::millis")]
    pub idle: Duration,
    /// A connect to a node, beyond which the node counts as failed. Default is 2000 ms.
    #[serde(rename = "upstream_connect_ms", with = "crate::millis")]
    pub upstream_connect: Duration,
    /// From the end of the request to the response head (504 beyond it). Default is
    /// 30000 ms.
    #[serde(rename = "upstream_response_ms", with = "crate::millis")]
    pub upstream_response: Duration,
    /// Longest pause while relaying a body in either direction. Default is 60000 ms.
    #[serde(rename = "body_ms", with = "crate::millis")]
    pub body: Duration,
    /// A pooled upstream connection idle longer than this is closed, not reused (below
    /// the nodes' own keep-alive timeout, so the router never writes to one they closed).
    /// Default is 4000 ms.
    #[serde(rename = "pool_idle_ms", with = "crate::millis")]
    pub pool_idle: Duration,
    /// On SIGTERM, how long in-flight requests get to finish. Default is 30000 ms.
    #[serde(rename = "drain_ms", with = "crate::millis")]
    pub drain: Duration,
    /// After refusing a request whose body is still coming (or relaying a node's early
    /// answer to one), how long the router reads and drops the rest before it closes, so
    /// the client reads the answer instead of a reset; 0 closes at once. Default is
    /// 2000 ms.
    #[serde(rename = "linger_ms", with = "crate::millis")]
    pub linger: Duration,
    /// A tunnel (an upgraded connection: a WebSocket) that carries no byte either way
    /// this long is closed; once one side has closed its half, `body_ms` applies
    /// instead. Default is 3600000 ms (an hour, as HAProxy's documentation suggests for
    /// `timeout tunnel`; WebSocket clients ping well within it).
    #[serde(rename = "tunnel_idle_ms", with = "crate::millis")]
    pub tunnel_idle: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            header: Duration::from_secs(10),
            idle: Duration::from_secs(60),
            upstream_connect: Duration::from_secs(2),
            upstream_response: Duration::from_secs(30),
            body: Duration::from_secs(60),
            pool_idle: Duration::from_secs(4),
            drain: Duration::from_secs(30),
            linger: Duration::from_secs(2),
            tunnel_idle: Duration::from_secs(3600),
        }
    }
}

impl RouterConfig {
    /// Parse a TOML document. What parses is checked whole once, when a router takes it
    /// ([`RouterConfig::validate`], by `Router::new` and every reload).
    pub fn from_toml(text: &str) -> Result<RouterConfig, RouterError> {
        toml::from_str(text).map_err(|e| RouterError::Config(e.to_string()))
    }

    /// The config as TOML that [`RouterConfig::from_toml`] reads back (for a router
    /// started by another process with a config it built).
    pub fn to_toml(&self) -> Result<String, RouterError> {
        toml::to_string(self).map_err(|e| RouterError::Config(e.to_string()))
    }

    /// Read and parse a TOML file (checked as [`RouterConfig::from_toml`] says).
    pub fn load(path: &std::path::Path) -> Result<RouterConfig, RouterError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| RouterError::Config(format!("{}: {e}", path.display())))?;
        Self::from_toml(&text)
    }

    /// The policy spec this config describes, unchecked (the policy checks it when it is
    /// built, [`RouterConfig::validate`] before). Class pools name nodes by name or
    /// address; `ids[i]` is the router's id of `nodes[i]` (ids follow addresses across
    /// reloads).
    pub fn policy_spec(&self, ids: &[NodeId]) -> Result<PolicySpec, RouterError> {
        let p = &self.policy;
        let mut spec = PolicySpec::new(p.kind);
        spec.placement = p.placement;
        spec.t_low = p.t_low;
        spec.t_high = p.t_high;
        spec.table_cap = p.table_cap;
        spec.warmup_max = nanos(p.warmup_max);
        spec.balance_factor = p.bounded.balance_factor;
        spec.shrink_after = nanos(p.lard_r.shrink_after);
        spec.heat = policy::heat::HeatConfig {
            share: p.lard_r.hot_share,
            min_rate: p.lard_r.hot_min_rps,
            cool_after: nanos(p.lard_r.hot_cool),
        };
        spec.local_copies = p.lard_r.local_copies;
        spec.hacc_split = p.hacc.split;
        spec.hacc_merge = p.hacc.merge;
        spec.hacc_balance = p.hacc.balance;
        spec.hacc_max_depth = p.hacc.max_depth;
        spec.hacc_half_life = nanos(p.hacc.half_life);
        for pool in &p.class.pools {
            let nodes =
                pool.nodes.iter().map(|n| self.node_named(n, ids)).collect::<Result<_, _>>()?;
            let (class, inner) = (ClassId(pool.class), pool.inner);
            spec.classes.push(policy::spec::ClassPool { class, nodes, inner });
        }
        Ok(spec)
    }

    /// The id of the node named `name` (its name or address).
    fn node_named(&self, name: &str, ids: &[NodeId]) -> Result<NodeId, RouterError> {
        self.nodes
            .iter()
            .position(|n| n.display_name() == name || n.addr.to_string() == name)
            .and_then(|i| ids.get(i).copied())
            .ok_or_else(|| {
                RouterError::Config(format!("policy.class.pools: unknown node `{name}`"))
            })
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

    /// This router's name: `name`, or `router-<pid>` without one (unique among the
    /// processes of one host, which is where SO_REUSEPORT shares an address).
    pub fn router_name(&self) -> String {
        self.name.clone().unwrap_or_else(|| format!("router-{}", std::process::id()))
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

    /// Check everything that can be checked without opening a socket. The one check of
    /// a config: the router runs it when it starts on one or takes one on reload, and its
    /// errors name the config key at fault (flags only set keys).
    pub fn validate(&self) -> Result<(), RouterError> {
        let bad = |m: &str| Err(RouterError::Config(m.to_string()));
        if self.nodes.is_empty() && self.discovery.dns.is_empty() {
            return bad("nodes: at least one node (or a name in discovery.dns) is needed");
        }
        self.discovery.validate()?;
        self.http2.validate()?;
        if self.handoff.enabled && self.handoff.answer.is_zero() {
            return bad("handoff.answer_ms must be greater than zero");
        }
        for (i, n) in self.nodes.iter().enumerate() {
            if self.nodes[..i].iter().any(|m| m.addr == n.addr) {
                return Err(RouterError::Config(format!("nodes: {} is listed twice", n.addr)));
            }
        }
        let tls = &self.tls;
        if !tls.listen.is_empty() && (tls.cert.is_empty() || tls.key.is_empty()) {
            return bad("tls.listen: a TLS listener needs tls.cert and tls.key");
        }
        if tls.cert.is_empty() != tls.key.is_empty() || (tls.cert.is_empty() && !tls.sni.is_empty())
        {
            return bad(
                "tls.cert and tls.key go together, and tls.sni certificates need a default one",
            );
        }
        if let Some(n) = self.nodes.iter().find(|n| n.server_name.is_some()) {
            if self.node_tls.ca.is_empty() {
                return Err(RouterError::Config(format!(
                    "node_tls.ca: node {} speaks TLS and needs a CA file to check its \
                     certificate",
                    n.address()
                )));
            }
        }
        if self.backlog == 0 || self.backlog > 65_535 {
            return bad("backlog: 1..=65535");
        }
        if let Some(name) = &self.name {
            if name.is_empty() || name.len() > 64 || !name.bytes().all(|b| b.is_ascii_graphic()) {
                return bad("name: 1 to 64 visible ASCII characters (it is a header value)");
            }
        }
        if self.access_log.as_deref() == Some("") {
            return bad("access_log: a path or `-`; leave the key out for none");
        }
        if self.health.path.as_ref().is_some_and(|p| !p.starts_with('/')) {
            return bad("health.path: a path from `/`; leave the key out for no active checks");
        }
        self.policy_spec(&self.config_order_ids())?.validate().map_err(|e| match e {
            SpecError::Invalid { param, why } => {
                RouterError::Config(format!("{}: {why}", policy_key(param)))
            }
            other => RouterError::Config(other.to_string()),
        })?;
        self.mapper_config()?;
        let l = &self.limits;
        let at_least = |key: &str, value: usize, least: usize| {
            if value < least {
                Err(RouterError::Config(format!("limits.{key}: at least {least}")))
            } else {
                Ok(())
            }
        };
        at_least("max_header_bytes", l.max_header_bytes, 64)?;
        at_least("max_headers", l.max_headers, 1)?;
        at_least("max_uri_bytes", l.max_uri_bytes, 1)?;
        at_least("buffer_bytes", l.buffer_bytes, 1024)?;
        at_least("max_chunk_line_bytes", l.max_chunk_line_bytes, 3)?;
        if !(1..=1_000_000).contains(&l.max_connections) {
            return bad("limits.max_connections: 1..=1000000");
        }
        if !(4096..=1 << 30).contains(&self.tuning.splice_pipe_bytes) {
            return bad("tuning.splice_pipe_bytes: 4096..=1073741824");
        }
        let t = &self.timeouts;
        let h = &self.health;
        for (key, value) in [
            ("timeouts.header_ms", t.header),
            ("timeouts.idle_ms", t.idle),
            ("timeouts.upstream_connect_ms", t.upstream_connect),
            ("timeouts.upstream_response_ms", t.upstream_response),
            ("timeouts.body_ms", t.body),
            ("timeouts.tunnel_idle_ms", t.tunnel_idle),
            ("health.interval_ms", h.interval),
            ("health.timeout_ms", h.timeout),
            ("load.poll_ms", self.load.poll),
            ("load.timeout_ms", self.load.timeout),
        ] {
            if value.is_zero() {
                return Err(RouterError::Config(format!("{key} must be above 0 ms")));
            }
        }
        if h.rise == 0 || h.fall == 0 {
            return bad("health.rise and health.fall must be above 0");
        }
        let w = self.load.weights();
        if [w.in_flight, w.cpu, w.disk].iter().any(|x| !x.is_finite() || *x < 0.0) {
            return bad("load.w_in_flight, load.w_cpu and load.w_disk must be finite and >= 0");
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
        assert_eq!(c.policy.kind, PolicyKind::LardR);
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

    /// `examples/router.toml` is the annotated reference: every key a config can hold is
    /// in it (set, or commented out where leaving it out means none).
    #[test]
    fn the_example_names_every_key() {
        fn keys(table: &toml::Table, out: &mut Vec<String>) {
            for (key, value) in table {
                out.push(key.clone());
                match value {
                    toml::Value::Table(t) => keys(t, out),
                    toml::Value::Array(a) => {
                        a.iter().filter_map(toml::Value::as_table).for_each(|t| keys(t, out))
                    }
                    _ => {}
                }
            }
        }
        let mut c = RouterConfig {
            name: Some("r1".into()),
            access_log: Some("-".into()),
            nodes: vec![NodeConfig::new("127.0.0.1:1".parse().unwrap())],
            ..RouterConfig::default()
        };
        c.health.path = Some("/health".into());
        c.mapping.tree_depth = Some(3);
        let mut all = Vec::new();
        keys(&toml::Table::try_from(&c).unwrap(), &mut all);
        let text = include_str!("../../../examples/router.toml");
        let missing: Vec<_> = all
            .iter()
            .filter(|k| !text.contains(&format!("{k} =")) && !text.contains(&format!("[{k}]")))
            .filter(|k| !text.contains(&format!(".{k}]")))
            .collect();
        assert!(missing.is_empty(), "examples/router.toml lacks {missing:?}");
    }

    #[test]
    fn a_config_written_as_toml_reads_back_the_same() {
        let text = include_str!("../../../examples/router.toml");
        let c = RouterConfig::from_toml(text).unwrap();
        assert_eq!(RouterConfig::from_toml(&c.to_toml().unwrap()).unwrap(), c);
    }

    /// Parameters of one policy sit in its table, durations are read as milliseconds, and
    /// the whole spec is what the keys say.
    #[test]
    fn policy_tables_make_the_spec() {
        let text = "[policy]\nkind = \"lard-r\"\nplacement = \"per-router\"\n\
                    warmup_max_ms = 0\n\
                    [policy.lard_r]\nshrink_after_ms = 1500\nhot_share = 0.5\n\
                    [policy.hacc]\nhalf_life_ms = 250\n\
                    [policy.bounded]\nbalance_factor = 2.0\n\
                    [tuning]\nwrite_batching = false\nsplice_min_bytes = 0\n\
                    [[nodes]]\naddr = \"127.0.0.1:1\"\n";
        let c = RouterConfig::from_toml(text).unwrap();
        c.validate().unwrap();
        assert_eq!(c.policy.lard_r.shrink_after, Duration::from_millis(1500));
        assert!(!c.tuning.write_batching && c.tuning.splice_min_bytes == 0);
        let spec = c.policy_spec(&c.config_order_ids()).unwrap();
        assert_eq!((spec.kind, spec.placement), (PolicyKind::LardR, PlacementMode::PerRouter));
        assert_eq!((spec.shrink_after, spec.warmup_max), (1_500_000_000, 0));
        assert_eq!((spec.heat.share, spec.hacc_half_life), (0.5, 250_000_000));
        assert_eq!(spec.balance_factor, 2.0);
        assert_eq!(RouterConfig::from_toml(&c.to_toml().unwrap()).unwrap(), c);
    }

    #[test]
    fn router_name_header_and_reuseport_read_back() {
        let text = "name = \"r2\"\nrouter_header = true\nreuseport = true\n\
                    [[nodes]]\naddr = \"127.0.0.1:1\"\n";
        let c = RouterConfig::from_toml(text).unwrap();
        assert_eq!((c.name.as_deref(), c.router_header, c.reuseport), (Some("r2"), true, true));
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
        assert_eq!(c.load.poll, Duration::from_millis(200));
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
            ("[policy]\nplacement = \"zz\"\n", "unknown placement"),
            ("[policy]\nhacc_split = 0.5\n", "unknown field"),
            (
                "[policy.hacc]\nmerge = 0.5\n[[nodes]]\naddr = \"127.0.0.1:1\"\n",
                "policy.hacc.merge",
            ),
            ("[policy]\nt_low = 70.0\n[[nodes]]\naddr = \"127.0.0.1:1\"\n", "policy.t_low"),
            (
                "[policy]\nkind = \"class\"\n[[policy.class.pools]]\nclass = 1\nnodes = [\"n9\"]\n\
                 [[nodes]]\naddr = \"127.0.0.1:1\"\n",
                "policy.class.pools: unknown node `n9`",
            ),
            (
                "[limits]\nmax_connections = 0\n[[nodes]]\naddr = \"127.0.0.1:1\"\n",
                "limits.max_connections",
            ),
            (
                "[tuning]\nsplice_pipe_bytes = 1\n[[nodes]]\naddr = \"127.0.0.1:1\"\n",
                "tuning.splice_pipe_bytes",
            ),
            ("[timeouts]\nidle_ms = 0\n[[nodes]]\naddr = \"127.0.0.1:1\"\n", "above 0"),
            ("[load]\ntimeout_ms = 0\n[[nodes]]\naddr = \"127.0.0.1:1\"\n", "load.timeout_ms"),
            ("[[nodes]]\naddr = \"127.0.0.1:1\"\n[[nodes]]\naddr = \"127.0.0.1:1\"\n", "twice"),
            ("name = \"a b\"\n[[nodes]]\naddr = \"127.0.0.1:1\"\n", "name"),
            ("[[nodes]]\naddr = \"https://127.0.0.1:1\"\n", "needs a CA file"),
            ("[[nodes]]\naddr = \"127.0.0.1:1\"\nserver_name = \"a\"\n", "https://"),
        ] {
            let err = RouterConfig::from_toml(text).and_then(|c| c.validate()).unwrap_err();
            let err = err.to_string();
            assert!(err.contains(want), "{text:?}: {err}");
        }
    }
}

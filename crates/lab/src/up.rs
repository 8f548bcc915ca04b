//! `larder up`: a whole cluster on this machine — a document store, N larder nodes and
//! one or more larder routers in front of them, sharing one address — started at once,
//! watched, and stopped on SIGINT or SIGTERM (or when one of them dies on its own); and
//! `larder up --bench`'s plan.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use policy::PolicyKind;
use router::RouterConfig;
use trace::SizeMix;

use crate::child::{Group, Logs};
use crate::error::{invalid, Context, LabError, Result};
use crate::front::{started_nodes, System};
use crate::hosts::{Host, Hosts, HostsConfig, CLIENT_HOST};
use crate::launcher::{larder_exe, Launcher, ANY_LOCAL_PORT};
use crate::nodes::{self, NodeSpec, Nodes};
use crate::peers::{self, PeerPlan};
use crate::plan::ExperimentPlan;
use crate::report::Report;
use crate::route;
use crate::run_dir::RunDir;
use crate::self_signed;
use crate::settled;
use crate::signals::{Signals, Wake};
use crate::store;
use crate::workload::{Content, WorkloadKind};

/// The policy when neither `--policy` nor `--config` names one.
pub const DEFAULT_POLICY: PolicyKind = PolicyKind::LardR;
/// What `larder up --bench` compares.
const BENCH_POLICIES: [PolicyKind; 5] =
    [PolicyKind::Wrr, PolicyKind::Hash, PolicyKind::Bounded, PolicyKind::Lard, PolicyKind::LardR];
/// `larder up --bench`'s skew (Zipf's alpha over the dynamic views): a hot set that more
/// than one node's cache and CPU must serve, over a long tail.
const BENCH_ALPHA: f64 = 1.0;
/// `larder up --bench`'s small nodes get this fraction (1/N) of the large nodes' cache.
const BENCH_SMALL_CACHE_DIVISOR: u64 = 4;
/// `larder up --bench`'s data set in quarters of all caches together: more than an equal
/// split (`hash`) fits in the small caches, less than a split weighted by capacity
/// (`lard`, `lard-r`) fits in every cache, with room left for lard-r's replicas.
const BENCH_DATASET_QUARTERS_OF_ALL_CACHES: u64 = 3;
/// The largest store, as a multiple of one node's cache (the LARD papers' interesting
/// case: more than one node holds, less than all of them together).
const STORE_PER_CACHE: u64 = 3;
/// The store never exceeds this share (in quarters) of all caches together, so fewer
/// than 4 nodes still get a store their caches can hold.
const STORE_QUARTERS_OF_ALL_CACHES: u64 = 3;
/// How long the main loop sleeps between checks when nothing happens (signals wake it).
const IDLE_WAKE: Duration = Duration::from_secs(60);
/// The most routers `larder up --routers` starts.
pub const MAX_ROUTERS: u8 = 64;

/// The cluster `larder up` starts (its flags, typed).
#[derive(Clone, Debug)]
pub struct UpConfig {
    pub nodes: u16,
    /// Each node's cache in MiB.
    pub cache_mb: u64,
    /// Overrides the config file's policy (`DEFAULT_POLICY` without either).
    pub policy: Option<PolicyKind>,
    /// Serve these files instead of the synthetic store.
    pub docroot: Option<PathBuf>,
    /// Be caching nodes in front of these origin URLs (tried in order) instead of
    /// serving files.
    pub origins: Vec<String>,
    /// The caching nodes' flags for how they store and fetch (`node::OriginFlags`).
    pub caching_args: Vec<String>,
    /// Each site (request `Host`) is its own set of targets: the caching nodes pass the
    /// client's `Host` to the origin (`--origin-host client`).
    pub host_in_key: bool,
    /// The router's configuration for everything but its nodes and addresses.
    pub config: Option<PathBuf>,
    pub listen: SocketAddr,
    /// Router processes sharing `listen` (SO_REUSEPORT), named r1..rN; 1..=[`MAX_ROUTERS`].
    pub routers: u8,
    /// The first router's admin API [default: a free port on 127.0.0.1]; the others take
    /// free ports. Port 0 binds any free port, which the router reports.
    pub admin: Option<SocketAddr>,
    pub direct_io: bool,
    pub store_dir: Option<PathBuf>,
    /// How long each process gets to report its address and answer.
    pub start_timeout: Duration,
    /// How long the processes get to exit after SIGTERM before they are killed.
    pub stop_timeout: Duration,
    /// Echo the children's output (it always goes to the run directory's `logs/`).
    pub verbose: bool,
    /// Start every node and the routers each on a host of its own (a network namespace
    /// with a shaped link) instead of on this machine's loopback.
    pub hosts: Option<HostsConfig>,
    /// No router tier: every node is a peer (`larder peer`) that takes clients itself
    /// and forwards what another node should serve.
    pub peers: bool,
    /// With `peers` on this machine: each peer's distributor hands a plain HTTP/1.1
    /// connection to the node of its first request (`larder peer --handoff`), and that
    /// node forwards a later request on it that belongs to another node. Not with `hosts`.
    pub handoff: bool,
    /// Also serve TLS (ALPN h2 and http/1.1) on this address, with a self-signed
    /// certificate generated into the run's directory. Not with `peers` or `hosts`.
    pub tls: Option<SocketAddr>,
}

/// Everything started (with peers, all in `routers`); dropping it stops the routers first, so requests in flight finish
/// on nodes that are still there.
struct Cluster {
    routers: Group,
    nodes: Group,
}

/// One started router, for the printed lines.
struct Started {
    /// Empty when there is one router, ` rK` among several (after `router`, `admin`).
    suffix: String,
    pid: u32,
    admin: SocketAddr,
    /// Its TLS listener, with `--tls`.
    tls: Option<SocketAddr>,
}

impl Cluster {
    fn stop(&mut self) {
        self.routers.stop();
        self.nodes.stop();
    }
}

impl UpConfig {
    /// Starts the cluster and runs until a stop is requested (Ok) or a process dies on
    /// its own (an error naming it); what it started and how it ends goes to `report`.
    pub fn run(&self, report: Arc<dyn Report>) -> Result<()> {
        let say = &*report;
        // First, before any thread exists (see `signals`).
        let signals = Signals::block().context("blocking signals")?;
        // The config before the store: a typo should not wait for a store to be written.
        let mut router_config = self.router_config()?;
        // Before the store too: missing root is said at once. Removed when dropped, after
        // everything declared below (the processes on them).
        let hosts = match &self.hosts {
            Some(config) => Some(Arc::new(Hosts::create(config.clone(), report.clone())?)),
            None => None,
        };
        // This process, its checks and the user's commands run on the client host.
        let client = hosts.as_ref().map(|h| h.host(CLIENT_HOST)).transpose()?;
        let _on_client = client.as_ref().map(Host::enter_this_thread).transpose()?;
        let (docroot, example, docs) = self.documents(say)?;
        // A store can take seconds to write: honour a Ctrl-C pressed meanwhile.
        if signals.stop_requested(Duration::ZERO) {
            return Ok(());
        }
        let run_dir = RunDir::create("up")?;
        let certificate = match self.tls {
            Some(addr) => {
                let made = self_signed::create(run_dir.path(), addr.ip())?;
                router_config.tls.listen = addr.to_string();
                router_config.tls.cert = made.cert.to_string_lossy().into_owned();
                router_config.tls.key = made.key.to_string_lossy().into_owned();
                Some(made)
            }
            None => None,
        };
        let logs = Logs::new(run_dir.path().join("logs"), self.verbose.then(|| report.clone()))?;
        let exe = larder_exe(None)?;
        let launcher = Launcher {
            exe,
            signals: signals.clone(),
            logs,
            grace: self.stop_timeout,
            node_cpu: None,
            report: report.clone(),
            hosts: hosts.clone(),
        };
        let deadline = Instant::now() + self.start_timeout;
        let direct_io: &[String] = if self.direct_io { &["--direct-io".to_string()] } else { &[] };
        let specs = vec![NodeSpec { cache_mb: self.cache_mb, cpu: None }; usize::from(self.nodes)];
        // With hosts, the cluster is reached from the client host.
        let on_client =
            client.as_ref().map_or(String::new(), |c| format!("ip netns exec {} ", c.namespace()));
        let tried = Tried { on_client: &on_client, example: &example, docs };
        if self.peers {
            let content = self.content(&docroot);
            let mut extra = direct_io.to_vec();
            extra.extend(self.caching_args.iter().cloned());
            let plan = PeerPlan {
                content: &content,
                specs: &specs,
                extra: &extra,
                config: &router_config,
                listen: self.listen,
                admin: self.admin,
                handoff: self.handoff,
            };
            let mut cluster = Cluster {
                routers: Group::new(launcher.grace, signals.clone(), report.clone()),
                nodes: Group::new(launcher.grace, signals.clone(), report.clone()),
            };
            let started =
                peers::start(&launcher, &plan, run_dir.path(), &mut cluster.routers, deadline)?;
            let Some(started) = started else { return stopped(Some(cluster), say) };
            let policy = &router_config.policy.kind;
            for p in &started {
                say.note(&format!(
                    "  peer {:<6} http://{}  node {}  admin http://{}/stats  pid {}  policy {policy}",
                    p.name, p.addr, p.backend, p.admin, p.pid
                ));
            }
            if let Some(first) = started.first() {
                say.note(&format!("  dashboard   http://{}/  (of {})", first.admin, first.name));
                if hosts.is_some() {
                    say.note("  clients     any peer's address serves every document");
                }
                self.say_ready(
                    say,
                    hosts.as_deref(),
                    client.as_ref(),
                    first.addr,
                    &tried,
                    &launcher,
                );
            }
            return watch(&signals, cluster, say);
        }
        let started = if self.origins.is_empty() {
            nodes::start(&launcher, &docroot, &specs, direct_io, deadline)?
        } else {
            nodes::start_caching(&launcher, &self.origins, &specs, &self.caching_args, deadline)?
        };
        let Some(Nodes { group, addrs }) = started else { return stopped(None, say) };
        let routers = Group::new(launcher.grace, signals.clone(), report.clone());
        let mut cluster = Cluster { routers, nodes: group };
        for (node, (name, addr)) in cluster.nodes.children.iter().zip(&addrs) {
            say.note(&format!("  node {name:<6} http://{addr}  pid {}", node.pid()));
        }
        router_config.nodes = started_nodes(&addrs);
        // The cluster is the nodes started here: none from a config file's DNS names.
        router_config.discovery.dns.clear();
        let started = self.start_routers(
            &launcher,
            &mut router_config,
            run_dir.path(),
            &mut cluster,
            deadline,
        )?;
        let Some(started) = started else { return stopped(Some(cluster), say) };
        let listen = router_config.listen;
        for r in &started {
            let (router, admin) = (format!("router{}", r.suffix), format!("admin{}", r.suffix));
            let (pid, policy) = (r.pid, &router_config.policy.kind);
            say.note(&format!("  {router:<11} http://{listen}  pid {pid}  policy {policy}"));
            say.note(&format!(
                "  {admin:<11} http://{}/stats  (also /metrics, /targets?top=20)",
                r.admin
            ));
        }
        if let Some(first) = started.first() {
            say.note(&format!("  dashboard   http://{}/", first.admin));
        }
        if let (Some(certificate), Some(tls)) = (&certificate, started.first().and_then(|r| r.tls))
        {
            // The certificate names localhost, not "any address".
            let host = match tls.ip().is_unspecified() {
                true => format!("localhost:{}", tls.port()),
                false => tls.to_string(),
            };
            say.note(&format!(
                "  https       curl --cacert {} --http2 https://{host}{example}",
                certificate.cert.display()
            ));
        }
        self.say_ready(say, hosts.as_deref(), client.as_ref(), listen, &tried, &launcher);
        watch(&signals, cluster, say)
    }

    /// The closing lines: the hosts, what to try and where the logs are.
    fn say_ready(
        &self,
        say: &dyn Report,
        hosts: Option<&Hosts>,
        client: Option<&Host>,
        listen: SocketAddr,
        tried: &Tried,
        launcher: &Launcher,
    ) {
        let Tried { on_client, example, docs } = tried;
        if let (Some(hosts), Some(client)) = (hosts, client) {
            say.note(&format!("  hosts       {}", hosts.describe()));
            say.note(&format!(
                "  client      {} (run commands there: {on_client}COMMAND)",
                client.ip
            ));
        }
        say.note(&format!("  try         {on_client}curl -i http://{listen}{example}"));
        say.note(&format!("  load        {on_client}{}", bench_line(listen, example, *docs)));
        say.note(&format!("  logs        {}", launcher.logs.dir.display()));
        say.note("larder up: ready; Ctrl-C or SIGTERM stops every process above");
    }

    /// The node flags that say what to serve: the docroot, or the origins.
    fn content(&self, docroot: &std::path::Path) -> Vec<std::ffi::OsString> {
        if self.origins.is_empty() {
            return vec!["--docroot".into(), docroot.as_os_str().to_owned()];
        }
        self.origins.iter().flat_map(|o| ["--origin".into(), o.into()]).collect()
    }

    /// Starts the routers on `config` into the cluster, each once the one before answers
    /// on its admin port with a load report from every node (its placement settled, see
    /// [`settled`]): the first binds `listen` (port 0 included) and the others the
    /// address it got, all with SO_REUSEPORT when there are several. `config.listen`
    /// ends as the bound address. None: a stop was requested meanwhile.
    fn start_routers(
        &self,
        launcher: &Launcher,
        config: &mut RouterConfig,
        dir: &std::path::Path,
        cluster: &mut Cluster,
        deadline: Instant,
    ) -> Result<Option<Vec<Started>>> {
        config.reuseport = self.routers > 1;
        config.router_header = true;
        let mut started = Vec::new();
        for k in 1..=self.routers {
            let admin = if k == 1 { self.admin.unwrap_or(ANY_LOCAL_PORT) } else { ANY_LOCAL_PORT };
            config.admin.listen = admin.to_string();
            config.name = Some(format!("r{k}"));
            let suffix = if self.routers == 1 { String::new() } else { format!(" r{k}") };
            let label = format!("router{}", suffix.replace(' ', "-"));
            let group = &mut cluster.routers;
            let Some(bound) = route::start(launcher, &label, config, dir, None, group, deadline)?
            else {
                return Ok(None);
            };
            config.listen = bound.addr;
            if let Some(tls) = bound.tls {
                config.tls.listen = tls.to_string();
            }
            let admin = bound.admin;
            let child = group.children.last().expect("started above");
            if !settled::every_node_reported(admin, deadline, &launcher.signals)
                .context(child.describe())?
            {
                return Ok(None);
            }
            started.push(Started { suffix, pid: child.pid(), admin, tls: bound.tls });
        }
        Ok(Some(started))
    }

    /// The routers' configuration: `--config` read as the router reads it (its nodes,
    /// addresses and name are replaced once they are known), `--policy` over it; the
    /// router checks the whole when it starts. `--routers` is checked here, first.
    fn router_config(&self) -> Result<RouterConfig> {
        if !(1..=MAX_ROUTERS).contains(&self.routers) {
            invalid!("routers: {} is not in 1..={MAX_ROUTERS}", self.routers);
        }
        if self.handoff && (!self.peers || self.hosts.is_some()) {
            invalid!("--handoff: with --peers on this machine only (not with --hosts)");
        }
        if self.tls.is_some() && (self.peers || self.hosts.is_some()) {
            invalid!("--tls: with a router on this machine only (not with --peers or --hosts)");
        }
        if self.hosts.is_some() && !self.origins.is_empty() {
            invalid!(
                "--hosts with --origin: the hosts' network cannot reach an origin on this machine"
            );
        }
        let mut c = match &self.config {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("reading {}", path.display()))?;
                toml::from_str::<RouterConfig>(&text)
                    .map_err(|e| LabError::Invalid(format!("parsing {}: {e}", path.display())))?
            }
            None => {
                let mut c = RouterConfig::default();
                c.policy.kind = DEFAULT_POLICY;
                c
            }
        };
        if let Some(p) = self.policy {
            c.policy.kind = p;
        }
        c.listen = self.listen;
        c.node_header = true;
        // Caching nodes are told each other's addresses: a replica fills from the first.
        c.peer_fill |= !self.origins.is_empty();
        c.mapping.host_in_key |= self.host_in_key;
        Ok(c)
    }

    /// The directory the nodes serve (`--docroot`, or the synthetic store, built if need
    /// be; none for caching nodes), the URL path of a document to try first, and the
    /// synthetic store's document count.
    fn documents(&self, say: &dyn Report) -> Result<(PathBuf, String, Option<u32>)> {
        if !self.origins.is_empty() {
            let origins = self.origins.join(", then ");
            say.note(&format!(
                "larder up: caching {origins}; each node caches {} MiB",
                self.cache_mb
            ));
            return Ok((PathBuf::new(), "/".to_string(), None));
        }
        match &self.docroot {
            Some(dir) if dir.is_dir() => {
                say.note(&format!(
                    "larder up: docroot {}; each node caches {} MiB",
                    dir.display(),
                    self.cache_mb
                ));
                Ok((dir.clone(), "/".to_string(), None))
            }
            Some(dir) => invalid!("--docroot {}: not a directory", dir.display()),
            None => {
                let root = store::root(self.store_dir.as_deref())?;
                let bytes = store_bytes(self.nodes, self.cache_mb);
                let s = store::ensure(&root, bytes, SizeMix::Hacc, say)?;
                say.note(&format!(
                    "larder up: store {} ({} documents, {:.1} MiB; each node caches {} MiB)",
                    s.dir.display(),
                    s.docs,
                    s.bytes as f64 / (1 << 20) as f64,
                    self.cache_mb
                ));
                Ok((s.dir, s.example, Some(s.docs)))
            }
        }
    }

    /// `larder up --bench`: the locality experiment, short, on this cluster's shape —
    /// `seconds` measured per policy after as long of warm-up, one round, its results
    /// under `<store dir>/up-bench`.
    pub fn bench_plan(&self, seconds: u64) -> Result<ExperimentPlan> {
        let time = Duration::from_secs(seconds);
        let cache_mb = bench_caches(self.cache_mb, self.nodes);
        let all_caches: u64 = cache_mb.iter().sum();
        Ok(ExperimentPlan {
            workloads: vec![WorkloadKind::new(Content::Dynamic, true)],
            systems: BENCH_POLICIES.iter().map(|&p| System::larder(p)).collect(),
            dataset_mb: Some((all_caches * BENCH_DATASET_QUARTERS_OF_ALL_CACHES / 4).max(1)),
            cache_mb,
            alpha: BENCH_ALPHA,
            rounds: 1,
            duration: time,
            warmup: time,
            out: store::root(self.store_dir.as_deref())?.join("up-bench"),
            store_dir: self.store_dir.clone(),
            verbose: self.verbose,
            hosts: self.hosts.clone(),
            ..ExperimentPlan::default()
        })
    }
}

/// What the closing lines suggest: run on the client host, a document to fetch, the
/// synthetic store's document count.
struct Tried<'a> {
    on_client: &'a str,
    example: &'a str,
    docs: Option<u32>,
}

/// Runs until a stop is requested (Ok) or a process of `cluster` dies on its own (an
/// error naming it, the rest stopped).
fn watch(signals: &Signals, mut cluster: Cluster, say: &dyn Report) -> Result<()> {
    loop {
        match signals.wait(IDLE_WAKE) {
            Wake::Stop => return stopped(Some(cluster), say),
            Wake::ChildExited | Wake::Timeout => {
                let exited = match cluster.routers.exited()? {
                    Some(e) => Some(e),
                    None => cluster.nodes.exited()?,
                };
                if let Some((what, tail)) = exited {
                    say.warn(&format!("larder up: {what}{tail}"));
                    say.warn("larder up: stopping the rest");
                    cluster.stop();
                    return Err(LabError::Child(what));
                }
            }
        }
    }
}

/// Stops what was started (by dropping it), saying so.
fn stopped(cluster: Option<Cluster>, say: &dyn Report) -> Result<()> {
    say.warn("larder up: stopping");
    drop(cluster);
    say.warn("larder up: stopped");
    Ok(())
}

/// The `larder bench` command that loads this cluster: over the synthetic store, the
/// generator's workload for exactly the store's documents (same seed and size mix) at
/// the URLs the store serves them under; otherwise the example URL over and over.
fn bench_line(listen: SocketAddr, example: &str, docs: Option<u32>) -> String {
    match docs {
        Some(docs) => format!(
            "larder bench --url http://{listen}/ --synth --synth-docs {docs} --synth-seed {} \
             --docroot-urls --flat --duration 10s",
            store::SEED
        ),
        None => format!("larder bench --url http://{listen}{example} --duration 10s"),
    }
}

/// `larder up --bench`'s caches: unequal, as in HACC's cluster: the first half of the
/// nodes `cache_mb`, the rest a quarter of it (at least 1 MiB). With 4 nodes of 64 MiB,
/// 64/64/16/16: 160 MiB in all, a data set of 120 MiB; `hash` gives every node 30 MiB,
/// which the 16 MiB nodes cannot hold, while a capacity-weighted split (48/48/12/12) fits.
fn bench_caches(cache_mb: u64, nodes: u16) -> Vec<u64> {
    let n = usize::from(nodes);
    let small = (cache_mb / BENCH_SMALL_CACHE_DIVISOR).max(1);
    (0..n).map(|i| if i < n.div_ceil(2) { cache_mb } else { small }).collect()
}

/// Bytes of synthetic store for `nodes` nodes of `cache_mb` MiB each.
fn store_bytes(nodes: u16, cache_mb: u64) -> u64 {
    let cache = cache_mb << 20;
    (cache * STORE_PER_CACHE).min(cache * u64::from(nodes) * STORE_QUARTERS_OF_ALL_CACHES / 4)
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
    fn bench_overflows_an_equal_split_but_not_a_weighted_one() {
        let caches = bench_caches(64, 4);
        assert_eq!(caches, [64, 64, 16, 16]);
        let all: u64 = caches.iter().sum();
        let dataset = all * BENCH_DATASET_QUARTERS_OF_ALL_CACHES / 4;
        // `hash`: every node a quarter of the data set, more than a small cache.
        assert!(dataset / 4 > 16, "{dataset}");
        // Weighted by capacity: every node's share fits its cache.
        assert!(caches.iter().all(|&c| dataset * c / all <= c));
        assert_eq!(bench_caches(1, 3), [1, 1, 1]);
    }
}

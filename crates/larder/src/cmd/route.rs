//! `larder route`: the front-end smart router.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context;
use router::config::DnsName;
use router::{Overrides, Router, RouterConfig, RouterError};
use tokio::net::{TcpListener, TcpSocket};
use tokio::signal::unix::{signal, SignalKind};

/// Route every HTTP request to the node most likely to hold what it needs.
///
/// Each request on a keep-alive client connection is dispatched on its own by the policy
/// (rr, wrr, least, hash, bounded, lard, lard-r, hacc, class), over pooled upstream
/// connections. The simple case takes flags; `--config FILE.toml` takes everything
/// (see examples/router.toml, which explains every key); flags given with a config
/// override its values. SIGHUP reloads the config file, SIGTERM drains and exits.
/// The admin API (/stats, /metrics, /targets?top=N) listens on 127.0.0.1:9090 by default.
/// Nodes can also come from DNS (--nodes-dns, --nodes-srv), asked again as records change.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// TOML configuration file.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Address clients connect to [default: 0.0.0.0:8080].
    #[arg(long)]
    listen: Option<SocketAddr>,
    /// A back-end node (repeat for each); replaces the config file's nodes.
    #[arg(long = "node", value_name = "ADDR")]
    nodes: Vec<SocketAddr>,
    /// Find nodes through DNS: every A and AAAA record of NAME is a node serving on PORT,
    /// named NAME/ADDRESS (repeat for each name). Merged with --node; replaces the config
    /// file's [[discovery.dns]]. Asked again every --dns-refresh-ms, sooner when the
    /// records' TTL runs out; a failed lookup keeps the nodes last found.
    #[arg(long = "nodes-dns", value_name = "NAME:PORT", value_parser = dns_flag)]
    nodes_dns: Vec<DnsName>,
    /// Find nodes through SRV records: NAME is the full SRV name (for example
    /// _http._tcp.web.default.svc.cluster.local); each target is a node on the record's
    /// port, named by the target, so it keeps its place when its address changes
    /// (repeat for each name). Merged as --nodes-dns.
    #[arg(long = "nodes-srv", value_name = "NAME", value_parser = srv_flag)]
    nodes_srv: Vec<DnsName>,
    /// The nameserver --nodes-dns and --nodes-srv ask, IP or IP:PORT (UDP; TCP for
    /// truncated answers) [default: the first nameserver in /etc/resolv.conf].
    #[arg(long, value_name = "ADDR")]
    dns_resolver: Option<String>,
    /// How often DNS discovery asks again, in milliseconds; sooner when a TTL runs out,
    /// but not within [discovery] min_refresh_ms (1000) [default: 5000].
    #[arg(long, value_name = "MS")]
    dns_refresh_ms: Option<u64>,
    /// Distribution policy [default: rr].
    #[arg(long)]
    policy: Option<String>,
    /// How lard, lard-r and hacc place a target this router has not placed: "shared"
    /// (alike on every router: candidates hashed on node names, a node that reports
    /// holding the target first) or "per-router" (the least loaded node now; several
    /// routers then disagree) [default: shared].
    #[arg(long, value_name = "MODE")]
    placement: Option<String>,
    /// Worker threads [default: one per core].
    #[arg(long)]
    threads: Option<usize>,
    /// Admin listener address; "" disables it [default: 127.0.0.1:9090].
    #[arg(long)]
    admin: Option<String>,
    /// Add X-Larder-Node (the serving node's name) to every response.
    #[arg(long)]
    node_header: bool,
    /// Add X-Larder-Router (this router's --name) to every response.
    #[arg(long)]
    router_header: bool,
    /// This router's name in X-Larder-Router [default: router-PID, its process id].
    #[arg(long)]
    name: Option<String>,
    /// Bind --listen with SO_REUSEPORT, so several routers share the address.
    #[arg(long)]
    reuseport: bool,
    /// Access log: a file, or "-" for stdout.
    #[arg(long)]
    access_log: Option<String>,
    /// Accept queue of --listen (capped by net.core.somaxconn) [default: 4096].
    #[arg(long)]
    backlog: Option<u32>,
    /// Largest request body; a larger one is refused with 413, 0 means no limit
    /// [default: 1048576].
    #[arg(long)]
    max_body_bytes: Option<u64>,
    /// Also serve HTTPS on this address (TLS 1.2 and 1.3, ALPN http/1.1), with
    /// --tls-cert and --tls-key; more certificates by SNI in the config's [tls] table.
    #[arg(long, value_name = "ADDR")]
    tls_listen: Option<String>,
    /// PEM certificate chain (leaf first) for --tls-listen; re-read on SIGHUP.
    #[arg(long, value_name = "FILE")]
    tls_cert: Option<String>,
    /// PEM private key of --tls-cert; re-read on SIGHUP.
    #[arg(long, value_name = "FILE")]
    tls_key: Option<String>,
}

impl Args {
    /// The config file (or defaults) with the flags applied on top.
    fn config(&self) -> Result<RouterConfig, RouterError> {
        let flags = Overrides {
            listen: self.listen,
            nodes: self.nodes.clone(),
            policy: self.policy.clone(),
            placement: self.placement.clone(),
            threads: self.threads,
            admin: self.admin.clone(),
            node_header: self.node_header,
            router_header: self.router_header,
            name: self.name.clone(),
            reuseport: self.reuseport,
            access_log: self.access_log.clone(),
            nodes_dns: self.nodes_dns.iter().chain(&self.nodes_srv).cloned().collect(),
            dns_resolver: self.dns_resolver.clone(),
            dns_refresh_ms: self.dns_refresh_ms,
            backlog: self.backlog,
            max_body_bytes: self.max_body_bytes,
            tls_listen: self.tls_listen.clone(),
            tls_cert: self.tls_cert.clone(),
            tls_key: self.tls_key.clone(),
        };
        flags.config(self.config.as_deref())
    }
}

pub fn run(args: Args) -> anyhow::Result<()> {
    serve(args).context("larder route")
}

/// The router as a process: its own runtime with `threads` workers, bound listeners, and
/// the signals: SIGHUP reloads the config (one that fails to load is reported and
/// ignored), SIGTERM or SIGINT drains and exits.
fn serve(args: Args) -> anyhow::Result<()> {
    let config = args.config()?;
    let threads = config.worker_threads();
    // One thread needs no work stealing: a current-thread runtime skips the scheduler's
    // cross-thread bookkeeping.
    let mut builder = if threads == 1 {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut b = tokio::runtime::Builder::new_multi_thread();
        b.worker_threads(threads);
        b
    };
    let runtime =
        builder.thread_name("larder-route").enable_all().build().context("starting the runtime")?;
    runtime.block_on(async move {
        let listener = bind(config.listen, config.reuseport, config.backlog)
            .with_context(|| format!("listening on {}", config.listen))?;
        let admin = match config.admin.listen.as_str() {
            "" => None,
            addr => Some(
                TcpListener::bind(addr)
                    .await
                    .with_context(|| format!("admin listener on {addr}"))?,
            ),
        };
        let mut hup = signal(SignalKind::hangup()).context("installing signals")?;
        let mut term = signal(SignalKind::terminate()).context("installing signals")?;
        let mut int = signal(SignalKind::interrupt()).context("installing signals")?;
        let tls_listener = match config.tls.listen.as_str() {
            "" => None,
            addr => {
                let addr: SocketAddr =
                    addr.parse().with_context(|| format!("tls listen address {addr}"))?;
                let l = bind(addr, config.reuseport, config.backlog)
                    .with_context(|| format!("listening on {addr}"))?;
                Some(l)
            }
        };
        // Built before the ready line, so a router that cannot start never says it is ready.
        let mut router = Router::new(config)?;
        eprintln!("{}", wire::RouterReady { addr: listener.local_addr()?, threads });
        if let Some(l) = tls_listener {
            let addr = l.local_addr()?;
            router::event("info", "tls listening", &[("addr", &addr)]);
            router = router.with_tls_listener(l);
        }
        let handle = router.handle();
        let watched = handle.clone();
        tokio::spawn(crate::memory::give_back_after_bursts(move || watched.connection_memory()));
        tokio::spawn(async move {
            while hup.recv().await.is_some() {
                if let Err(e) = args.config().and_then(|c| handle.reload(c)) {
                    router::event("error", "reload refused", &[("error", &e)]);
                }
            }
        });
        let shutdown = async move {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
            router::event("info", "draining", &[]);
        };
        Ok(router.serve(listener, admin, shutdown).await?)
    })
}

/// `--nodes-dns NAME:PORT`, or why not.
fn dns_flag(flag: &str) -> Result<DnsName, String> {
    DnsName::parse_addresses(flag).map_err(said)
}

/// `--nodes-srv NAME`, or why not.
fn srv_flag(flag: &str) -> Result<DnsName, String> {
    DnsName::parse_srv(flag).map_err(said)
}

fn said(e: RouterError) -> String {
    match e {
        RouterError::Config(why) => why,
        other => other.to_string(),
    }
}

/// The traffic listener: SO_REUSEADDR, SO_REUSEPORT if asked, and the configured accept
/// queue (tokio's own `bind` uses 128, which a burst of connects overflows).
fn bind(addr: SocketAddr, reuseport: bool, backlog: u32) -> std::io::Result<TcpListener> {
    let socket = if addr.is_ipv4() { TcpSocket::new_v4()? } else { TcpSocket::new_v6()? };
    socket.set_reuseaddr(true)?;
    socket.set_reuseport(reuseport)?;
    socket.bind(addr)?;
    socket.listen(backlog)
}

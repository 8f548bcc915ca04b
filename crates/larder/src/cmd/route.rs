//! `larder route`: the front-end smart router.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context;
use router::{NodeConfig, Router, RouterConfig, RouterError};
use tokio::net::TcpListener;
use tokio::signal::unix::{signal, SignalKind};

/// Route every HTTP request to the node most likely to hold what it needs.
///
/// Each request on a keep-alive client connection is dispatched on its own by the policy
/// (rr, wrr, least, hash, bounded, lard, lard-r, hacc, class), over pooled upstream
/// connections. The simple case takes flags; `--config FILE.toml` takes everything
/// (see examples/router.toml, which explains every key); flags given with a config
/// override its values. SIGHUP reloads the config file, SIGTERM drains and exits.
/// The admin API (/stats, /metrics, /targets?top=N) listens on 127.0.0.1:9090 by default.
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
    /// Distribution policy [default: rr].
    #[arg(long)]
    policy: Option<String>,
    /// Worker threads [default: one per core].
    #[arg(long)]
    threads: Option<usize>,
    /// Admin listener address; "" disables it [default: 127.0.0.1:9090].
    #[arg(long)]
    admin: Option<String>,
    /// Add X-Larder-Node (the serving node's name) to every response.
    #[arg(long)]
    node_header: bool,
    /// Access log: a file, or "-" for stdout.
    #[arg(long)]
    access_log: Option<String>,
}

impl Args {
    /// The config file (or defaults) with the flags applied on top.
    fn config(&self) -> Result<RouterConfig, RouterError> {
        let mut c = match &self.config {
            Some(path) => RouterConfig::load(path)?,
            None => RouterConfig::default(),
        };
        if let Some(l) = self.listen {
            c.listen = l;
        }
        if !self.nodes.is_empty() {
            c.nodes = self.nodes.iter().map(|a| NodeConfig::new(*a)).collect();
        }
        if let Some(p) = &self.policy {
            c.policy.kind = p.clone();
        }
        if let Some(t) = self.threads {
            c.threads = t;
        }
        if let Some(a) = &self.admin {
            c.admin.listen = a.clone();
        }
        if self.node_header {
            c.node_header = true;
        }
        if let Some(l) = &self.access_log {
            c.access_log = l.clone();
        }
        c.validate()?;
        Ok(c)
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
    let threads = match config.threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };
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
        let listener = TcpListener::bind(config.listen)
            .await
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
        let listen = listener.local_addr()?;
        eprintln!("{}", wire::RouterReady { addr: listen, threads });
        let router = Router::new(config)?;
        let handle = router.handle();
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

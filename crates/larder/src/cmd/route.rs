//! `larder route`: the front-end smart router.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context;
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
    #[command(flatten)]
    flags: Overrides,
}

impl Args {
    /// The config file (or defaults) with the flags applied on top.
    fn config(&self) -> Result<RouterConfig, RouterError> {
        self.flags.config(self.config.as_deref())
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
    runtime(threads, "larder-route")?
        .block_on(distribute(config, None, None, move || args.config()))
}

/// Serve as a router until SIGTERM or SIGINT (then drain): bind `config`'s listeners, say
/// so on stderr (with `backend`, a peer's own node), and on SIGHUP take what `reread`
/// gives (a config that fails to load is reported and ignored).
pub(crate) async fn distribute(
    config: RouterConfig,
    backend: Option<SocketAddr>,
    hand_on: Option<router::PeerHandOn>,
    reread: impl Fn() -> Result<RouterConfig, RouterError> + Send + 'static,
) -> anyhow::Result<()> {
    let threads = config.worker_threads();
    let listener = bind(config.listen, config.reuseport, config.backlog)
        .with_context(|| format!("listening on {}", config.listen))?;
    let admin = match config.admin.listen.as_str() {
        "" => None,
        addr => Some(
            TcpListener::bind(addr).await.with_context(|| format!("admin listener on {addr}"))?,
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
    if let Some(hand_on) = hand_on {
        router.handle().place_hand_ons(&hand_on);
    }
    let admin_addr = admin.as_ref().map(TcpListener::local_addr).transpose()?;
    let addr = listener.local_addr()?;
    let tls = tls_listener.as_ref().map(TcpListener::local_addr).transpose()?;
    let ready = wire::RouterReady { addr, admin: admin_addr, threads, backend, tls };
    eprintln!("{ready}");
    if let Some(l) = tls_listener {
        router::event("info", "tls listening", &[("addr", &l.local_addr()?)]);
        router = router.with_tls_listener(l);
    }
    let handle = router.handle();
    let watched = handle.clone();
    tokio::spawn(crate::memory::give_back_after_bursts(move || watched.connection_memory()));
    tokio::spawn(async move {
        while hup.recv().await.is_some() {
            if let Err(e) = reread().and_then(|c| handle.reload(c)) {
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
}

/// A router's runtime with `threads` workers named `name`.
pub(crate) fn runtime(threads: usize, name: &str) -> anyhow::Result<tokio::runtime::Runtime> {
    // One thread needs no work stealing: a current-thread runtime skips the scheduler's
    // cross-thread bookkeeping.
    let mut builder = if threads == 1 {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut b = tokio::runtime::Builder::new_multi_thread();
        b.worker_threads(threads);
        b
    };
    builder
        .thread_name(name)
        .on_thread_park(crate::memory::collect_if_asked)
        .enable_all()
        .build()
        .context("starting the runtime")
}

/// The traffic listener: SO_REUSEADDR, SO_REUSEPORT if asked, and the configured accept
/// queue (tokio's own `bind` uses 128, which a burst of connects overflows).
pub(crate) fn bind(
    addr: SocketAddr,
    reuseport: bool,
    backlog: u32,
) -> std::io::Result<TcpListener> {
    let socket = if addr.is_ipv4() { TcpSocket::new_v4()? } else { TcpSocket::new_v6()? };
    socket.set_reuseaddr(true)?;
    socket.set_reuseport(reuseport)?;
    socket.bind(addr)?;
    socket.listen(backlog)
}

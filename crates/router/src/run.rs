//! Running the router as a process: its own multi-thread runtime, bound listeners, and
//! the signals — SIGHUP reloads the config, SIGTERM or SIGINT drains and exits.

use tokio::net::TcpListener;
use tokio::signal::unix::{signal, SignalKind};

use crate::log::event;
use crate::{Router, RouterConfig, RouterError};

/// Load the config with `load`, serve until SIGTERM/SIGINT, reloading with `load` on
/// every SIGHUP (a config that fails to load or validate is reported and ignored).
pub fn run<F>(load: F) -> Result<(), RouterError>
where
    F: Fn() -> Result<RouterConfig, RouterError> + Send + 'static,
{
    let config = load()?;
    let threads = match config.threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };
    // One thread needs no work stealing: a current-thread runtime runs everything on
    // this thread and skips the scheduler's cross-thread bookkeeping.
    let mut builder = if threads == 1 {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut b = tokio::runtime::Builder::new_multi_thread();
        b.worker_threads(threads);
        b
    };
    let runtime = builder
        .thread_name("larder-route")
        .enable_all()
        .build()
        .map_err(|e| RouterError::io("starting the runtime", e))?;
    runtime.block_on(async move {
        let listener = TcpListener::bind(config.listen)
            .await
            .map_err(|e| RouterError::io(format!("listening on {}", config.listen), e))?;
        let admin = match config.admin.listen.as_str() {
            "" => None,
            addr => Some(
                TcpListener::bind(addr)
                    .await
                    .map_err(|e| RouterError::io(format!("admin listener on {addr}"), e))?,
            ),
        };
        let signals = |kind| signal(kind).map_err(|e| RouterError::io("installing signals", e));
        let (mut hup, mut term, mut int) = (
            signals(SignalKind::hangup())?,
            signals(SignalKind::terminate())?,
            signals(SignalKind::interrupt())?,
        );
        let listen = listener.local_addr().map_err(|e| RouterError::io("listener", e))?;
        eprintln!("{}", wire::RouterReady { addr: listen, threads });
        let router = Router::new(config)?;
        let handle = router.handle();
        tokio::spawn(async move {
            while hup.recv().await.is_some() {
                match load().and_then(|c| handle.reload(c)) {
                    Ok(()) => {}
                    Err(e) => event("error", "reload refused", &[("error", &e)]),
                }
            }
        });
        let shutdown = async move {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
            event("info", "draining", &[]);
        };
        router.serve(listener, admin, shutdown).await
    })
}

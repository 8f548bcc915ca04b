//! The accept loop and its life cycle: bound connections, sample load, hand the access
//! log to its writer, and on shutdown stop accepting, let in-flight requests finish, then return.

use crate::config::Config;
use crate::connection::serve_connection;
use crate::error::NodeError;
use crate::handoff;
use crate::state::NodeState;
use crate::stats::SAMPLE_GAP;
use std::future::Future;
use std::os::fd::AsRawFd;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio::sync::{watch, Semaphore};

/// How often load is sampled and the access log flushed in the background.
const TICK: Duration = Duration::from_millis(250);

/// Serve `listener` with `config` until `shutdown` completes, then stop accepting, finish
/// in-flight requests (within `config.shutdown_grace`) and return.
///
/// Runs one event loop on the calling thread (a current-thread runtime) plus the helper
/// threads; blocking, so a test or the CLI gives it a thread of its own.
pub fn serve(
    listener: std::net::TcpListener,
    mut config: Config,
    shutdown: impl Future<Output = ()>,
) -> Result<(), NodeError> {
    config.validate()?;
    // A caching node knows itself among its peers (the slices of large objects it owns).
    if let Some(o) = config.origin.as_mut() {
        o.own_addr = o.own_addr.or(listener.local_addr().ok());
    }
    listener.set_nonblocking(true)?;
    // The std listener was made with a small backlog; a second listen() raises it.
    // SAFETY: plain syscall on a listening socket we hold.
    unsafe {
        libc::listen(listener.as_raw_fd(), config.backlog);
    }
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, run(listener, config, shutdown))
}

async fn run(
    listener: std::net::TcpListener,
    config: Config,
    shutdown: impl Future<Output = ()>,
) -> Result<(), NodeError> {
    let listener = TcpListener::from_std(listener)?;
    let (stop_tx, stop_rx) = watch::channel(false);
    let max = config.max_connections;
    let grace = config.shutdown_grace;
    let node = Rc::new(NodeState::new(config, stop_rx)?);
    let slots = Arc::new(Semaphore::new(max));
    tokio::task::spawn_local(tick(Rc::clone(&node)));
    let handoff_socket = node.config.handoff.as_ref().map(|h| h.socket.clone());
    if let Some(h) = &node.config.handoff {
        let adoptions = handoff::bind(h).map_err(NodeError::path("handoff socket", &h.socket))?;
        tokio::task::spawn_local(handoff::accept(Rc::clone(&node), adoptions, Arc::clone(&slots)));
    }
    tokio::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            p = Arc::clone(&slots).acquire_owned() => match p {
                Ok(p) => p,
                Err(_) => break,
            },
            _ = &mut shutdown => break,
        };
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = &mut shutdown => break,
        };
        match accepted {
            Ok((stream, peer)) => {
                let _ = stream.set_nodelay(true);
                let node = Rc::clone(&node);
                tokio::task::spawn_local(async move {
                    serve_connection(node, stream, peer).await;
                    drop(permit);
                });
            }
            Err(e) => {
                // Out of descriptors or a connection reset before accept: back off briefly
                // instead of spinning on an error that will repeat at once.
                eprintln!("larder node: accept: {e}");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    }
    drop(listener);
    let _ = stop_tx.send(true);
    // Every connection holds a slot: when all slots are back, all connections are done.
    let _ = tokio::time::timeout(grace, slots.acquire_many(max as u32)).await;
    if let Some(log) = &node.log {
        log.borrow_mut().hand_over();
    }
    if let Some(path) = handoff_socket {
        handoff::unlink(&path);
    }
    Ok(())
}

/// Background upkeep on the loop: load samples for the report, access-log flushes.
async fn tick(node: Rc<NodeState>) {
    let mut interval = tokio::time::interval(TICK);
    loop {
        interval.tick().await;
        node.load.borrow_mut().sample(Instant::now(), SAMPLE_GAP);
        if let Some(log) = &node.log {
            log.borrow_mut().hand_over();
        }
    }
}

//! `larder node`: run the back-end web server (Flash-like AMPED) on a document root.

use anyhow::Context;
use clap::Parser;
use std::net::SocketAddr;

/// Serve a document root, or cache an origin: the back-end web server (Flash-like).
///
/// Serves over HTTP/1.1 the way Flash did: one event loop that never waits
/// for the disk, helper threads for path translation and disk reads, and caches for path
/// translation, response headers and file data. Reports its load at `--load-path` for the
/// router. SIGTERM (or Ctrl-C) stops accepting, finishes in-flight requests and exits.
///
/// With --origin the node is a cache in front of web servers instead: it serves what it
/// holds and fetches misses from the origins over pooled keep-alive connections, keeping
/// responses as HTTP caching allows (Cache-Control, Expires, Age, Vary, revalidation with
/// 304, stale-if-error, stale-while-revalidate). Concurrent misses for one URL cause one
/// origin request. A single Range on a stored object is answered 206 from the store.
/// Responses carry X-Larder-Cache: HIT, MISS, REVALIDATED, STALE, GRACE or PASS.
#[derive(Parser, Debug)]
pub struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    #[command(flatten)]
    flags: node::Flags,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let (cache_mib, direct_io) = (args.flags.cache_mb, args.flags.direct_io);
    let (cfg, docroot) = args.flags.config()?;
    cfg.validate()?;
    raise_fd_limit(&cfg)?;
    let listener = std::net::TcpListener::bind(args.listen)
        .with_context(|| format!("binding {}", args.listen))?;
    let ready = wire::NodeReady { docroot, addr: listener.local_addr()?, cache_mib, direct_io };
    eprintln!("{ready}");
    node::serve(listener, cfg, termination_signal())?;
    Ok(())
}

/// Raise the open-file limit for a node of `cfg`, warning when it stays too low.
pub(crate) fn raise_fd_limit(cfg: &node::Config) -> anyhow::Result<()> {
    // Each connection and each cached path holds a descriptor: raise the soft limit to
    // the hard one (10,000 keep-alive clients need more than the usual 1024).
    let fds = rlimit::increase_nofile_limit(u64::MAX).context("raising the open-file limit")?;
    let needed = cfg.max_connections as u64 + cfg.path_cache_entries + 64;
    if fds < needed {
        eprintln!(
            "larder node: warning: open-file limit {fds} is below max-connections + \
             path-cache-entries ({needed}); accepts will fail when it runs out"
        );
    }
    Ok(())
}

/// Completes on SIGTERM or SIGINT: the node's shutdown future.
async fn termination_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    match (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) {
        (Ok(mut term), Ok(mut int)) => {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
        }
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("larder node: cannot watch for SIGTERM ({e}); stop it with SIGKILL");
            std::future::pending::<()>().await;
        }
    }
}

//! Process-level set-up for running a node as a program: the open-file limit and the
//! termination signals.

/// Raise the soft open-file limit to the hard limit (each connection and each cached path
/// holds a descriptor; 10,000 keep-alive clients need more than the usual 1024). Returns
/// the new soft limit.
pub fn raise_open_file_limit() -> std::io::Result<u64> {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: `lim` is a valid rlimit to fill in.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    if lim.rlim_cur < lim.rlim_max {
        lim.rlim_cur = lim.rlim_max;
        // SAFETY: as above; raising the soft limit up to the hard one needs no privilege.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(lim.rlim_cur)
}

/// Completes on SIGTERM or SIGINT: pass it to [`crate::serve`] as the shutdown future.
pub async fn termination_signal() {
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

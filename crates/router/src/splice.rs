//! Zero-copy relay of a body between two TCP sockets: on Linux, splice(2) moves the bytes
//! from the source socket into a pipe and from the pipe into the destination socket, so
//! they never pass through the router's memory (no copy into a buffer and out again, no
//! buffer held at all while they move).
//!
//! This file is the only one that makes these system calls, through `rustix`'s safe
//! wrappers (no `unsafe` here either). Pipes are reused: a relay takes one from a small
//! process-wide stock and gives it back empty, so a busy connection does not pay two
//! descriptors and a pipe's set-up per body; a relay that ends with bytes still in its
//! pipe (an error) closes it instead.
//!
//! Where the kernel refuses (no splice, a seccomp filter, a socket type it cannot splice),
//! [`relay`] says how many bytes it delivered and the caller relays the rest by copying:
//! nothing is lost or sent twice.

use std::time::Duration;

use tokio::net::TcpStream;

/// A socket whose bytes can be spliced: the plain TCP stream under a relay's source or
/// destination, or none (TLS, in-memory sinks), which keeps the copy path.
pub(crate) trait Spliceable {
    fn tcp(&self) -> Option<&TcpStream>;
}

impl Spliceable for TcpStream {
    fn tcp(&self) -> Option<&TcpStream> {
        Some(self)
    }
}

impl Spliceable for tokio::net::tcp::WriteHalf<'_> {
    fn tcp(&self) -> Option<&TcpStream> {
        Some(self.as_ref())
    }
}

impl Spliceable for tokio_rustls::server::TlsStream<TcpStream> {
    fn tcp(&self) -> Option<&TcpStream> {
        None
    }
}

/// Why a spliced relay stopped before its end.
#[derive(Debug)]
pub(crate) enum Stop {
    /// The kernel refused to splice; `moved` bytes reached the destination, the rest is
    /// still in the source socket.
    Refused { moved: u64 },
    /// The source closed early.
    SourceClosed,
    /// The source sent nothing for the timeout.
    SourceTimeout,
    /// The destination failed or took nothing for the timeout.
    Sink,
}

/// How many idle pipes the process keeps for reuse (from the config; process-wide).
pub(crate) fn set_spare_limit(n: usize) {
    imp::set_spare_limit(n);
}

/// Move exactly `len` bytes from `src` to `dst`, each wait bounded by `timeout`.
pub(crate) async fn relay(
    src: &TcpStream,
    dst: &TcpStream,
    len: u64,
    timeout: Duration,
) -> Result<(), Stop> {
    imp::relay(src, dst, len, timeout).await
}

#[cfg(target_os = "linux")]
mod imp {
    use std::io;
    use std::os::fd::OwnedFd;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    use std::time::Duration;

    use rustix::pipe::{pipe_with, splice, PipeFlags, SpliceFlags};
    use tokio::io::Interest;
    use tokio::net::TcpStream;

    use crate::splice::Stop;

    /// Most bytes asked of one splice: a default pipe's capacity (the kernel moves what
    /// fits and says how much).
    const STEP: usize = 64 * 1024;

    /// One pipe, empty whenever it is not in a relay.
    struct Pipe {
        read: OwnedFd,
        write: OwnedFd,
    }

    static SPARE: Mutex<Vec<Pipe>> = Mutex::new(Vec::new());
    static SPARE_LIMIT: AtomicUsize = AtomicUsize::new(64);

    pub(super) fn set_spare_limit(n: usize) {
        SPARE_LIMIT.store(n, Ordering::Relaxed);
        SPARE.lock().unwrap_or_else(|e| e.into_inner()).truncate(n);
    }

    fn take_pipe() -> io::Result<Pipe> {
        if let Some(p) = SPARE.lock().unwrap_or_else(|e| e.into_inner()).pop() {
            return Ok(p);
        }
        let (read, write) = pipe_with(PipeFlags::NONBLOCK | PipeFlags::CLOEXEC)?;
        Ok(Pipe { read, write })
    }

    fn give_pipe(p: Pipe) {
        let mut spare = SPARE.lock().unwrap_or_else(|e| e.into_inner());
        if spare.len() < SPARE_LIMIT.load(Ordering::Relaxed) {
            spare.push(p);
        }
    }

    /// An error that means "this cannot be spliced" rather than "this connection failed":
    /// a kernel or socket without splice, or a filter that forbids the call.
    fn refused(e: &io::Error) -> bool {
        use rustix::io::Errno;
        matches!(
            Errno::from_io_error(e),
            Some(Errno::INVAL | Errno::NOSYS | Errno::OPNOTSUPP | Errno::PERM)
        )
    }

    const FLAGS: SpliceFlags = SpliceFlags::MOVE.union(SpliceFlags::NONBLOCK);

    pub(super) async fn relay(
        src: &TcpStream,
        dst: &TcpStream,
        len: u64,
        timeout: Duration,
    ) -> Result<(), Stop> {
        let Ok(pipe) = take_pipe() else {
            return Err(Stop::Refused { moved: 0 });
        };
        let mut left = len;
        // Bytes in the pipe, taken from `src` and not yet given to `dst`.
        let mut held = 0usize;
        while left > 0 || held > 0 {
            if held == 0 {
                #[cfg(test)]
                if crate::splice::tests::refuse_at(len - left) {
                    give_pipe(pipe);
                    return Err(Stop::Refused { moved: len - left });
                }
                let want = left.min(STEP as u64) as usize;
                // The pipe is empty, so "would block" can only mean the socket has nothing.
                let n = loop {
                    let r = src.try_io(Interest::READABLE, || {
                        Ok(splice(src, None, &pipe.write, None, want, FLAGS)?)
                    });
                    match r {
                        Ok(0) => return Err(Stop::SourceClosed),
                        Ok(n) => break n,
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                            match tokio::time::timeout(timeout, src.readable()).await {
                                Ok(Ok(())) => {}
                                Ok(Err(_)) => return Err(Stop::SourceClosed),
                                Err(_) => return Err(Stop::SourceTimeout),
                            }
                        }
                        Err(e) if refused(&e) => {
                            give_pipe(pipe);
                            return Err(Stop::Refused { moved: len - left });
                        }
                        Err(_) => return Err(Stop::SourceClosed),
                    }
                };
                left -= n as u64;
                held = n;
            }
            let r = dst.try_io(Interest::WRITABLE, || {
                Ok(splice(&pipe.read, None, dst, None, held, FLAGS)?)
            });
            match r {
                Ok(0) => return Err(Stop::Sink),
                Ok(n) => held -= n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    match tokio::time::timeout(timeout, dst.writable()).await {
                        Ok(Ok(())) => {}
                        _ => return Err(Stop::Sink),
                    }
                }
                Err(e) if refused(&e) => {
                    // The source side spliced, the destination will not: copy out what
                    // the pipe holds, and leave the rest to the caller.
                    copy_out(&pipe, held, dst, timeout).await?;
                    return Err(Stop::Refused { moved: len - left });
                }
                Err(_) => return Err(Stop::Sink),
            }
        }
        give_pipe(pipe);
        Ok(())
    }

    /// Read `held` bytes out of `pipe` and write them to `dst` the ordinary way.
    async fn copy_out(
        pipe: &Pipe,
        held: usize,
        dst: &TcpStream,
        timeout: Duration,
    ) -> Result<(), Stop> {
        let mut bytes = vec![0u8; held];
        let mut got = 0;
        while got < held {
            match rustix::io::read(&pipe.read, &mut bytes[got..]) {
                Ok(0) | Err(_) => return Err(Stop::Sink),
                Ok(n) => got += n,
            }
        }
        let mut sent = 0;
        while sent < held {
            match dst.try_write(&bytes[sent..]) {
                Ok(n) => sent += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    match tokio::time::timeout(timeout, dst.writable()).await {
                        Ok(Ok(())) => {}
                        _ => return Err(Stop::Sink),
                    }
                }
                Err(_) => return Err(Stop::Sink),
            }
        }
        Ok(())
    }
}

/// Elsewhere the kernel has no splice: every relay is refused at once and copies.
#[cfg(not(target_os = "linux"))]
mod imp {
    use std::time::Duration;

    use tokio::net::TcpStream;

    use crate::splice::Stop;

    pub(super) fn set_spare_limit(_: usize) {}

    pub(super) async fn relay(
        _: &TcpStream,
        _: &TcpStream,
        _: u64,
        _: Duration,
    ) -> Result<(), Stop> {
        Err(Stop::Refused { moved: 0 })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::cell::Cell;

    thread_local! {
        static REFUSE_FROM: Cell<Option<u64>> = const { Cell::new(None) };
    }

    /// Make splicing on this thread refuse once `moved` bytes went through (None: never),
    /// as a kernel without splice would: the test of the copy path taking over.
    pub(crate) fn refuse_from(moved: Option<u64>) {
        REFUSE_FROM.set(moved);
    }

    pub(super) fn refuse_at(moved: u64) -> bool {
        REFUSE_FROM.get().is_some_and(|at| moved >= at)
    }
}

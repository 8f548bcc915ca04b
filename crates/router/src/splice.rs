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

/// The capacity asked of each new pipe (from the config; process-wide). A larger pipe
/// moves a body in fewer splices, so fewer wake-ups of the router and of the client.
pub(crate) fn set_pipe_bytes(n: usize) {
    imp::set_pipe_bytes(n);
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

    use rustix::pipe::{
        fcntl_getpipe_size, fcntl_setpipe_size, pipe_with, splice, PipeFlags, SpliceFlags,
    };
    use tokio::io::Interest;
    use tokio::net::TcpStream;

    use crate::splice::Stop;

    /// A pipe's capacity by default (when the size cannot even be asked).
    const DEFAULT_CAPACITY: usize = 64 * 1024;

    /// One pipe, empty whenever it is not in a relay.
    struct Pipe {
        read: OwnedFd,
        write: OwnedFd,
        /// What it holds at most: the most bytes asked of one splice (the kernel moves
        /// what fits and says how much).
        capacity: usize,
        /// The size the config asked for when it was made (a reload may change it).
        asked: usize,
    }

    static SPARE: Mutex<Vec<Pipe>> = Mutex::new(Vec::new());
    static SPARE_LIMIT: AtomicUsize = AtomicUsize::new(64);
    static PIPE_BYTES: AtomicUsize = AtomicUsize::new(DEFAULT_CAPACITY);

    pub(super) fn set_spare_limit(n: usize) {
        SPARE_LIMIT.store(n, Ordering::Relaxed);
        SPARE.lock().unwrap_or_else(|e| e.into_inner()).truncate(n);
    }

    pub(super) fn set_pipe_bytes(n: usize) {
        if PIPE_BYTES.swap(n, Ordering::Relaxed) != n {
            // Spare pipes of the old size go; new ones are made at the new size.
            SPARE.lock().unwrap_or_else(|e| e.into_inner()).clear();
        }
    }

    fn take_pipe() -> io::Result<Pipe> {
        if let Some(p) = SPARE.lock().unwrap_or_else(|e| e.into_inner()).pop() {
            return Ok(p);
        }
        let (read, write) = pipe_with(PipeFlags::NONBLOCK | PipeFlags::CLOEXEC)?;
        let want = PIPE_BYTES.load(Ordering::Relaxed);
        // The kernel rounds up to whole pages and may refuse (above `fs.pipe-max-size`,
        // or past the user's pipe allowance, where new pipes start smaller): then the
        // pipe keeps the size it has.
        let capacity = match fcntl_setpipe_size(&write, want) {
            Ok(n) => n,
            Err(_) => fcntl_getpipe_size(&write).unwrap_or(DEFAULT_CAPACITY),
        };
        Ok(Pipe { read, write, capacity, asked: want })
    }

    fn give_pipe(p: Pipe) {
        let mut spare = SPARE.lock().unwrap_or_else(|e| e.into_inner());
        if spare.len() < SPARE_LIMIT.load(Ordering::Relaxed)
            && p.asked == PIPE_BYTES.load(Ordering::Relaxed)
        {
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

    /// The capacity of the pipe a relay would take now (the test of the sizing).
    #[cfg(test)]
    pub(super) fn next_pipe_capacity() -> usize {
        let pipe = take_pipe().expect("a pipe");
        let capacity = pipe.capacity;
        give_pipe(pipe);
        capacity
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
                let want = left.min(pipe.capacity as u64) as usize;
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

    pub(super) fn set_pipe_bytes(_: usize) {}

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

    /// Pipes take the configured size (a page is the least the kernel gives), and a body
    /// many times a pipe's size moves in as many steps, byte-exact, as does one that fits
    /// a large pipe whole.
    #[cfg(target_os = "linux")]
    #[test]
    fn pipes_take_the_configured_size_and_relay_byte_exact_at_any_size() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        use tokio::net::{TcpListener, TcpStream};

        async fn pair() -> (TcpStream, TcpStream) {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let near = TcpStream::connect(listener.local_addr().unwrap()).await.unwrap();
            let (far, _) = listener.accept().await.unwrap();
            (near, far)
        }

        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let body: Vec<u8> = (0..300_000u32).map(|i| (i * 13 + i / 509) as u8).collect();
        for size in [4096, 1 << 20] {
            super::set_pipe_bytes(size);
            let capacity = super::imp::next_pipe_capacity();
            // 1 MiB is the kernel's default `fs.pipe-max-size`; a lower one keeps 64 KiB.
            assert!(
                capacity == size || (size > 4096 && capacity == 64 * 1024),
                "{size}: {capacity}"
            );
            rt.block_on(async {
                let (mut feeder, src) = pair().await;
                let (dst, mut reader) = pair().await;
                let sent = body.clone();
                let feed = tokio::spawn(async move { feeder.write_all(&sent).await.unwrap() });
                let read = tokio::spawn(async move {
                    let mut got = vec![0u8; 300_000];
                    reader.read_exact(&mut got).await.unwrap();
                    got
                });
                let timeout = std::time::Duration::from_secs(10);
                let moved = super::relay(&src, &dst, body.len() as u64, timeout).await;
                assert!(moved.is_ok(), "pipe of {size}: {moved:?}");
                feed.await.unwrap();
                assert!(read.await.unwrap() == body, "pipe of {size}: body differs");
            });
        }
        super::set_pipe_bytes(64 * 1024);
    }
}

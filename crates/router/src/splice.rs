//! Zero-copy relay of a body between two TCP sockets: on Linux, splice(2) moves the bytes
//! from the source socket into a pipe and from the pipe into the destination socket, so
//! they never pass through the router's memory (no copy into a buffer and out again, no
//! buffer held at all while they move).
//!
//! This file is the only one that splices, through `rustix`'s safe wrappers (no `unsafe`
//! here either). Pipes come from the router's [`PipePool`] and go back to it empty.
//!
//! Where the kernel refuses (no splice, a seccomp filter, a socket type it cannot splice),
//! [`relay`] says how many bytes it delivered and the caller relays the rest by copying:
//! nothing is lost or sent twice.

use std::time::Duration;

use tokio::net::TcpStream;

use crate::pipe_pool::PipePool;

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

/// Move exactly `len` bytes from `src` to `dst` through a pipe of `pipes`, each wait
/// bounded by `timeout`.
pub(crate) async fn relay(
    pipes: &PipePool,
    src: &TcpStream,
    dst: &TcpStream,
    len: u64,
    timeout: Duration,
) -> Result<(), Stop> {
    imp::relay(pipes, src, dst, len, timeout).await
}

#[cfg(target_os = "linux")]
mod imp {
    use std::io;
    use std::time::Duration;

    use rustix::pipe::{splice, SpliceFlags};
    use tokio::io::Interest;
    use tokio::net::TcpStream;

    use crate::pipe_pool::{Pipe, PipePool};
    use crate::splice::Stop;

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
        pipes: &PipePool,
        src: &TcpStream,
        dst: &TcpStream,
        len: u64,
        timeout: Duration,
    ) -> Result<(), Stop> {
        let Ok(pipe) = pipes.take() else {
            return Err(Stop::Refused { moved: 0 });
        };
        let mut left = len;
        // Bytes in the pipe, taken from `src` and not yet given to `dst`.
        let mut held = 0usize;
        while left > 0 || held > 0 {
            if held == 0 {
                #[cfg(test)]
                if crate::splice::tests::refuse_at(len - left) {
                    pipes.give(pipe);
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
                            pipes.give(pipe);
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
        pipes.give(pipe);
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

    use crate::pipe_pool::PipePool;
    use crate::splice::Stop;

    pub(super) async fn relay(
        _: &PipePool,
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
            let pipes = super::PipePool::default();
            pipes.configure(1, size);
            let capacity = pipes.take().expect("a pipe").capacity;
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
                let moved = super::relay(&pipes, &src, &dst, body.len() as u64, timeout).await;
                assert!(moved.is_ok(), "pipe of {size}: {moved:?}");
                feed.await.unwrap();
                assert!(read.await.unwrap() == body, "pipe of {size}: body differs");
            });
        }
    }
}

//! One router's stock of idle pipes for splice(2) relays, and the size new pipes are
//! asked for.
//!
//! A relay takes a pipe and gives it back empty, so a busy connection does not pay two
//! descriptors and a pipe's set-up per body; a relay that ends with bytes still in its
//! pipe (an error) drops it instead, which closes it. The stock belongs to the router
//! that made it, so two routers in one process (tests, peers) keep their own limits and
//! pipe sizes.

/// Where the kernel has no splice, no pipe is ever made: the pool only keeps its shape.
#[cfg(not(target_os = "linux"))]
#[derive(Default)]
pub(crate) struct PipePool;

#[cfg(not(target_os = "linux"))]
impl PipePool {
    pub(crate) fn configure(&self, _spare: usize, _pipe_bytes: usize) {}
}

#[cfg(target_os = "linux")]
pub(crate) use linux::{Pipe, PipePool};

#[cfg(target_os = "linux")]
mod linux {
    use std::io;
    use std::os::fd::OwnedFd;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use rustix::pipe::{fcntl_getpipe_size, fcntl_setpipe_size, pipe_with, PipeFlags};

    use crate::spares::Spares;

    /// A pipe's capacity by default (when the size cannot even be asked).
    const DEFAULT_CAPACITY: usize = 64 * 1024;

    /// One pipe, empty whenever it is not in a relay.
    pub(crate) struct Pipe {
        pub read: OwnedFd,
        pub write: OwnedFd,
        /// What it holds at most: the most bytes asked of one splice (the kernel moves
        /// what fits and says how much).
        pub capacity: usize,
        /// The size the pool asked for when it was made (a reload may change it).
        asked: usize,
    }

    pub(crate) struct PipePool {
        spare: Spares<Pipe>,
        pipe_bytes: AtomicUsize,
    }

    impl Default for PipePool {
        fn default() -> Self {
            PipePool { spare: Spares::default(), pipe_bytes: AtomicUsize::new(DEFAULT_CAPACITY) }
        }
    }

    impl PipePool {
        /// Keep at most `spare` idle pipes, and make new ones of `pipe_bytes` (from the
        /// config). A larger pipe moves a body in fewer splices, so fewer wake-ups of
        /// the router and of the client.
        pub(crate) fn configure(&self, spare: usize, pipe_bytes: usize) {
            if self.pipe_bytes.swap(pipe_bytes, Ordering::Relaxed) != pipe_bytes {
                // Spare pipes of the old size go; new ones are made at the new size.
                self.spare.clear();
            }
            self.spare.keep_at_most(spare);
        }

        /// An idle pipe, or a new one.
        pub(crate) fn take(&self) -> io::Result<Pipe> {
            if let Some(p) = self.spare.take(|_| true) {
                return Ok(p);
            }
            let (read, write) = pipe_with(PipeFlags::NONBLOCK | PipeFlags::CLOEXEC)?;
            let want = self.pipe_bytes.load(Ordering::Relaxed);
            // The kernel rounds up to whole pages and may refuse (above
            // `fs.pipe-max-size`, or past the user's pipe allowance, where new pipes start
            // smaller): then the pipe keeps the size it has.
            let capacity = match fcntl_setpipe_size(&write, want) {
                Ok(n) => n,
                Err(_) => fcntl_getpipe_size(&write).unwrap_or(DEFAULT_CAPACITY),
            };
            Ok(Pipe { read, write, capacity, asked: want })
        }

        /// `p`, empty, back for reuse if there is room and it has the size asked now.
        pub(crate) fn give(&self, p: Pipe) {
            if p.asked == self.pipe_bytes.load(Ordering::Relaxed) {
                self.spare.give(p);
            }
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn two_pools_keep_their_own_limits_and_sizes() {
            let (small, large) = (PipePool::default(), PipePool::default());
            small.configure(1, 4096);
            large.configure(3, 8192);
            for pool in [&small, &large] {
                let pipes: Vec<Pipe> = (0..4).map(|_| pool.take().unwrap()).collect();
                pipes.into_iter().for_each(|p| pool.give(p));
            }
            assert_eq!((small.spare.len(), large.spare.len()), (1, 3));
            let (a, b) = (small.take().unwrap(), large.take().unwrap());
            assert_eq!((a.capacity, b.capacity), (4096, 8192));
            small.give(a);
            large.give(b);
            large.configure(3, 16384);
            assert_eq!(
                (small.spare.len(), large.spare.len()),
                (1, 0),
                "a new size empties one only"
            );
        }
    }
}

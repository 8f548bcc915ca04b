//! One router's stock of spare read buffers, and the count of bytes its buffers hold.
//!
//! A buffer given back goes to a small stock of spares (`limits.spare_buffers`), which
//! the next request takes it from: a busy keep-alive client does not pay an allocation
//! (and the allocator's page faults) per request, and buffers are not scattered between
//! the small allocations of thousands of idle connections, where every one would keep a
//! page of memory in use after it was freed.
//!
//! The stock belongs to the router that made it (each connection holds an `Arc` of it),
//! so two routers in one process (tests, peers) keep their own limits and counts.

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::spares::Spares;

#[derive(Default)]
pub(crate) struct BufPool {
    /// Buffers given back and not yet taken again.
    spare: Spares<Vec<u8>>,
    /// Bytes the buffers taken from this pool hold now: what giving memory back can win.
    held: AtomicUsize,
}

impl BufPool {
    /// Keep at most `n` given-back buffers for reuse from now on (from the config).
    pub(crate) fn keep_at_most(&self, n: usize) {
        self.spare.keep_at_most(n);
    }

    /// See `held`.
    pub(crate) fn held_bytes(&self) -> usize {
        self.held.load(Ordering::Relaxed)
    }

    /// A spare buffer of capacity `size`, or a new one; counted as held until given back.
    pub(crate) fn take(&self, size: usize) -> Vec<u8> {
        let spare = self.spare.take(|v| v.capacity() == size);
        let v = spare.unwrap_or_else(|| Vec::with_capacity(size));
        self.held.fetch_add(v.capacity(), Ordering::Relaxed);
        v
    }

    /// `v`, taken from this pool, is no longer held: keep it for reuse if there is room
    /// among the spares, else free it.
    pub(crate) fn give(&self, mut v: Vec<u8>) {
        if v.capacity() == 0 {
            return;
        }
        self.held.fetch_sub(v.capacity(), Ordering::Relaxed);
        v.clear();
        self.spare.give(v);
    }

    /// How many spares the pool keeps now (the tests' view).
    #[cfg(test)]
    pub(crate) fn spares(&self) -> usize {
        self.spare.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_pools_keep_their_own_limits_and_counts() {
        let (small, large) = (BufPool::default(), BufPool::default());
        small.keep_at_most(1);
        large.keep_at_most(3);
        let taken: Vec<_> = (0..4).map(|_| small.take(64)).collect();
        assert_eq!((small.held_bytes(), large.held_bytes()), (4 * 64, 0));
        taken.into_iter().for_each(|v| small.give(v));
        (0..4).map(|_| large.take(64)).collect::<Vec<_>>().into_iter().for_each(|v| large.give(v));
        assert_eq!((small.spares(), large.spares()), (1, 3));
        assert_eq!((small.held_bytes(), large.held_bytes()), (0, 0));
        large.keep_at_most(2);
        assert_eq!((small.spares(), large.spares()), (1, 2), "a reload trims one pool only");
    }
}

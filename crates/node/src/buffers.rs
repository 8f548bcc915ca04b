//! Recycled I/O buffers. A connection holds a buffer only while it has bytes to parse or
//! to send; an idle keep-alive connection holds none. So 10,000 idle clients cost sockets,
//! not 10,000 buffers, and the few buffers in use stay warm in the CPU caches (nginx frees
//! a keep-alive connection's buffers for the same reason).

use std::cell::RefCell;

/// Capacity of a fresh buffer: a request head, or the heads of a few answers (cached
/// bodies are sent from the cache, not copied here, unless pipelined answers are batched).
const FRESH_CAPACITY: usize = 4 * 1024;
/// Buffers that grew beyond this (a burst of pipelined answers) are freed, not kept.
const MAX_KEPT_CAPACITY: usize = 256 * 1024;
/// At most this many spare buffers are kept.
const MAX_KEPT: usize = 1024;

/// A free list of byte buffers, owned by one event loop.
#[derive(Debug, Default)]
pub struct BufferPool {
    free: RefCell<Vec<Vec<u8>>>,
}

impl BufferPool {
    /// An empty buffer with room for at least a request head or a small response.
    pub fn take(&self) -> Vec<u8> {
        self.free.borrow_mut().pop().unwrap_or_else(|| Vec::with_capacity(FRESH_CAPACITY))
    }

    /// Return a buffer for reuse (its contents are dropped).
    pub fn give(&self, mut buf: Vec<u8>) {
        let cap = buf.capacity();
        let mut free = self.free.borrow_mut();
        if cap > 0 && cap <= MAX_KEPT_CAPACITY && free.len() < MAX_KEPT {
            buf.clear();
            free.push(buf);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reuses_buffers() {
        let pool = BufferPool::default();
        let mut b = pool.take();
        b.extend_from_slice(b"abc");
        let ptr = b.as_ptr();
        pool.give(b);
        let again = pool.take();
        assert!(again.is_empty());
        assert_eq!(again.as_ptr(), ptr);
        pool.give(Vec::new());
        pool.give(Vec::with_capacity(MAX_KEPT_CAPACITY + 1));
        assert!(pool.free.borrow().is_empty(), "empty and oversized buffers are not kept");
    }
}

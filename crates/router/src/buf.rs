//! A bounded read buffer: bytes received and not yet consumed.
//!
//! Its memory is taken only when bytes arrive and given back ([`IoBuf::release`]) when a
//! connection goes idle, so an idle keep-alive connection holds no buffer at all: 5,000
//! idle clients cost their sockets and small bookkeeping, not 5,000 buffers. The bytes
//! are read into the spare capacity, so a buffer is never zeroed first.
//!
//! Memory comes from the router's [`BufPool`] and goes back to it, so a busy keep-alive
//! client does not pay an allocation per request; a buffer made without a pool (a
//! probe's, an admin request's) frees its memory instead.

use std::io;
use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::net::TcpStream;

use crate::buf_pool::BufPool;

pub(crate) struct IoBuf {
    /// `data[start..]` is unconsumed; `data.len()` is where the next read goes. Empty
    /// and unallocated while there is nothing to hold.
    data: Vec<u8>,
    start: usize,
    /// The most bytes ever held (the capacity taken when bytes arrive).
    size: usize,
    /// Where the memory comes from and goes back to; none: allocated and freed.
    pool: Option<Arc<BufPool>>,
}

impl IoBuf {
    /// A buffer of its own memory, freed when released.
    pub(crate) fn new(size: usize) -> Self {
        IoBuf { data: Vec::new(), start: 0, size, pool: None }
    }

    /// A buffer whose memory comes from `pool` and goes back to it.
    pub(crate) fn pooled(size: usize, pool: Arc<BufPool>) -> Self {
        IoBuf { data: Vec::new(), start: 0, size, pool: Some(pool) }
    }

    /// The pool its memory comes from, if any.
    pub(crate) fn pool(&self) -> Option<&Arc<BufPool>> {
        self.pool.as_ref()
    }

    /// The bytes received and not yet consumed.
    pub(crate) fn filled(&self) -> &[u8] {
        &self.data[self.start..]
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.start == self.data.len()
    }

    pub(crate) fn len(&self) -> usize {
        self.data.len() - self.start
    }

    /// True when no more bytes fit even after compaction.
    pub(crate) fn is_full(&self) -> bool {
        self.start == 0 && self.data.len() >= self.size
    }

    pub(crate) fn consume(&mut self, n: usize) {
        debug_assert!(n <= self.len());
        self.start += n;
        if self.is_empty() {
            self.clear();
        }
    }

    /// Consume `n` bytes but keep them, so [`IoBuf::unconsume_all`] can give back
    /// everything read since the buffer was last emptied (a connection handed off passes
    /// the bytes of its first request on).
    pub(crate) fn consume_keeping(&mut self, n: usize) {
        debug_assert!(n <= self.len());
        self.start += n;
    }

    /// Every byte kept since the buffer was last emptied, unconsumed again.
    pub(crate) fn unconsume_all(&mut self) {
        self.start = 0;
    }

    pub(crate) fn clear(&mut self) {
        self.start = 0;
        self.data.clear();
    }

    /// Put a byte read elsewhere at the end (the first byte of a response, taken while
    /// watching for it).
    pub(crate) fn put_back(&mut self, byte: u8) {
        if self.make_room() {
            self.data.push(byte);
        }
    }

    /// Give the memory back if nothing is held (a connection going idle).
    pub(crate) fn release(&mut self) {
        if self.is_empty() {
            self.start = 0;
            self.give_back();
        }
    }

    /// Make room at the end: allocate if unallocated, move unconsumed bytes to the front
    /// when the end is reached. False when the buffer is full.
    fn make_room(&mut self) -> bool {
        if self.data.capacity() == 0 {
            self.data = match &self.pool {
                Some(pool) => pool.take(self.size),
                None => Vec::with_capacity(self.size),
            };
        }
        if self.data.len() >= self.size && self.start > 0 {
            self.data.drain(..self.start);
            self.start = 0;
        }
        self.data.len() < self.size
    }

    /// Read once more from `r`; returns the number of new bytes (0 at end of stream).
    /// The caller checks [`IoBuf::is_full`] first: a full buffer reads nothing.
    pub(crate) async fn fill<R: AsyncRead + Unpin>(&mut self, r: &mut R) -> io::Result<usize> {
        if !self.make_room() {
            return Ok(0);
        }
        let room = self.size.saturating_sub(self.data.len());
        r.take(room as u64).read_buf(&mut self.data).await
    }

    /// [`IoBuf::fill`] for an idle connection: wait until the socket has bytes (or an
    /// end) without holding a buffer, and take one only to read them.
    pub(crate) async fn fill_when_readable(&mut self, stream: &TcpStream) -> io::Result<usize> {
        loop {
            stream.readable().await?;
            if !self.make_room() {
                return Ok(0);
            }
            // Into the spare capacity: `size` bytes, or a little more if the allocator
            // rounded up, which the checks below allow for.
            let result = stream.try_read_buf(&mut self.data);
            match result {
                Ok(n) => return Ok(n),
                // The readiness was stale: wait again, holding nothing.
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.release(),
                Err(e) => return Err(e),
            }
        }
    }
}

impl IoBuf {
    /// Hand the memory to the pool (or free it), holding none.
    fn give_back(&mut self) {
        let data = std::mem::take(&mut self.data);
        if let Some(pool) = &self.pool {
            pool.give(data);
        }
    }
}

impl Drop for IoBuf {
    fn drop(&mut self) {
        self.give_back();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_no_memory_until_bytes_come_and_after_release() {
        let mut b = IoBuf::new(8);
        assert!(b.is_empty() && !b.is_full());
        assert_eq!(b.data.capacity(), 0);
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let mut src: &[u8] = b"abcdefghij";
        assert_eq!(rt.block_on(b.fill(&mut src)).unwrap(), 8);
        assert!(b.is_full());
        b.consume(3);
        assert_eq!(rt.block_on(b.fill(&mut src)).unwrap(), 2);
        assert_eq!(b.filled(), b"defghij");
        b.release();
        assert_eq!(b.filled(), b"defghij", "release keeps bytes not yet consumed");
        b.consume(7);
        b.release();
        assert_eq!(b.data.capacity(), 0);
    }
}

//! A bounded read buffer: bytes received and not yet consumed.
//!
//! Its memory is taken only when bytes arrive and given back ([`IoBuf::release`]) when a
//! connection goes idle, so an idle keep-alive connection holds no buffer at all: 5,000
//! idle clients cost their sockets and small bookkeeping, not 5,000 buffers. The bytes
//! are read into the spare capacity, so a buffer is never zeroed first.
//!
//! A buffer given back goes to a small process-wide stock of spares (`limits.
//! spare_buffers`), which the next request takes it from: a busy keep-alive client does
//! not pay an allocation (and the allocator's page faults) per request, and buffers are
//! not scattered between the small allocations of thousands of idle connections, where
//! every one would keep a page of memory in use after it was freed.

use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::net::TcpStream;

/// Bytes the read buffers of this process hold now: what giving memory back can win.
static HELD: AtomicUsize = AtomicUsize::new(0);

/// Buffers given back and not yet taken again, at most [`SPARE_LIMIT`] of them.
static SPARE: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());
static SPARE_LIMIT: AtomicUsize = AtomicUsize::new(64);

/// How many given-back buffers to keep for reuse (from the config; process-wide).
pub(crate) fn set_spare_limit(n: usize) {
    SPARE_LIMIT.store(n, Ordering::Relaxed);
    let mut spare = SPARE.lock().unwrap_or_else(|e| e.into_inner());
    spare.truncate(n);
}

/// A spare buffer of capacity `size`, or a new one.
fn take_spare(size: usize) -> Vec<u8> {
    let mut spare = SPARE.lock().unwrap_or_else(|e| e.into_inner());
    while let Some(v) = spare.pop() {
        if v.capacity() == size {
            return v;
        }
    }
    drop(spare);
    Vec::with_capacity(size)
}

/// Keep `v` for reuse if there is room among the spares, else free it.
fn give_spare(mut v: Vec<u8>) {
    if v.capacity() == 0 {
        return;
    }
    v.clear();
    let mut spare = SPARE.lock().unwrap_or_else(|e| e.into_inner());
    if spare.len() < SPARE_LIMIT.load(Ordering::Relaxed) {
        spare.push(v);
    }
}

/// See [`HELD`].
pub(crate) fn held_bytes() -> usize {
    HELD.load(Ordering::Relaxed)
}

pub(crate) struct IoBuf {
    /// `data[start..]` is unconsumed; `data.len()` is where the next read goes. Empty
    /// and unallocated while there is nothing to hold.
    data: Vec<u8>,
    start: usize,
    /// The most bytes ever held (the capacity taken when bytes arrive).
    size: usize,
}

impl IoBuf {
    pub(crate) fn new(size: usize) -> Self {
        IoBuf { data: Vec::new(), start: 0, size }
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
            HELD.fetch_sub(self.data.capacity(), Ordering::Relaxed);
            self.start = 0;
            give_spare(std::mem::take(&mut self.data));
        }
    }

    /// Make room at the end: allocate if unallocated, move unconsumed bytes to the front
    /// when the end is reached. False when the buffer is full.
    fn make_room(&mut self) -> bool {
        if self.data.capacity() == 0 {
            self.data = take_spare(self.size);
            HELD.fetch_add(self.data.capacity(), Ordering::Relaxed);
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

impl Drop for IoBuf {
    fn drop(&mut self) {
        HELD.fetch_sub(self.data.capacity(), Ordering::Relaxed);
        give_spare(std::mem::take(&mut self.data));
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

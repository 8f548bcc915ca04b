//! A fixed-size read buffer: bytes received and not yet consumed.
//!
//! Allocated once per client connection and reused for every request on it, so the
//! router's memory per connection is fixed whatever the traffic.

use tokio::io::{AsyncRead, AsyncReadExt};

pub(crate) struct IoBuf {
    data: Vec<u8>,
    start: usize,
    end: usize,
}

impl IoBuf {
    pub(crate) fn new(size: usize) -> Self {
        IoBuf { data: vec![0; size], start: 0, end: 0 }
    }

    /// The bytes received and not yet consumed.
    pub(crate) fn filled(&self) -> &[u8] {
        &self.data[self.start..self.end]
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.start == self.end
    }

    pub(crate) fn len(&self) -> usize {
        self.end - self.start
    }

    /// True when no more bytes fit even after compaction.
    pub(crate) fn is_full(&self) -> bool {
        self.start == 0 && self.end == self.data.len()
    }

    pub(crate) fn consume(&mut self, n: usize) {
        debug_assert!(n <= self.len());
        self.start += n;
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
    }

    pub(crate) fn clear(&mut self) {
        self.start = 0;
        self.end = 0;
    }

    /// Read once more from `r`; returns the number of new bytes (0 at end of stream).
    /// The caller checks [`IoBuf::is_full`] first: a full buffer reads nothing.
    pub(crate) async fn fill<R: AsyncRead + Unpin>(&mut self, r: &mut R) -> std::io::Result<usize> {
        if self.end == self.data.len() && self.start > 0 {
            self.data.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.end == self.data.len() {
            return Ok(0);
        }
        let n = r.read(&mut self.data[self.end..]).await?;
        self.end += n;
        Ok(n)
    }
}

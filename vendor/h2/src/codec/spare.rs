//! One spare write buffer and one spare read buffer per thread.
//!
//! A connection holds its frame buffers only while it has something to write or a
//! frame half read, and gives them back when it goes idle, so that an idle connection
//! costs no buffer memory. The thread keeps the last buffer given back, so that a busy
//! connection (or the next one polled on the same thread) takes it again instead of
//! asking the allocator for a fresh 8 or 16 KiB every turn.

use bytes::BytesMut;
use std::cell::Cell;

thread_local! {
    static WRITE: Cell<Option<BytesMut>> = const { Cell::new(None) };
    static READ: Cell<Option<BytesMut>> = const { Cell::new(None) };
}

/// A write buffer of at least `capacity` bytes: the thread's spare, or a new one.
pub(crate) fn take_write(capacity: usize) -> BytesMut {
    take(&WRITE, capacity)
}

/// Gives an empty write buffer back; kept if the thread has no spare yet.
pub(crate) fn give_write(buf: BytesMut) {
    give(&WRITE, buf)
}

/// A read buffer of at least `capacity` bytes: the thread's spare, or a new one.
pub(crate) fn take_read(capacity: usize) -> BytesMut {
    take(&READ, capacity)
}

/// Gives an empty read buffer back; kept if it owns `capacity` bytes again (no frame
/// still refers to it) and the thread has no spare yet.
pub(crate) fn give_read(mut buf: BytesMut, capacity: usize) {
    if buf.try_reclaim(capacity) {
        give(&READ, buf)
    }
}

fn take(slot: &'static std::thread::LocalKey<Cell<Option<BytesMut>>>, capacity: usize) -> BytesMut {
    match slot.try_with(Cell::take) {
        Ok(Some(buf)) if buf.capacity() >= capacity => buf,
        _ => BytesMut::with_capacity(capacity),
    }
}

fn give(slot: &'static std::thread::LocalKey<Cell<Option<BytesMut>>>, mut buf: BytesMut) {
    buf.clear();
    let _ = slot.try_with(|spare| {
        let kept = match spare.take() {
            Some(old) if old.capacity() >= buf.capacity() => old,
            _ => buf,
        };
        spare.set(Some(kept));
    });
}

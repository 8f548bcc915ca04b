//! What h2 writes during one turn of a connection's task, written to the client at once.
//!
//! h2 writes a DATA frame of more than a few hundred bytes apart from the frames before
//! it and flushes each time, so every small response would be a write of its own: a TLS
//! record, a system call, and a read and a decryption on the client's side. Here the
//! frames of one turn (every stream the connection's task drove in it) are
//! gathered, up to `http2.write_batch_bytes`, and go out together at the connection's
//! next turn: a flush in the turn that wrote them wakes the task again and returns, the
//! first flush of a later turn writes them. The gathered bytes are given up once written,
//! so an idle connection holds none: the buffer goes to its thread's spare (one per
//! thread), which the next connection to gather on that thread takes. Under load the turn
//! that writes a batch out usually gathers the next one, and a buffer of tens of KiB freed
//! and allocated again every turn costs the allocator a consolidation each time.

use std::cell::Cell;
use std::future::Future;
use std::io;
use std::io::IoSlice;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

thread_local! {
    /// The buffer of the last batch written out on this thread and not yet taken again.
    static SPARE: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

/// Keep `buf` (emptied) as this thread's spare; of it and the spare before, the larger
/// is kept and the other freed.
fn keep_spare(mut buf: Vec<u8>) {
    buf.clear();
    SPARE.with(|spare| {
        let before = spare.take();
        spare.set(if before.capacity() > buf.capacity() { before } else { buf });
    });
}

/// This thread's spare buffer (empty, and of no capacity when there is none).
fn take_spare() -> Vec<u8> {
    SPARE.with(Cell::take)
}

/// The turns of one connection's task, counted: shared by the task (`Turns::counting`)
/// and its writer.
#[derive(Clone, Default)]
pub(crate) struct Turns(Arc<AtomicU64>);

impl Turns {
    fn now(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    /// `task`, each of its polls counted as a turn.
    pub(crate) fn counting<F: Future>(&self, task: F) -> Counted<F> {
        Counted { turns: self.clone(), task: Box::pin(task) }
    }
}

/// A task whose polls are counted (`Turns::counting`).
pub(crate) struct Counted<F> {
    turns: Turns,
    task: Pin<Box<F>>,
}

impl<F: Future> Future for Counted<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        self.turns.0.fetch_add(1, Ordering::Relaxed);
        self.task.as_mut().poll(cx)
    }
}

/// Writes to `inner` gathered over a turn (reads pass straight through).
pub(crate) struct WriteBatch<S> {
    inner: S,
    /// Bytes accepted and not yet written; `buf[written..]` is still to go.
    buf: Vec<u8>,
    written: usize,
    /// Most bytes gathered before they are written whatever the turn; 0 writes through.
    max: usize,
    turns: Turns,
    /// The turn in which a flush was put off.
    put_off_in: Option<u64>,
}

impl<S> WriteBatch<S> {
    pub(crate) fn new(inner: S, max: usize, turns: Turns) -> Self {
        WriteBatch { inner, buf: Vec::new(), written: 0, max, turns, put_off_in: None }
    }

    fn pending(&self) -> usize {
        self.buf.len() - self.written
    }
}

impl<S: AsyncWrite + Unpin> WriteBatch<S> {
    /// Write every gathered byte to `inner`, then free the buffer.
    fn write_out(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.written < self.buf.len() {
            let n = ready!(Pin::new(&mut self.inner).poll_write(cx, &self.buf[self.written..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.written += n;
        }
        keep_spare(std::mem::take(&mut self.buf));
        self.written = 0;
        self.put_off_in = None;
        Poll::Ready(Ok(()))
    }

    /// Gather `bufs` (together `len` bytes) when they fit, writing what is gathered first
    /// if they do not; a write larger than the batch goes straight through.
    fn gather(
        &mut self,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
        len: usize,
    ) -> Poll<io::Result<usize>> {
        if self.pending() + len > self.max {
            ready!(self.write_out(cx))?;
            if len > self.max {
                return Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
            }
        }
        if self.buf.capacity() == 0 {
            self.buf = take_spare();
            self.buf.reserve(self.max.min(len.max(16 * 1024)));
        }
        for b in bufs {
            self.buf.extend_from_slice(b);
        }
        Poll::Ready(Ok(len))
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for WriteBatch<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for WriteBatch<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.gather(cx, &[IoSlice::new(buf)], buf.len())
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let len = bufs.iter().map(|b| b.len()).sum();
        self.gather(cx, bufs, len)
    }

    /// Gathering takes every slice at once, so h2 hands its frames over as they are.
    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.pending() > 0 {
            let now = self.turns.now();
            match self.put_off_in {
                Some(turn) if turn != now => ready!(self.write_out(cx))?,
                _ => {
                    // More may come from streams that run later in this turn.
                    self.put_off_in = Some(now);
                    cx.waker().wake_by_ref();
                    return Poll::Ready(Ok(()));
                }
            }
        }
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.write_out(cx))?;
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer that records each write it is given.
    #[derive(Default)]
    struct Writes(Vec<Vec<u8>>);

    impl AsyncWrite for Writes {
        fn poll_write(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<io::Result<usize>> {
            self.0.push(buf.to_vec());
            Poll::Ready(Ok(buf.len()))
        }

        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }

        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    /// Write `bytes` as two slices; how many were taken.
    fn write(w: &mut WriteBatch<Writes>, cx: &mut Context<'_>, bytes: &[u8]) -> usize {
        let slices = [IoSlice::new(&bytes[..1]), IoSlice::new(&bytes[1..])];
        match Pin::new(&mut *w).poll_write_vectored(cx, &slices) {
            Poll::Ready(Ok(n)) => n,
            other => panic!("{other:?}"),
        }
    }

    fn flush(w: &mut WriteBatch<Writes>, cx: &mut Context<'_>) {
        assert!(matches!(Pin::new(&mut *w).poll_flush(cx), Poll::Ready(Ok(()))));
    }

    #[test]
    fn one_turns_frames_go_out_together_at_the_next_turn() {
        let (waker, woken) = futures_like_waker();
        let mut cx = Context::from_waker(&waker);
        let turns = Turns::default();
        let mut w = WriteBatch::new(Writes::default(), 64, turns.clone());
        write(&mut w, &mut cx, b"head1");
        flush(&mut w, &mut cx);
        write(&mut w, &mut cx, b"data1");
        flush(&mut w, &mut cx);
        assert!(w.inner.0.is_empty(), "nothing written within the turn");
        assert_eq!(woken.load(Ordering::Relaxed), 2, "the task is woken for its next turn");
        turns.0.fetch_add(1, Ordering::Relaxed);
        flush(&mut w, &mut cx);
        assert_eq!(w.inner.0, vec![b"head1data1".to_vec()]);
        assert_eq!(w.buf.capacity(), 0, "written bytes are not held");
        flush(&mut w, &mut cx);
        assert_eq!(w.inner.0.len(), 1, "nothing more to write");
    }

    #[test]
    fn a_full_batch_is_written_at_once_and_a_large_write_goes_through() {
        let (waker, _) = futures_like_waker();
        let mut cx = Context::from_waker(&waker);
        let mut w = WriteBatch::new(Writes::default(), 8, Turns::default());
        assert_eq!(write(&mut w, &mut cx, b"abcdef"), 6);
        assert_eq!(write(&mut w, &mut cx, b"ghij"), 4);
        assert_eq!(w.inner.0, vec![b"abcdef".to_vec()], "the full batch, alone");
        // Larger than a batch: what is gathered goes first, then the write itself, as
        // the writer takes it (here, its first slice).
        assert_eq!(write(&mut w, &mut cx, b"0123456789"), 1);
        assert_eq!(w.inner.0, vec![b"abcdef".to_vec(), b"ghij".to_vec(), b"0".to_vec()]);
        assert_eq!(write(&mut w, &mut cx, b"kl"), 2);
        assert!(matches!(Pin::new(&mut w).poll_shutdown(&mut cx), Poll::Ready(Ok(()))));
        assert_eq!(w.inner.0.last(), Some(&b"kl".to_vec()), "shutdown writes what is left");
        let mut none = WriteBatch::new(Writes::default(), 0, Turns::default());
        assert_eq!(write(&mut none, &mut cx, b"xy"), 1);
        assert_eq!(none.inner.0, vec![b"x".to_vec()], "0 writes through");
    }

    #[test]
    fn a_written_batch_buffer_is_taken_by_the_next_to_gather_on_its_thread() {
        let (waker, _) = futures_like_waker();
        let mut cx = Context::from_waker(&waker);
        let mut a = WriteBatch::new(Writes::default(), 64, Turns::default());
        let mut b = WriteBatch::new(Writes::default(), 64, Turns::default());
        write(&mut a, &mut cx, b"one");
        write(&mut b, &mut cx, b"two");
        let (first, second) = (a.buf.as_ptr(), b.buf.as_ptr());
        assert!(matches!(Pin::new(&mut a).poll_shutdown(&mut cx), Poll::Ready(Ok(()))));
        assert!(matches!(Pin::new(&mut b).poll_shutdown(&mut cx), Poll::Ready(Ok(()))));
        assert_eq!(a.buf.capacity() + b.buf.capacity(), 0, "written-out batches hold nothing");
        let spare = take_spare();
        assert!(spare.as_ptr() == second && spare.is_empty(), "one spare kept, the last");
        assert_ne!(first, second);
        assert_eq!(take_spare().capacity(), 0, "only one");
        keep_spare(spare);
        let mut c = WriteBatch::new(Writes::default(), 64, Turns::default());
        write(&mut c, &mut cx, b"three");
        assert_eq!(c.buf.as_ptr(), second, "the spare is taken by the next to gather");
        assert_eq!(take_spare().capacity(), 0);
    }

    /// A waker that counts its wakes.
    fn futures_like_waker() -> (std::task::Waker, Arc<AtomicU64>) {
        struct Count(Arc<AtomicU64>);
        impl std::task::Wake for Count {
            fn wake(self: Arc<Self>) {
                self.0.fetch_add(1, Ordering::Relaxed);
            }
            fn wake_by_ref(self: &Arc<Self>) {
                self.0.fetch_add(1, Ordering::Relaxed);
            }
        }
        let count = Arc::new(AtomicU64::new(0));
        (Arc::new(Count(count.clone())).into(), count)
    }
}

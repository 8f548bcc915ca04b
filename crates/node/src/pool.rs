//! The helper threads of AMPED: a fixed pool that runs the work an event loop must never
//! wait for (path translation, stat, open, disk reads, costly dynamic content).
//!
//! A job is a closure; its result comes back through a oneshot channel, so the loop awaits
//! it like any other event while it keeps serving requests whose data is in memory.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

type Job = Box<dyn FnOnce() + Send>;

/// The pool was shut down while a job was queued or running.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("helper pool is gone")]
pub struct PoolGone;

/// A fixed set of helper threads fed from one queue.
pub struct HelperPool {
    sender: Option<mpsc::Sender<Job>>,
    threads: Vec<JoinHandle<()>>,
    /// Jobs queued or running: the load report shows it as the disk queue.
    pending: Arc<AtomicUsize>,
}

impl HelperPool {
    /// Start `threads` helpers (at least one) named `name-N`.
    pub fn new(name: &str, threads: usize) -> std::io::Result<HelperPool> {
        let (sender, receiver) = mpsc::channel::<Job>();
        let receiver = Arc::new(Mutex::new(receiver));
        let mut handles = Vec::new();
        for i in 0..threads.max(1) {
            let rx = Arc::clone(&receiver);
            let handle =
                std::thread::Builder::new().name(format!("{name}-{i}")).spawn(move || {
                    loop {
                        // The lock is held only while waiting for the next job, not while it runs.
                        let job = match rx.lock() {
                            Ok(guard) => guard.recv(),
                            Err(_) => return,
                        };
                        match job {
                            Ok(job) => job(),
                            Err(_) => return,
                        }
                    }
                })?;
            handles.push(handle);
        }
        Ok(HelperPool {
            sender: Some(sender),
            threads: handles,
            pending: Arc::new(AtomicUsize::new(0)),
        })
    }

    /// Run `f` on a helper and await its result.
    pub async fn run<T, F>(&self, f: F) -> Result<T, PoolGone>
    where
        T: Send + 'static,
        F: FnOnce() -> T + Send + 'static,
    {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let pending = Arc::clone(&self.pending);
        pending.fetch_add(1, Ordering::Relaxed);
        let job: Job = Box::new(move || {
            let out = f();
            pending.fetch_sub(1, Ordering::Relaxed);
            let _ = tx.send(out);
        });
        let sender = self.sender.as_ref().ok_or(PoolGone)?;
        if sender.send(job).is_err() {
            self.pending.fetch_sub(1, Ordering::Relaxed);
            return Err(PoolGone);
        }
        rx.await.map_err(|_| PoolGone)
    }

    /// Queue `f` without waiting for it (fire and forget). Jobs run in submission order
    /// on a one-thread pool, which is what the access log relies on.
    pub fn spawn(&self, f: impl FnOnce() + Send + 'static) -> Result<(), PoolGone> {
        let sender = self.sender.as_ref().ok_or(PoolGone)?;
        sender.send(Box::new(f)).map_err(|_| PoolGone)
    }

    /// Jobs queued or running.
    pub fn pending(&self) -> usize {
        self.pending.load(Ordering::Relaxed)
    }
}

impl Drop for HelperPool {
    /// Queued jobs still run: the threads drain the queue before they see it closed.
    fn drop(&mut self) {
        self.sender.take();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_jobs_off_thread() {
        let pool = HelperPool::new("t", 2).unwrap();
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let me = std::thread::current().id();
        let (sum, other) = rt.block_on(async {
            let a = pool.run(|| (1..=10u64).sum::<u64>());
            let b = pool.run(move || std::thread::current().id() != me);
            (a.await.unwrap(), b.await.unwrap())
        });
        assert_eq!(sum, 55);
        assert!(other);
        assert_eq!(pool.pending(), 0);
    }
}

//! A bounded stock of things given back for reuse (read buffers, pipes): what the
//! router's pools share. Taking and giving back each take one short lock; beyond its
//! limit a stock takes nothing more, and what it does not take is dropped (freed,
//! closed).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::poison::Recover;

pub(crate) struct Spares<T> {
    stock: Mutex<Vec<T>>,
    limit: AtomicUsize,
}

impl<T> Default for Spares<T> {
    fn default() -> Self {
        Spares { stock: Mutex::new(Vec::new()), limit: AtomicUsize::new(0) }
    }
}

impl<T> Spares<T> {
    /// Keep at most `n` from now on; any beyond go at once.
    pub(crate) fn keep_at_most(&self, n: usize) {
        self.limit.store(n, Ordering::Relaxed);
        self.stock.lock().recover().truncate(n);
    }

    /// Drop every spare (they no longer fit what is asked for).
    pub(crate) fn clear(&self) {
        self.stock.lock().recover().clear();
    }

    /// A spare that `fits`; those that do not, met on the way, are dropped.
    pub(crate) fn take(&self, fits: impl Fn(&T) -> bool) -> Option<T> {
        let mut stock = self.stock.lock().recover();
        while let Some(t) = stock.pop() {
            if fits(&t) {
                return Some(t);
            }
        }
        None
    }

    /// Keep `t` if there is room, else drop it.
    pub(crate) fn give(&self, t: T) {
        let mut stock = self.stock.lock().recover();
        if stock.len() < self.limit.load(Ordering::Relaxed) {
            stock.push(t);
        }
    }

    /// How many spares there are now (the tests' view).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.stock.lock().recover().len()
    }
}

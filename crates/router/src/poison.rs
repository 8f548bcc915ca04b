//! Lock poisoning, recovered from in one place.
//!
//! A lock is poisoned when a thread panicked while holding it. The router's locks guard
//! state that every step leaves whole (counters, a policy's table, pools of idle
//! connections or spare buffers): a panic in one connection's task must not make every
//! later request that takes the same lock panic too, so the state is used as it was left.

use std::sync::{LockResult, PoisonError};

/// The guard of a lock taken, poisoned or not: `mutex.lock().recover()`.
pub(crate) trait Recover<G> {
    fn recover(self) -> G;
}

impl<G> Recover<G> for LockResult<G> {
    fn recover(self) -> G {
        self.unwrap_or_else(PoisonError::into_inner)
    }
}

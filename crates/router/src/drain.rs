//! The drain signal: raised once, when the router stops accepting. A connection waiting
//! idle for its next request ends at once; a busy one sees the flag after its response
//! (which then says `Connection: close`).
//!
//! Every idle wait of every keep-alive connection listens for it, so listening is made
//! cheap: each connection keeps one waiter for its whole life instead of registering a
//! fresh one per wait, and busy connections read a plain atomic flag.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::sync::futures::OwnedNotified;
use tokio::sync::Notify;

/// Raises the drain (held by the accept loop).
#[derive(Clone, Default)]
pub(crate) struct Drain {
    raised: Arc<AtomicBool>,
    notify: Arc<Notify>,
}

impl Drain {
    /// Raise the drain: every [`DrainWait`] made so far completes, later ones see the flag.
    pub(crate) fn raise(&self) {
        self.raised.store(true, Ordering::SeqCst);
        self.notify.notify_waiters();
    }

    /// A listener for one connection.
    pub(crate) fn wait(&self) -> DrainWait {
        DrainWait {
            raised: self.raised.clone(),
            // Made before the flag can be read by its owner: `notify_waiters` completes
            // every `Notified` made before it, polled yet or not.
            notified: Box::pin(self.notify.clone().notified_owned()),
        }
    }
}

/// One connection's view of the drain: a flag to read and a future to wait on (through
/// `&mut`) again and again; once complete, it stays complete.
pub(crate) struct DrainWait {
    raised: Arc<AtomicBool>,
    notified: Pin<Box<OwnedNotified>>,
}

impl DrainWait {
    pub(crate) fn raised(&self) -> bool {
        self.raised.load(Ordering::SeqCst)
    }
}

impl Future for DrainWait {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.raised() {
            return Poll::Ready(());
        }
        self.notified.as_mut().poll(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A waker that remembers being woken.
    #[derive(Default)]
    struct Flag(AtomicBool);

    impl std::task::Wake for Flag {
        fn wake(self: Arc<Self>) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    fn poll_once(wait: &mut DrainWait, flag: &Arc<Flag>) -> Poll<()> {
        let waker = std::task::Waker::from(flag.clone());
        Pin::new(wait).poll(&mut Context::from_waker(&waker))
    }

    #[test]
    fn raising_wakes_the_waiters_and_stays_raised() {
        let drain = Drain::default();
        let flag = Arc::new(Flag::default());
        let (mut waiting, mut other) = (drain.wait(), drain.wait());
        assert!(!waiting.raised());
        assert!(poll_once(&mut waiting, &flag).is_pending(), "nothing raised yet");
        drain.raise();
        assert!(flag.0.load(Ordering::SeqCst), "the waiting task was woken");
        assert!(poll_once(&mut waiting, &flag).is_ready());
        assert!(poll_once(&mut waiting, &flag).is_ready(), "and it stays complete");
        assert!(poll_once(&mut other, &flag).is_ready());
        let mut after = drain.wait();
        assert!(after.raised() && poll_once(&mut after, &flag).is_ready());
    }
}

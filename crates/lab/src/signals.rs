//! The signals `larder up` and the experiments act on, taken synchronously.
//!
//! SIGINT, SIGTERM and SIGCHLD are blocked before any thread exists and then taken with
//! `sigtimedwait`: the main loop sleeps until a stop request or a child's exit instead of
//! polling, and no handler has to share state with it. A blocked mask survives `exec`,
//! so every child unblocks them again before it runs (`Signals::unblock`).
//!
//! A stop request is latched: whichever wait takes SIGINT or SIGTERM (stopping a run's
//! children waits for signals too), every later [`Signals::stop_requested`] sees it, so a
//! Ctrl-C that lands while one run's processes are being stopped still ends the whole
//! experiment instead of being spent on that one wait.

use std::io;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// What woke the main loop.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Wake {
    /// SIGINT or SIGTERM: stop everything.
    Stop,
    /// SIGCHLD: some child changed state.
    ChildExited,
    /// Nothing arrived within the timeout.
    Timeout,
}

#[derive(Clone)]
pub struct Signals {
    /// SIGINT, SIGTERM and SIGCHLD.
    all: libc::sigset_t,
    /// SIGINT and SIGTERM only, to look for a stop request without eating SIGCHLD.
    stop: libc::sigset_t,
    /// A stop request was taken, by any wait of any clone.
    stopping: Arc<AtomicBool>,
}

fn sigset(signals: &[libc::c_int]) -> libc::sigset_t {
    let mut set = MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: sigemptyset initialises the set; sigaddset only gets valid signal numbers.
    unsafe {
        libc::sigemptyset(set.as_mut_ptr());
        for &s in signals {
            libc::sigaddset(set.as_mut_ptr(), s);
        }
        set.assume_init()
    }
}

impl Signals {
    /// Blocks the signals in the calling thread and every thread it starts afterwards.
    /// Call it before any other thread exists, or a thread with them unblocked would
    /// take them with their default action.
    pub fn block() -> io::Result<Signals> {
        let all = sigset(&[libc::SIGINT, libc::SIGTERM, libc::SIGCHLD]);
        let stop = sigset(&[libc::SIGINT, libc::SIGTERM]);
        // SAFETY: `all` is an initialised set; the old mask is not wanted.
        let rc = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &all, std::ptr::null_mut()) };
        if rc != 0 {
            return Err(io::Error::from_raw_os_error(rc));
        }
        Ok(Signals { all, stop, stopping: Arc::new(AtomicBool::new(false)) })
    }

    /// Unblocks the signals again. Async-signal-safe: a child calls it between fork and
    /// exec, or it would start with SIGTERM blocked and never stop.
    pub fn unblock(&self) -> io::Result<()> {
        // SAFETY: `all` is an initialised set; the old mask is not wanted.
        let rc =
            unsafe { libc::pthread_sigmask(libc::SIG_UNBLOCK, &self.all, std::ptr::null_mut()) };
        if rc != 0 {
            return Err(io::Error::from_raw_os_error(rc));
        }
        Ok(())
    }

    /// Waits up to `timeout` for a stop request or a child's exit. `Stop` says a stop
    /// request arrived during this wait (and latches it).
    pub fn wait(&self, timeout: Duration) -> Wake {
        match take(&self.all, timeout) {
            Some(libc::SIGCHLD) => Wake::ChildExited,
            Some(_) => {
                self.stopping.store(true, Ordering::SeqCst);
                Wake::Stop
            }
            None => Wake::Timeout,
        }
    }

    /// Whether a stop was requested, before or during this call: waits up to `timeout`
    /// only while none was (SIGCHLD stays pending).
    pub fn stop_requested(&self, timeout: Duration) -> bool {
        if !self.stopping.load(Ordering::SeqCst) && take(&self.stop, timeout).is_some() {
            self.stopping.store(true, Ordering::SeqCst);
        }
        self.stopping.load(Ordering::SeqCst)
    }
}

/// One signal of `set`, or None after `timeout` (an interrupted wait counts as a timeout:
/// callers loop with their own deadline).
fn take(set: &libc::sigset_t, timeout: Duration) -> Option<libc::c_int> {
    let ts = libc::timespec {
        tv_sec: timeout.as_secs().min(i32::MAX as u64) as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: `set` is initialised, `ts` lives across the call, the siginfo is not wanted.
    let signal = unsafe { libc::sigtimedwait(set, std::ptr::null_mut(), &ts) };
    (signal > 0).then_some(signal)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// In a thread of its own: the mask and a signal raised are that thread's only.
    #[test]
    fn a_stop_taken_by_any_wait_is_seen_by_every_later_check() {
        let seen = std::thread::spawn(|| {
            let signals = Signals::block().unwrap();
            let clone = signals.clone();
            assert!(!clone.stop_requested(Duration::ZERO));
            // SAFETY: SIGTERM is blocked in this thread, so it stays pending here.
            unsafe { libc::raise(libc::SIGTERM) };
            let woke = signals.wait(Duration::from_secs(5));
            (woke, clone.stop_requested(Duration::ZERO), signals.stop_requested(Duration::ZERO))
        })
        .join()
        .unwrap();
        assert_eq!(seen, (Wake::Stop, true, true));
    }
}

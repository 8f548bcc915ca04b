//! Giving freed memory back to the kernel after a burst of clients has left.
//!
//! The binary's allocator (mimalloc, see `main.rs`) keeps the pages a thread freed until
//! that thread allocates again or collects, so a worker thread that goes idle after a burst
//! of 5,000 clients would hold their memory for good. Collecting costs a walk of the
//! thread's heap, so it is asked for only after the memory connections hold (their buffers
//! and state, as the router estimates it) has halved from a peak of some size, checked
//! once a second — and then again each second while that memory keeps falling, since a
//! check can land while the burst's connections are still closing: one collection then
//! would leave the rest of them, freed a moment later, in the allocator for good.
//!
//! A heap can only be collected by its own thread, and the runtime gives no way to run
//! code on a chosen worker: asking bumps a counter, and each worker compares it with the
//! count it last served when it parks (goes idle), which is also when a burst has left;
//! a few empty tasks spawned with the ask wake the workers that are parked already.
//!
//! Pages a thread frees whole go back to the allocator's arenas at once, but the arenas
//! give them to the kernel only after a delay (1 s), and only when some thread next
//! allocates or collects. A node that goes idle after a burst of 5,000 clients did
//! neither, and kept 50 MiB (3.3× its idle level) for good. The arenas are the whole
//! process's, so one thread of its own that collects once a second gives them back for
//! every thread ([`purge_in_background`]), in `larder node` and `larder peer`. `larder
//! route` needs none: its workers' collections after a burst purge the arenas too, and a
//! router of one worker thread stays a single-threaded process, whose socket calls glibc
//! makes without the cancellation bookkeeping of a threaded one (200 instructions a
//! request, measured by `bench/router-callgrind.sh`).

#![allow(unsafe_code)]

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// How often the background thread gives back what the arenas hold past their delay.
const PURGE_EVERY: Duration = Duration::from_secs(1);

/// Start a thread that, once a second, gives the kernel the memory the allocator's arenas
/// hold freed past their purge delay: for the whole process, whichever thread freed it.
/// A collection with nothing to give back costs a few atomic loads.
pub fn purge_in_background() -> std::io::Result<()> {
    std::thread::Builder::new().name("larder-purge".into()).spawn(|| loop {
        std::thread::sleep(PURGE_EVERY);
        // SAFETY: as in `collect_if_asked`; this thread allocates nothing of its own, so
        // what it collects is the arenas' expired purges, which are program-wide.
        unsafe { libmimalloc_sys::mi_collect(false) };
    })?;
    Ok(())
}

/// Below this peak (bytes) there is too little memory to bother.
const WORTH_TRIMMING: usize = 8 << 20;

/// Watch `held` (bytes connections hold now) forever; trim after each burst.
pub async fn give_back_after_bursts(held: impl Fn() -> usize) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    let mut when = TrimTrigger::default();
    loop {
        tick.tick().await;
        if when.trim_now(held()) {
            COLLECTIONS_ASKED.fetch_add(1, Ordering::Relaxed);
            collect_if_asked();
            // A worker already parked before the ask parks again, and collects, only once
            // woken: a task spawned wakes an idle worker to look for work.
            let workers = tokio::runtime::Handle::current().metrics().num_workers();
            for _ in 0..workers {
                tokio::spawn(async {});
            }
        }
    }
}

/// When to trim, from the memory connections hold at each check.
#[derive(Default)]
struct TrimTrigger {
    /// The most held since the last trim.
    peak: usize,
    /// After a trim, what was held at the last check, while it keeps falling.
    falling_from: Option<usize>,
}

impl TrimTrigger {
    /// Whether to trim now, `held` bytes being held.
    fn trim_now(&mut self, held: usize) -> bool {
        if let Some(before) = self.falling_from {
            if held < before {
                self.falling_from = Some(held);
                self.peak = held;
                return true;
            }
            self.falling_from = None;
        }
        self.peak = self.peak.max(held);
        if self.peak >= WORTH_TRIMMING && held <= self.peak / 2 {
            self.peak = held;
            self.falling_from = Some(held);
            return true;
        }
        false
    }
}

/// How many times a collection was asked for since the process started.
static COLLECTIONS_ASKED: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// `COLLECTIONS_ASKED` when this thread last collected its heap.
    static COLLECTIONS_SERVED: Cell<u64> = const { Cell::new(0) };
}

/// Give this thread's free pages back to the kernel if a collection was asked for since it
/// last did: one atomic load otherwise. Meant for the runtime's `on_thread_park`.
pub fn collect_if_asked() {
    let asked = COLLECTIONS_ASKED.load(Ordering::Relaxed);
    if COLLECTIONS_SERVED.with(|served| served.replace(asked)) != asked {
        // SAFETY: mi_collect takes no pointers; it frees and purges only the calling
        // thread's own heap (and pages abandoned by threads that exited), under
        // mimalloc's own synchronisation, and may be called at any time.
        unsafe { libmimalloc_sys::mi_collect(true) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: usize = 1 << 20;

    /// The checks at which a trigger fed `held` in turn says to trim.
    fn trims(held: &[usize]) -> Vec<usize> {
        let mut when = TrimTrigger::default();
        (0..held.len()).filter(|&i| when.trim_now(held[i])).collect()
    }

    #[test]
    fn a_burst_that_closes_between_checks_is_trimmed_once() {
        assert_eq!(trims(&[0, 20 * MIB, 20 * MIB, 0, 0, 0]), vec![3]);
    }

    #[test]
    fn a_check_while_the_burst_is_closing_is_followed_by_one_after_it_has_closed() {
        // 6 MiB still held at the first trim: below the size worth trimming by itself.
        assert_eq!(trims(&[20 * MIB, 6 * MIB, 0, 0, 0]), vec![1, 2]);
        assert_eq!(trims(&[20 * MIB, 9 * MIB, 3 * MIB, MIB, 0, 0]), vec![1, 2, 3, 4]);
    }

    #[test]
    fn small_or_steady_loads_are_not_trimmed() {
        assert!(trims(&[4 * MIB, 0, 4 * MIB, 0]).is_empty());
        assert!(trims(&[20 * MIB, 15 * MIB, 20 * MIB, 11 * MIB]).is_empty());
    }

    #[test]
    fn each_burst_is_trimmed() {
        assert_eq!(trims(&[20 * MIB, 0, 0, 20 * MIB, 0, 0]), vec![1, 4]);
    }
}

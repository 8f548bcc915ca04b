//! Giving freed memory back to the kernel after a burst of clients has left.
//!
//! glibc's allocator keeps the memory that thousands of connections freed (only the top
//! of its heap goes back by itself), so without this a router that once held 5,000
//! clients keeps their memory for good. `malloc_trim` returns every free page; it costs
//! a walk of the heap, so it runs only after the memory connections hold (their buffers
//! and state, as the router estimates it) has halved from a peak of some size, checked
//! once a second — and then again each second while that memory keeps falling, since a
//! check can land while the burst's connections are still closing: one trim then would
//! leave the rest of them, freed a moment later, in the allocator for good.

#![allow(unsafe_code)]

use std::time::Duration;

/// Below this peak (bytes) there is too little memory to bother.
const WORTH_TRIMMING: usize = 8 << 20;

/// Watch `held` (bytes connections hold now) forever; trim after each burst.
pub async fn give_back_after_bursts(held: impl Fn() -> usize) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    let mut when = TrimTrigger::default();
    loop {
        tick.tick().await;
        if when.trim_now(held()) {
            trim();
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

/// Return free heap pages to the kernel (glibc only; other allocators do it themselves).
fn trim() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim takes no pointers and only walks the allocator's own state
    // under its locks; it is safe to call from any thread at any time.
    unsafe {
        libc::malloc_trim(0);
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

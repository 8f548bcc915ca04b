//! Giving freed memory back to the kernel after a burst of clients has left.
//!
//! glibc's allocator keeps the memory that thousands of connections freed (only the top
//! of its heap goes back by itself), so without this a router that once held 5,000
//! clients keeps their memory for good. `malloc_trim` returns every free page; it costs
//! a walk of the heap, so it runs only after the memory connections hold (their buffers
//! and state, as the router estimates it) has halved from a peak of some size, checked
//! once a second.

#![allow(unsafe_code)]

use std::time::Duration;

/// Below this peak (bytes) there is too little memory to bother.
const WORTH_TRIMMING: usize = 8 << 20;

/// Watch `held` (bytes connections hold now) forever; trim after each burst.
pub async fn give_back_after_bursts(held: impl Fn() -> usize) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    let mut peak = 0;
    loop {
        tick.tick().await;
        let now = held();
        peak = peak.max(now);
        if peak >= WORTH_TRIMMING && now <= peak / 2 {
            trim();
            peak = now;
        }
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

//! Asking the CPU to start loading memory the simulation reads soon, without waiting.
//!
//! The replay is bound by cache misses (a thousand nodes' caches, tens of thousands of
//! flights): the next event's flight and the next request's costs are known an event
//! ahead, so their misses can overlap this event's work. A plain load of them (kept with
//! `black_box`) does not: the CPU cannot retire it, nor anything after it, until the line
//! arrives, so the miss still stalls. A prefetch instruction retires at once.

/// Start loading the cache line holding `value`. Only a hint: no effect on what the
/// program computes, and none at all where the architecture offers no prefetch.
#[inline(always)]
pub(crate) fn prefetch<T>(value: &T) {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse"))]
    // SAFETY: `_mm_prefetch` needs only SSE, which the `cfg` above guarantees; it reads
    // no memory the program sees and cannot fault whatever the address, and here the
    // address is that of a live reference besides.
    #[allow(unsafe_code)]
    unsafe {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((value as *const T).cast());
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse")))]
    let _ = value;
}

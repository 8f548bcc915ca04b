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
    prefetch_line(std::ptr::from_ref(value).cast());
}

/// Start loading the cache line holding address `at`, which may be any address.
#[inline(always)]
fn prefetch_line(at: *const u8) {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse"))]
    // SAFETY: `_mm_prefetch` needs only SSE, which the `cfg` above guarantees; it reads
    // no memory the program sees and cannot fault whatever the address.
    #[allow(unsafe_code)]
    unsafe {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(at.cast());
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse")))]
    let _ = at;
}

/// Start loading every cache line of the `bytes` bytes at `at` (addresses a policy names
/// with `Policy::upcoming`; nothing is read through them).
#[inline]
pub(crate) fn prefetch_bytes(at: *const u8, bytes: usize) {
    for line in lines(at.addr(), bytes) {
        prefetch_line(at.with_addr(line));
    }
}

/// Bytes in a cache line (x86-64 and most others).
const LINE: usize = 64;

/// The addresses of the cache lines the `bytes` bytes at `addr` touch (at least one).
fn lines(addr: usize, bytes: usize) -> impl Iterator<Item = usize> {
    let last = addr.saturating_add(bytes.max(1) - 1) / LINE;
    (addr / LINE..=last).map(|line| line * LINE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_the_bytes_touch_once() {
        assert_eq!(lines(128, 64).collect::<Vec<_>>(), [128]);
        assert_eq!(lines(130, 64).collect::<Vec<_>>(), [128, 192]);
        assert_eq!(lines(130, 0).collect::<Vec<_>>(), [128]);
        assert_eq!(lines(63, 129).collect::<Vec<_>>(), [0, 64, 128]);
        assert_eq!(lines(63, 130).collect::<Vec<_>>(), [0, 64, 128, 192]);
        assert_eq!(lines(usize::MAX, 8).count(), 1);
        let v = [7u64; 40];
        prefetch_bytes(v.as_ptr().cast(), std::mem::size_of_val(&v));
        prefetch(&v[3]);
        assert_eq!(v[3], 7);
    }
}

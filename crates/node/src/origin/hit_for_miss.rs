//! Targets whose origin response was just found not shareable (`Set-Cookie`, `no-store`,
//! `private`, `Vary: *`), remembered for a short while so that later requests for them go
//! straight to the origin instead of queueing behind a fetch whose answer they could not
//! use (Varnish calls this hit-for-miss). A cacheable response for the target ends the
//! mark at once. Bounded in bytes like the store: the least recently marked go first.

use cache::{ByteCache, Lru};
use std::cell::RefCell;
use std::time::{Duration, SystemTime};

/// What one mark is counted as beside its target's bytes.
const MARK_BYTES: u64 = 48;

/// The marked targets, each with the time its mark ends (loop-local).
pub struct HitForMiss {
    marks: RefCell<Lru<String, SystemTime>>,
    /// How long a mark lasts; zero marks nothing.
    lasts: Duration,
}

impl HitForMiss {
    /// Marks that last `lasts`, held in at most `capacity_bytes`.
    pub fn new(lasts: Duration, capacity_bytes: u64) -> HitForMiss {
        HitForMiss { marks: RefCell::new(Lru::new(capacity_bytes)), lasts }
    }

    /// `target`'s response at `now` was not shareable.
    pub fn mark(&self, target: &str, now: SystemTime) {
        if !self.lasts.is_zero() {
            let bytes = target.len() as u64 + MARK_BYTES;
            self.marks.borrow_mut().insert(target.to_string(), now + self.lasts, bytes);
        }
    }

    /// `target`'s response was shareable: requests for it coalesce again.
    pub fn clear(&self, target: &str) {
        self.marks.borrow_mut().remove(&target.to_string());
    }

    /// Whether requests for `target` go straight to the origin at `now`.
    pub fn is_marked(&self, target: &str, now: SystemTime) -> bool {
        let mut marks = self.marks.borrow_mut();
        // Asked on every miss: most sites mark nothing, so no key is built for them.
        if marks.is_empty() {
            return false;
        }
        let key = target.to_string();
        match marks.get(&key) {
            Some(&until) if now < until => true,
            Some(_) => {
                marks.remove(&key);
                false
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000 + secs)
    }

    #[test]
    fn a_mark_lasts_its_time_and_a_clear_ends_it() {
        let h = HitForMiss::new(Duration::from_secs(10), 1 << 20);
        h.mark("/a", at(0));
        assert!(h.is_marked("/a", at(9)) && !h.is_marked("/b", at(0)));
        assert!(!h.is_marked("/a", at(10)), "expired");
        h.mark("/a", at(20));
        h.clear("/a");
        assert!(!h.is_marked("/a", at(20)));
    }

    #[test]
    fn zero_marks_nothing_and_memory_stays_bounded() {
        let off = HitForMiss::new(Duration::ZERO, 1 << 20);
        off.mark("/a", at(0));
        assert!(!off.is_marked("/a", at(0)));
        let small = HitForMiss::new(Duration::from_secs(10), 10 * (MARK_BYTES + 6));
        for i in 0..1000 {
            small.mark(&format!("/t{i:04}"), at(0));
        }
        assert!(small.marks.borrow().len() <= 10);
        assert!(small.is_marked("/t0999", at(1)), "the latest mark is kept");
    }
}

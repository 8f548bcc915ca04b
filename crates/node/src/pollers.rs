//! The routers that poll this node's load report: each names itself with a random id
//! ([`wire::PollerId`]) on every poll, and the report says how many named themselves
//! within a window ([`wire::LoadReport::routers`]). A router that reads 1 from its nodes
//! knows it is alone and places as LARD's single front-end does; with several, their
//! placement must agree. Ids are forgotten once older than the window, so a router that
//! stopped (or restarted under a new id) stops counting a window later.
//!
//! Bounded: at most `max` ids are kept; past that the oldest is dropped (a node polled by
//! more routers than that reports `max`, which still says "not alone").

use std::collections::HashMap;
use std::time::{Duration, Instant};

use wire::PollerId;

/// The ids that polled lately and when each last did.
#[derive(Debug)]
pub struct Pollers {
    window: Duration,
    max: usize,
    last: HashMap<PollerId, Instant>,
}

impl Pollers {
    /// Count ids seen within `window`, keeping at most `max` (at least 1).
    pub fn new(window: Duration, max: usize) -> Pollers {
        Pollers { window, max: max.max(1), last: HashMap::new() }
    }

    /// `id` polled at `now`.
    pub fn polled(&mut self, id: PollerId, now: Instant) {
        if !self.last.contains_key(&id) && self.last.len() >= self.max {
            self.forget_old(now);
            if self.last.len() >= self.max {
                // Still full of live ids: the one heard from longest ago makes room.
                let oldest = self.last.iter().min_by_key(|(_, at)| **at).map(|(id, _)| *id);
                if let Some(oldest) = oldest {
                    self.last.remove(&oldest);
                }
            }
        }
        self.last.insert(id, now);
    }

    /// How many distinct ids polled within the window before `now`; older ones are
    /// forgotten (and their memory given back).
    pub fn count(&mut self, now: Instant) -> u64 {
        self.forget_old(now);
        self.last.len() as u64
    }

    fn forget_old(&mut self, now: Instant) {
        let window = self.window;
        self.last.retain(|_, at| now.saturating_duration_since(*at) <= window);
        if self.last.capacity() > 4 * self.last.len().max(4) {
            self.last.shrink_to_fit();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_distinct_ids_within_the_window_and_forgets_old_ones() {
        let t0 = Instant::now();
        let s = |secs: u64| t0 + Duration::from_secs(secs);
        let mut p = Pollers::new(Duration::from_secs(10), 64);
        assert_eq!(p.count(t0), 0);
        p.polled(PollerId(1), t0);
        p.polled(PollerId(1), s(1));
        assert_eq!(p.count(s(1)), 1, "one router polling twice is one");
        p.polled(PollerId(2), s(2));
        assert_eq!(p.count(s(2)), 2);
        assert_eq!(p.count(s(11)), 2, "within the window of the last poll");
        assert_eq!(p.count(s(12)), 1, "router 1 last polled 11 s ago");
        p.polled(PollerId(3), s(12));
        assert_eq!(p.count(s(12)), 2, "a restarted router under a new id");
        assert_eq!(p.count(s(30)), 0);
    }

    #[test]
    fn keeps_at_most_max_ids_and_gives_memory_back() {
        let t0 = Instant::now();
        let mut p = Pollers::new(Duration::from_secs(10), 3);
        for id in 0..100 {
            p.polled(PollerId(id), t0 + Duration::from_millis(id));
        }
        assert_eq!(p.count(t0 + Duration::from_millis(100)), 3);
        assert!(p.last.contains_key(&PollerId(99)), "the newest stays");
        let mut big = Pollers::new(Duration::from_secs(1), 10_000);
        for id in 0..10_000 {
            big.polled(PollerId(id), t0);
        }
        let full = big.last.capacity();
        assert_eq!(big.count(t0 + Duration::from_secs(5)), 0);
        assert!(big.last.capacity() < full / 100, "{} of {full}", big.last.capacity());
    }
}

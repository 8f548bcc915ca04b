//! The placement policies' target table: target → placement, bounded by a cap on entries.
//!
//! An exact LRU: when full, the coldest target (least recently picked or placed) is the
//! one evicted, and an evicted target is simply placed afresh when it comes back, as LARD
//! does for a new target. Each entry keeps the tick of its last use beside its value, and
//! every use appends (target, tick) to a queue; eviction pops the queue's front, skipping
//! uses a later one superseded. A pick then touches its entry's own memory and the queue's
//! tail only, where a linked LRU list also rewrites both neighbours (three more cache
//! misses once the table outgrows the CPU's caches). The queue is rebuilt from the live
//! entries when it grows past twice the table (and a few hundred), which costs a pass over
//! the queue once per as many uses.
//!
//! Until the table first reaches its cap nothing is evicted, so no queue is kept: a use
//! only stamps its entry. The first eviction builds the queue from the entries sorted by
//! their last use, exactly the live uses the queue would hold by then (ticks are unique),
//! so the victims are the same; a table that never fills (the default cap is a million
//! targets) never pays for the queue or its rebuilds.

use std::collections::{HashMap, VecDeque};

use cache::FxBuildHasher;

use crate::TargetKey;

/// An entry's value and the tick of its last use.
struct Entry<V> {
    value: V,
    used: u64,
}

/// Target → `V` (a node, a server set, a subtree's record), at most `cap` entries.
pub struct TargetTable<V> {
    entries: HashMap<TargetKey, Entry<V>, FxBuildHasher>,
    /// Uses oldest first; one whose tick is not its entry's last use is stale. Kept only
    /// once the table has been full (`queued`).
    uses: VecDeque<(TargetKey, u64)>,
    queued: bool,
    tick: u64,
    cap: usize,
    evictions: u64,
}

/// Stale uses the queue may hold beyond twice the entries before it is rebuilt.
const SLACK: usize = 512;

impl<V: Send> TargetTable<V> {
    /// An empty table holding at most `cap` entries.
    pub fn new(cap: usize) -> Self {
        TargetTable {
            entries: HashMap::with_hasher(FxBuildHasher),
            uses: VecDeque::new(),
            queued: false,
            tick: 0,
            cap,
            evictions: 0,
        }
    }

    /// Record a use of `key` now; the caller stamps the entry with the returned tick.
    fn used(&mut self, key: TargetKey) -> u64 {
        let tick = self.tick;
        self.tick += 1;
        if self.queued {
            self.make_room_for_a_use();
            self.uses.push_back((key, tick));
        }
        tick
    }

    fn make_room_for_a_use(&mut self) {
        if self.uses.len() >= 2 * self.entries.len() + SLACK {
            self.rebuild_uses();
        }
    }

    /// Start keeping the queue of uses: every entry's last use, oldest first.
    fn queue_uses(&mut self) {
        let mut uses: Vec<(TargetKey, u64)> =
            self.entries.iter().map(|(&key, e)| (key, e.used)).collect();
        uses.sort_unstable_by_key(|&(_, tick)| tick);
        self.uses = uses.into();
        self.queued = true;
    }

    /// The queue of uses again, holding only each entry's last use, oldest first: the
    /// queue already holds every entry's last use in tick order, so dropping the stale
    /// ones in place gives it without sorting the table.
    fn rebuild_uses(&mut self) {
        let entries = &self.entries;
        self.uses.retain(|&(key, tick)| entries.get(&key).is_some_and(|e| e.used == tick));
    }

    /// The entry for `key`, made the most recently used.
    pub fn get_mut(&mut self, key: TargetKey) -> Option<&mut V> {
        if self.queued {
            self.make_room_for_a_use();
        }
        let entry = self.entries.get_mut(&key)?;
        entry.used = self.tick;
        if self.queued {
            self.uses.push_back((key, self.tick));
        }
        self.tick += 1;
        Some(&mut entry.value)
    }

    /// The entry for `key` without touching recency (admin reads).
    pub fn peek(&self, key: TargetKey) -> Option<&V> {
        self.entries.get(&key).map(|e| &e.value)
    }

    /// Add (or replace) an entry, evicting the coldest when full.
    pub fn insert(&mut self, key: TargetKey, value: V) {
        if self.cap == 0 {
            return;
        }
        if !self.entries.contains_key(&key) {
            if self.entries.len() >= self.cap && !self.queued {
                self.queue_uses();
            }
            while self.entries.len() >= self.cap {
                let Some((old, tick)) = self.uses.pop_front() else { break };
                if self.entries.get(&old).is_some_and(|e| e.used == tick) {
                    self.entries.remove(&old);
                    self.evictions += 1;
                }
            }
        }
        let used = self.used(key);
        self.entries.insert(key, Entry { value, used });
    }

    /// Keep only the entries `keep` accepts (it may also edit them): membership changes.
    pub fn retain(&mut self, mut keep: impl FnMut(&TargetKey, &mut V) -> bool) {
        self.entries.retain(|key, e| keep(key, &mut e.value));
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Entries dropped so far to stay within the cap.
    pub fn evictions(&self) -> u64 {
        self.evictions
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stays_within_its_cap_evicting_the_coldest() {
        let mut t = TargetTable::new(2);
        t.insert(TargetKey(1), 'a');
        t.insert(TargetKey(2), 'b');
        assert_eq!(t.get_mut(TargetKey(1)), Some(&mut 'a'));
        t.insert(TargetKey(3), 'c');
        assert_eq!(t.len(), 2);
        assert_eq!(t.evictions(), 1);
        assert_eq!(t.peek(TargetKey(2)), None, "2 was the coldest");
        assert_eq!(t.peek(TargetKey(1)), Some(&'a'));
        t.retain(|_, v| *v != 'a');
        assert_eq!(t.len(), 1);
        assert_eq!(t.evictions(), 1, "retain is not eviction");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        /// Against the `cache` crate's linked LRU with every entry one byte: the same
        /// values, lengths and evictions after every step, through queue rebuilds too.
        #[test]
        fn evicts_exactly_as_a_linked_lru(
            cap in 0usize..6,
            ops in proptest::collection::vec((0u8..4, 0u64..9), 0..1_500),
        ) {
            use cache::{ByteCache, Lru};
            let mut t = TargetTable::new(cap);
            let mut model: Lru<TargetKey, u64, FxBuildHasher> =
                Lru::lru_with_hasher(cap as u64, FxBuildHasher);
            for (step, (op, k)) in ops.into_iter().enumerate() {
                let key = TargetKey(k);
                match op {
                    0 | 1 => {
                        proptest::prop_assert_eq!(t.get_mut(key).copied(), model.get_mut(&key).copied());
                    }
                    2 => {
                        t.insert(key, step as u64);
                        model.insert(key, step as u64, 1);
                    }
                    _ => {
                        t.retain(|key, _| key.0 != k);
                        model.retain(|key, _| key.0 != k);
                    }
                }
                proptest::prop_assert_eq!(t.len(), model.len());
                proptest::prop_assert_eq!(t.evictions(), model.stats().evictions);
                for k in 0..9 {
                    proptest::prop_assert_eq!(t.peek(TargetKey(k)), model.peek(&TargetKey(k)));
                }
            }
        }
    }
}

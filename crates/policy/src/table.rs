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
//!
//! The entries sit in an open-addressed table (linear probing), each key and tick beside
//! its value, so a lookup that finds its key at once has the value's first line in hand
//! (keys in an array of their own made a lookup read two lines, and `lard-r`'s pick with
//! 80,000 targets 1.2–1.7× slower). A target's first slot is a function of its key
//! alone, so a caller that knows which targets come next (a simulator replaying a
//! stream) can load that memory ahead ([`TargetTable::upcoming`]).

use std::collections::VecDeque;

use crate::TargetKey;

/// A slot's key and the tick of its entry's last use ([`VACANT`]: no entry).
#[derive(Copy, Clone)]
struct Slot {
    key: TargetKey,
    used: u64,
}

/// The tick of an empty slot (ticks count uses and never reach it).
const VACANT: u64 = u64::MAX;

const EMPTY: Slot = Slot { key: TargetKey(0), used: VACANT };

/// One slot of the table: its key and last use, and its value (`None`: vacant).
struct Entry<V> {
    slot: Slot,
    value: Option<V>,
}

impl<V> Entry<V> {
    fn vacant() -> Self {
        Entry { slot: EMPTY, value: None }
    }
}

/// Slots of the first allocation (a power of two, as every size).
const MIN_SLOTS: usize = 16;

/// Target → `V` (a node, a server set, a subtree's record), at most `cap` entries.
pub struct TargetTable<V> {
    /// Per slot its key, last use and value.
    entries: Vec<Entry<V>>,
    /// Entries held.
    len: usize,
    /// `64 − log2(slots)`: a key's first slot is the top bits of its mixed hash.
    shift: u32,
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
            entries: Vec::new(),
            len: 0,
            shift: 64,
            uses: VecDeque::new(),
            queued: false,
            tick: 0,
            cap,
            evictions: 0,
        }
    }

    /// `key`'s first slot: Fibonacci hashing, so that consecutive keys (targets known by
    /// their index) spread over the table. Only called with slots allocated.
    #[inline]
    fn home(&self, key: TargetKey) -> usize {
        (key.0.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// The slot holding `key`.
    #[inline]
    fn find(&self, key: TargetKey) -> Option<usize> {
        if self.len == 0 {
            return None;
        }
        let mask = self.entries.len() - 1;
        let mut i = self.home(key);
        // Ends: at most three quarters of the slots are taken, so a vacant one comes.
        loop {
            let slot = self.entries[i].slot;
            if slot.used == VACANT {
                return None;
            }
            if slot.key == key {
                return Some(i);
            }
            i = (i + 1) & mask;
        }
    }

    /// Put an entry for `key`, which the table does not hold, in its slot (room checked).
    fn place(&mut self, key: TargetKey, used: u64, value: V) {
        let mask = self.entries.len() - 1;
        let mut i = self.home(key);
        while self.entries[i].slot.used != VACANT {
            i = (i + 1) & mask;
        }
        self.entries[i] = Entry { slot: Slot { key, used }, value: Some(value) };
        self.len += 1;
    }

    /// Room for one more entry, keeping at most three quarters of the slots taken: the
    /// table doubles, entries placed again in slot order (deterministic).
    fn reserve_one(&mut self) {
        if 4 * (self.len + 1) <= 3 * self.entries.len() {
            return;
        }
        let size = (2 * self.entries.len()).max(MIN_SLOTS);
        self.rebuild(size, |_, _| true);
    }

    /// The table again with `size` slots, holding the entries `keep` accepts.
    fn rebuild(&mut self, size: usize, mut keep: impl FnMut(&TargetKey, &mut V) -> bool) {
        let entries = std::mem::replace(&mut self.entries, Vec::with_capacity(size));
        self.entries.resize_with(size, Entry::vacant);
        self.shift = 64 - size.trailing_zeros();
        self.len = 0;
        for Entry { slot, value } in entries {
            if let Some(mut value) = value {
                if keep(&slot.key, &mut value) {
                    self.place(slot.key, slot.used, value);
                }
            }
        }
    }

    /// Empty slot `i`, moving later entries of its run back so that every entry stays
    /// reachable from its first slot (deletion without tombstones).
    fn remove_at(&mut self, i: usize) {
        let mask = self.entries.len() - 1;
        self.entries[i] = Entry::vacant();
        self.len -= 1;
        let (mut hole, mut j) = (i, (i + 1) & mask);
        while self.entries[j].slot.used != VACANT {
            let home = self.home(self.entries[j].slot.key);
            // The entry may fill the hole when its first slot is not between the hole
            // (exclusive) and itself.
            if j.wrapping_sub(home) & mask >= j.wrapping_sub(hole) & mask {
                // The hole is vacant: the entry moves there and leaves a vacant slot.
                self.entries.swap(hole, j);
                hole = j;
            }
            j = (j + 1) & mask;
        }
    }

    /// Whether `key`'s last use was at `tick` (the queue's use is not stale).
    fn last_used_at(&self, key: TargetKey, tick: u64) -> bool {
        self.find(key).is_some_and(|i| self.entries[i].slot.used == tick)
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
        if self.uses.len() >= 2 * self.len + SLACK {
            self.rebuild_uses();
        }
    }

    /// Start keeping the queue of uses: every entry's last use, oldest first.
    fn queue_uses(&mut self) {
        let held = self.entries.iter().map(|e| e.slot).filter(|s| s.used != VACANT);
        let mut uses: Vec<(TargetKey, u64)> = held.map(|s| (s.key, s.used)).collect();
        uses.sort_unstable_by_key(|&(_, tick)| tick);
        self.uses = uses.into();
        self.queued = true;
    }

    /// The queue of uses again, holding only each entry's last use, oldest first: the
    /// queue already holds every entry's last use in tick order, so dropping the stale
    /// ones in place gives it without sorting the table.
    fn rebuild_uses(&mut self) {
        let mut uses = std::mem::take(&mut self.uses);
        uses.retain(|&(key, tick)| self.last_used_at(key, tick));
        self.uses = uses;
    }

    /// The entry for `key`, made the most recently used.
    pub fn get_mut(&mut self, key: TargetKey) -> Option<&mut V> {
        if self.queued {
            self.make_room_for_a_use();
        }
        let i = self.find(key)?;
        self.entries[i].slot.used = self.tick;
        if self.queued {
            self.uses.push_back((key, self.tick));
        }
        self.tick += 1;
        self.entries[i].value.as_mut()
    }

    /// The entry for `key` without touching recency (admin reads).
    pub fn peek(&self, key: TargetKey) -> Option<&V> {
        self.find(key).and_then(|i| self.entries[i].value.as_ref())
    }

    /// Tell `touch` the memory a lookup of `key` reads first, as (address, bytes): its
    /// first slot's key and value. Only addresses are computed; nothing is read.
    pub fn upcoming(&self, key: TargetKey, touch: &mut dyn FnMut(*const u8, usize)) {
        if self.entries.is_empty() {
            return;
        }
        let i = self.home(key);
        touch(std::ptr::from_ref(&self.entries[i]).cast(), std::mem::size_of::<Entry<V>>());
    }

    /// Add (or replace) an entry, evicting the coldest when full.
    pub fn insert(&mut self, key: TargetKey, value: V) {
        if self.cap == 0 {
            return;
        }
        if let Some(i) = self.find(key) {
            let used = self.used(key);
            self.entries[i] = Entry { slot: Slot { key, used }, value: Some(value) };
            return;
        }
        if self.len >= self.cap && !self.queued {
            self.queue_uses();
        }
        while self.len >= self.cap {
            let Some((old, tick)) = self.uses.pop_front() else { break };
            if let Some(i) = self.find(old).filter(|&i| self.entries[i].slot.used == tick) {
                self.remove_at(i);
                self.evictions += 1;
            }
        }
        let used = self.used(key);
        self.reserve_one();
        self.place(key, used, value);
    }

    /// Keep only the entries `keep` accepts (it may also edit them): membership changes.
    /// Each entry is offered once; the table is laid out again without the others.
    pub fn retain(&mut self, keep: impl FnMut(&TargetKey, &mut V) -> bool) {
        if self.len > 0 {
            self.rebuild(self.entries.len(), keep);
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Entries dropped so far to stay within the cap.
    pub fn evictions(&self) -> u64 {
        self.evictions
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cache::FxBuildHasher;

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

    /// Every step of `ops` (op, key) against the `cache` crate's linked LRU with every
    /// entry one byte: the same values, lengths and evictions after every step.
    fn same_as_a_linked_lru(cap: usize, keys: u64, ops: Vec<(u8, u64)>) {
        use cache::{ByteCache, Lru};
        let mut t = TargetTable::new(cap);
        let mut model: Lru<TargetKey, u64, FxBuildHasher> =
            Lru::lru_with_hasher(cap as u64, FxBuildHasher);
        for (step, (op, k)) in ops.into_iter().enumerate() {
            let key = TargetKey(k);
            match op {
                0 | 1 => assert_eq!(t.get_mut(key).copied(), model.get_mut(&key).copied()),
                2 => {
                    t.insert(key, step as u64);
                    model.insert(key, step as u64, 1);
                }
                _ => {
                    t.retain(|key, _| key.0 != k);
                    model.retain(|key, _| key.0 != k);
                }
            }
            assert_eq!(t.len(), model.len());
            assert_eq!(t.evictions(), model.stats().evictions);
            for k in 0..keys {
                assert_eq!(t.peek(TargetKey(k)), model.peek(&TargetKey(k)));
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        /// A few keys and a small cap: through queue rebuilds too.
        #[test]
        fn evicts_exactly_as_a_linked_lru(
            cap in 0usize..6,
            ops in proptest::collection::vec((0u8..4, 0u64..9), 0..1_500),
        ) {
            same_as_a_linked_lru(cap, 9, ops);
        }

        /// Many keys and tables that grow: long probing runs, and entries removed from
        /// the middle of a run (evictions, retain) with the rest still found.
        #[test]
        fn probing_runs_survive_removals_and_growth(
            cap in 1usize..150,
            ops in proptest::collection::vec((0u8..7, 0u64..160), 0..1_000),
        ) {
            // Mostly inserts and lookups, so the table fills and grows.
            let ops = ops.into_iter().map(|(op, k)| (op.min(2).max(op / 6 * 3), k)).collect();
            same_as_a_linked_lru(cap, 160, ops);
        }
    }

    #[test]
    fn upcoming_names_the_first_slot_only_once_allocated() {
        let mut t = TargetTable::new(8);
        let mut touched = Vec::new();
        t.upcoming(TargetKey(3), &mut |at, bytes| touched.push((at, bytes)));
        assert!(touched.is_empty(), "nothing allocated yet");
        t.insert(TargetKey(3), 'x');
        t.upcoming(TargetKey(3), &mut |at, bytes| touched.push((at, bytes)));
        assert_eq!(touched.len(), 1, "its entry: key and value together");
        let i = t.find(TargetKey(3)).unwrap();
        assert_eq!(touched[0].0, std::ptr::from_ref(&t.entries[i]).cast::<u8>());
    }
}

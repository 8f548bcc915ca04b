//! The placement policies' target table: target → placement, bounded by a cap on entries.
//!
//! It is an LRU from the `cache` crate with every entry one "byte", so the cap counts
//! entries and the coldest target (least recently picked) is the one evicted. An evicted
//! target is simply placed afresh when it comes back, as LARD does for a new target.

use cache::{ByteCache, FxBuildHasher, Lru};

use crate::TargetKey;

/// Target → `V` (a node, a server set, a subtree's record), at most `cap` entries.
pub struct TargetTable<V> {
    entries: Lru<TargetKey, V, FxBuildHasher>,
}

impl<V: Send> TargetTable<V> {
    /// An empty table holding at most `cap` entries.
    pub fn new(cap: usize) -> Self {
        TargetTable { entries: Lru::lru_with_hasher(cap as u64, FxBuildHasher) }
    }

    /// The entry for `key`, made the most recently used.
    pub fn get_mut(&mut self, key: TargetKey) -> Option<&mut V> {
        self.entries.get_mut(&key)
    }

    /// The entry for `key` without touching recency (admin reads).
    pub fn peek(&self, key: TargetKey) -> Option<&V> {
        self.entries.peek(&key)
    }

    /// Add (or replace) an entry, evicting the coldest when full.
    pub fn insert(&mut self, key: TargetKey, value: V) {
        self.entries.insert(key, value, 1);
    }

    /// Keep only the entries `keep` accepts (it may also edit them): membership changes.
    pub fn retain(&mut self, keep: impl FnMut(&TargetKey, &mut V) -> bool) {
        self.entries.retain(keep);
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Entries dropped so far to stay within the cap.
    pub fn evictions(&self) -> u64 {
        self.entries.stats().evictions
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
}

//! The cache's index, key → slot number: open addressing with linear probing, each key
//! beside its slot.
//!
//! A hit reads the key's first entry and, less often, the next few in the same run:
//! usually one cache line, where a general hash map reads a line of control bytes and
//! then one of entries (a simulator at a thousand nodes looks up a thousand caches too
//! large together for the CPU's caches, so each line is a miss). Removal moves later
//! entries of the run back instead of leaving tombstones, so lookups never slow down
//! with churn.

use std::hash::{BuildHasher, Hash};

/// Entries of the first allocation (a power of two, as every size).
const MIN_ENTRIES: usize = 8;

/// Key → slot number, at most three quarters full.
pub(crate) struct ProbeIndex<K, S> {
    entries: Vec<Option<(K, u32)>>,
    len: usize,
    /// `64 − log2(entries)`: a key's first entry is the top bits of its mixed hash.
    shift: u32,
    hasher: S,
}

impl<K: Hash + Eq, S: BuildHasher> ProbeIndex<K, S> {
    pub(crate) fn with_hasher(hasher: S) -> Self {
        ProbeIndex { entries: Vec::new(), len: 0, shift: 64, hasher }
    }

    /// `key`'s first entry (entries allocated): its hash times the golden ratio, top
    /// bits, so that hashes differing only in high or low bits still spread.
    #[inline]
    fn home(&self, key: &K) -> usize {
        (self.hasher.hash_one(key).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// Where `key` is, as an entry number.
    #[inline]
    fn find(&self, key: &K) -> Option<usize> {
        if self.len == 0 {
            return None;
        }
        let mask = self.entries.len() - 1;
        let mut i = self.home(key);
        // Ends: at most three quarters of the entries are taken, so a vacant one comes.
        loop {
            match &self.entries[i] {
                None => return None,
                Some((k, _)) if k == key => return Some(i),
                Some(_) => i = (i + 1) & mask,
            }
        }
    }

    #[inline]
    pub(crate) fn get(&self, key: &K) -> Option<u32> {
        self.find(key).and_then(|i| self.entries[i].as_ref().map(|&(_, slot)| slot))
    }

    pub(crate) fn contains_key(&self, key: &K) -> bool {
        self.find(key).is_some()
    }

    /// Index `key` (which it does not hold) at `slot`.
    pub(crate) fn insert(&mut self, key: K, slot: u32) {
        if 4 * (self.len + 1) > 3 * self.entries.len() {
            self.grow();
        }
        self.place(key, slot);
    }

    fn place(&mut self, key: K, slot: u32) {
        let mask = self.entries.len() - 1;
        let mut i = self.home(&key);
        while self.entries[i].is_some() {
            i = (i + 1) & mask;
        }
        self.entries[i] = Some((key, slot));
        self.len += 1;
    }

    /// Twice the entries, each placed again in entry order (deterministic).
    fn grow(&mut self) {
        let size = (2 * self.entries.len()).max(MIN_ENTRIES);
        let old = std::mem::take(&mut self.entries);
        self.entries.resize_with(size, || None);
        self.shift = 64 - size.trailing_zeros();
        self.len = 0;
        for (key, slot) in old.into_iter().flatten() {
            self.place(key, slot);
        }
    }

    /// Drop `key`, returning its slot; later entries of its run move back into the gap
    /// so that each stays reachable from its first entry.
    pub(crate) fn remove(&mut self, key: &K) -> Option<u32> {
        let i = self.find(key)?;
        let (_, slot) = self.entries[i].take()?;
        self.len -= 1;
        let mask = self.entries.len() - 1;
        let (mut hole, mut j) = (i, (i + 1) & mask);
        while let Some((k, _)) = &self.entries[j] {
            let home = self.home(k);
            // The entry may fill the hole when its first entry is not between the hole
            // (exclusive) and itself.
            if j.wrapping_sub(home) & mask >= j.wrapping_sub(hole) & mask {
                self.entries.swap(hole, j);
                hole = j;
            }
            j = (j + 1) & mask;
        }
        Some(slot)
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn clear(&mut self) {
        self.entries.iter_mut().for_each(|e| *e = None);
        self.len = 0;
    }

    /// Every key, in entry order.
    pub(crate) fn keys(&self) -> impl Iterator<Item = &K> + '_ {
        self.entries.iter().filter_map(|e| e.as_ref().map(|(k, _)| k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FxBuildHasher;
    use proptest::prelude::*;
    use std::collections::hash_map::Entry;
    use std::collections::HashMap;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Against a standard map: inserts, removals (from the middle of probing runs as
        /// the index fills and grows) and clears give the same lookups throughout.
        #[test]
        fn finds_what_a_hash_map_finds(
            ops in prop::collection::vec((0u8..8, 0u32..200), 0..800),
        ) {
            let mut index = ProbeIndex::with_hasher(FxBuildHasher);
            let mut model = HashMap::new();
            for (step, (op, key)) in ops.into_iter().enumerate() {
                match op {
                    0..=4 => {
                        if let Entry::Vacant(e) = model.entry(key) {
                            index.insert(key, step as u32);
                            e.insert(step as u32);
                        }
                    }
                    5 | 6 => prop_assert_eq!(index.remove(&key), model.remove(&key)),
                    _ if step % 50 == 0 => {
                        index.clear();
                        model.clear();
                    }
                    _ => {}
                }
                prop_assert_eq!(index.len(), model.len());
                for k in 0..200 {
                    prop_assert_eq!(index.get(&k), model.get(&k).copied());
                }
            }
            let mut keys: Vec<u32> = index.keys().copied().collect();
            keys.sort_unstable();
            let mut want: Vec<u32> = model.keys().copied().collect();
            want.sort_unstable();
            prop_assert_eq!(keys, want);
        }
    }
}

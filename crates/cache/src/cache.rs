//! The cache engine every replacement order shares: index, slab, bytes and counters.
//!
//! Entries live in a slab (`Vec`) and are found through an index from key to slot
//! number (`probe_index.rs`). Freed slots are reused, so once the cache has been full
//! once, no operation allocates (apart from cloning the key into the index on insert).
//! The replacement order ([`Replacement`]) keeps its own per-slot data and only answers
//! "who goes next".

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hash};

use crate::byte_cache::{ByteCache, CacheStats};
use crate::probe_index::ProbeIndex;

/// Most entries one cache holds, whatever their bytes (slot numbers are `u32`); beyond
/// it the cache evicts as if it were full. Reaching it takes hundreds of gigabytes.
pub const MAX_ENTRIES: usize = u32::MAX as usize - 1;

/// The order in which a [`Cache`] evicts. Slots are small integers the cache reuses;
/// an order keeps whatever it needs per slot (links, priorities) in its own vectors.
pub trait Replacement: Send {
    /// `slot` now holds a new entry of `bytes`.
    fn admitted(&mut self, slot: u32, bytes: u64);
    /// The entry in `slot` was hit. An order that weighs entries by size keeps their
    /// bytes from [`Replacement::admitted`]: a hit then reads only the order's own data.
    fn touched(&mut self, slot: u32);
    /// The entry in `slot` is gone (evicted or removed).
    fn removed(&mut self, slot: u32);
    /// The entry to evict next, or `None` when the order holds none. The cache then
    /// calls [`Replacement::removed`] for it.
    fn victim(&mut self) -> Option<u32>;
    /// Forget every entry.
    fn clear(&mut self);
}

struct Slot<K, V> {
    entry: Option<(K, V)>,
    bytes: u64,
}

/// A byte-bounded cache whose eviction order is `R`. Use it through the aliases
/// [`crate::Lru`] and [`crate::GreedyDualSize`].
pub struct Cache<K, V, R, S = RandomState> {
    index: ProbeIndex<K, S>,
    slots: Vec<Slot<K, V>>,
    free: Vec<u32>,
    used: u64,
    capacity: u64,
    stats: CacheStats,
    order: R,
}

impl<K, V, R, S> Cache<K, V, R, S>
where
    K: Hash + Eq + Clone,
    R: Replacement,
    S: BuildHasher,
{
    /// An empty cache of `capacity_bytes` evicting in `order`, hashing keys with `hasher`.
    pub fn with_order(capacity_bytes: u64, order: R, hasher: S) -> Self {
        Cache {
            index: ProbeIndex::with_hasher(hasher),
            slots: Vec::new(),
            free: Vec::new(),
            used: 0,
            capacity: capacity_bytes,
            stats: CacheStats::default(),
            order,
        }
    }

    /// The value for `key` without counting a lookup or touching the eviction order.
    pub fn peek(&self, key: &K) -> Option<&V> {
        let slot = self.index.get(key)?;
        self.slots[slot as usize].entry.as_ref().map(|(_, v)| v)
    }

    /// As [`Cache::peek`], mutable.
    pub fn peek_mut(&mut self, key: &K) -> Option<&mut V> {
        let slot = self.index.get(key)?;
        self.slots[slot as usize].entry.as_mut().map(|(_, v)| v)
    }

    /// Every entry as (key, value, bytes), in slot order: deterministic, but not the
    /// eviction order.
    pub fn iter(&self) -> impl Iterator<Item = (&K, &V, u64)> + '_ {
        self.slots.iter().filter_map(|s| s.entry.as_ref().map(|(k, v)| (k, v, s.bytes)))
    }

    /// Keep only the entries for which `keep` says true (e.g. drop a departed node's
    /// targets from a policy table). Removed entries count neither as evictions nor hits.
    pub fn retain(&mut self, mut keep: impl FnMut(&K, &mut V) -> bool) {
        for slot in 0..self.slots.len() {
            let drop = match self.slots[slot].entry.as_mut() {
                Some((k, v)) => !keep(k, v),
                None => false,
            };
            if drop {
                self.vacate(slot as u32);
            }
        }
    }

    /// The replacement order (e.g. to read GreedyDual-Size's inflation value).
    pub fn order(&self) -> &R {
        &self.order
    }

    /// Drop every entry (counters are kept).
    pub fn clear(&mut self) {
        self.index.clear();
        self.slots.clear();
        self.free.clear();
        self.used = 0;
        self.order.clear();
    }

    /// Change the capacity, evicting down to it. Returns how many entries were evicted.
    pub fn set_capacity(&mut self, capacity_bytes: u64) -> usize {
        self.capacity = capacity_bytes;
        self.evict_until(0)
    }

    fn lookup(&mut self, key: &K) -> Option<u32> {
        match self.index.get(key) {
            Some(slot) => {
                self.stats.hits += 1;
                self.order.touched(slot);
                Some(slot)
            }
            None => {
                self.stats.misses += 1;
                None
            }
        }
    }

    /// Remove the entry in `slot` from the index, the order and the byte count.
    fn vacate(&mut self, slot: u32) -> V {
        let s = &mut self.slots[slot as usize];
        let Some((key, value)) = s.entry.take() else {
            unreachable!("vacate is only called on a held slot")
        };
        self.used -= s.bytes;
        s.bytes = 0;
        self.index.remove(&key);
        self.order.removed(slot);
        self.free.push(slot);
        value
    }

    /// Evict until `incoming` more bytes and one more entry fit.
    fn evict_until(&mut self, incoming: u64) -> usize {
        let mut evicted = 0;
        while self.used + incoming > self.capacity || self.index.len() >= MAX_ENTRIES {
            let Some(slot) = self.order.victim() else { break };
            self.vacate(slot);
            evicted += 1;
        }
        self.stats.evictions += evicted as u64;
        evicted
    }
}

impl<K, V, R, S> ByteCache<K, V> for Cache<K, V, R, S>
where
    K: Hash + Eq + Clone + Send,
    V: Send,
    R: Replacement,
    S: BuildHasher + Send,
{
    fn get(&mut self, key: &K) -> Option<&V> {
        let slot = self.lookup(key)?;
        self.slots[slot as usize].entry.as_ref().map(|(_, v)| v)
    }

    fn get_mut(&mut self, key: &K) -> Option<&mut V> {
        let slot = self.lookup(key)?;
        self.slots[slot as usize].entry.as_mut().map(|(_, v)| v)
    }

    fn touch(&mut self, key: &K) -> bool {
        self.lookup(key).is_some()
    }

    fn contains(&self, key: &K) -> bool {
        self.index.contains_key(key)
    }

    fn for_each_key(&self, f: &mut dyn FnMut(&K)) {
        self.index.keys().for_each(f);
    }

    /// Replacing an entry removes the old one first, so the new one is admitted fresh.
    /// An entry larger than the whole cache is refused, and any older entry for the same
    /// key is dropped with it so that a stale value is never served.
    fn insert(&mut self, key: K, value: V, bytes: u64) -> usize {
        if let Some(slot) = self.index.get(&key) {
            self.vacate(slot);
        }
        if bytes > self.capacity {
            self.stats.rejected += 1;
            return 0;
        }
        let evicted = self.evict_until(bytes);
        self.stats.insertions += 1;
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = Slot { entry: None, bytes };
                slot
            }
            None => {
                self.slots.push(Slot { entry: None, bytes });
                (self.slots.len() - 1) as u32
            }
        };
        self.index.insert(key.clone(), slot);
        self.slots[slot as usize].entry = Some((key, value));
        self.used += bytes;
        self.order.admitted(slot, bytes);
        evicted
    }

    fn remove(&mut self, key: &K) -> Option<V> {
        let slot = self.index.get(key)?;
        Some(self.vacate(slot))
    }

    fn used_bytes(&self) -> u64 {
        self.used
    }

    fn capacity_bytes(&self) -> u64 {
        self.capacity
    }

    fn len(&self) -> usize {
        self.index.len()
    }

    fn stats(&self) -> CacheStats {
        self.stats
    }
}

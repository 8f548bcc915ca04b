//! Deterministic, byte-bounded caches with O(1) operations.
//!
//! The node server and the simulator use the same code, so simulated and measured hit
//! ratios can be compared. Nothing here reads a clock or a random source: the same
//! sequence of calls always gives the same contents.

use std::hash::Hash;

/// Hit, miss and eviction counters.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    pub hits: u64,
    pub misses: u64,
    pub insertions: u64,
    pub evictions: u64,
    /// Inserts refused because the item alone is larger than the whole cache.
    pub rejected: u64,
}

/// A cache bounded by the bytes of what it holds (each entry's size is given on insert).
pub trait ByteCache<K: Hash + Eq + Clone, V>: Send {
    /// Look up and count a hit or a miss; a hit makes the entry recently used.
    fn get(&mut self, key: &K) -> Option<&V>;
    /// As [`ByteCache::get`], for callers that update the value in place (policy tables).
    fn get_mut(&mut self, key: &K) -> Option<&mut V>;
    /// Whether `key` is held, without counting or touching recency.
    fn contains(&self, key: &K) -> bool;
    /// Insert (or replace) an entry of `bytes`, evicting as needed. An entry larger than
    /// the capacity is not stored. Returns how many entries were evicted.
    fn insert(&mut self, key: K, value: V, bytes: u64) -> usize;
    fn remove(&mut self, key: &K) -> Option<V>;
    fn used_bytes(&self) -> u64;
    fn capacity_bytes(&self) -> u64;
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    fn stats(&self) -> CacheStats;
}

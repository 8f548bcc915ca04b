//! What every cache offers its users, whatever it evicts: the [`ByteCache`] trait and its
//! counters, [`CacheStats`].

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

impl CacheStats {
    /// Hits over lookups; 0 when nothing was looked up.
    pub fn hit_ratio(&self) -> f64 {
        let lookups = self.hits + self.misses;
        if lookups == 0 {
            0.0
        } else {
            self.hits as f64 / lookups as f64
        }
    }
}

/// A cache bounded by the bytes of what it holds (each entry's size is given on insert).
pub trait ByteCache<K: Hash + Eq + Clone, V>: Send {
    /// Look up and count a hit or a miss; a hit makes the entry recently used.
    fn get(&mut self, key: &K) -> Option<&V>;
    /// As [`ByteCache::get`], for callers that update the value in place (policy tables).
    fn get_mut(&mut self, key: &K) -> Option<&mut V>;
    /// As [`ByteCache::get`], for callers that only ask whether `key` is held (a
    /// simulated node): counts and touches alike, without reading the value.
    fn touch(&mut self, key: &K) -> bool {
        self.get(key).is_some()
    }
    /// Whether `key` is held, without counting or touching recency.
    fn contains(&self, key: &K) -> bool;
    /// Call `f` with every key held, in no particular order, without counting or touching
    /// recency (a summary of the holdings, as a node's load report carries).
    fn for_each_key(&self, f: &mut dyn FnMut(&K));
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

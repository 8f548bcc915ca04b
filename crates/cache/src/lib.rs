//! Deterministic, byte-bounded caches.
//!
//! The node server and the simulator use the same code, so simulated and measured hit
//! ratios can be compared. Nothing here reads a clock or a random source: the same
//! sequence of calls always gives the same contents.
//!
//! Map of the crate:
//! - [`ByteCache`]: the trait every cache implements; [`CacheStats`] its counters.
//! - [`Cache`] (`cache.rs`): the engine shared by every policy: a key → slot hash index,
//!   a slab of entries, byte accounting and statistics. What to evict is asked of a
//!   [`Replacement`] order.
//! - [`Lru`] (`lru.rs`): least recently used, O(1) per operation (intrusive list).
//! - [`GreedyDualSize`] (`gds.rs`): GreedyDual-Size, the replacement the LARD paper's
//!   simulator used; O(log n) per operation.
//! - [`Kind`] (`kind.rs`): pick a cache by name (`lru`, `gds`) and build it boxed.
//! - [`FxBuildHasher`] (`fx_hash.rs`): a fast, deterministic hasher for integer keys.

#![forbid(unsafe_code)]

mod cache;
mod fx_hash;
mod gds;
mod kind;
mod lru;

pub use cache::{Cache, Replacement, MAX_ENTRIES};
pub use fx_hash::{FxBuildHasher, FxHasher};
pub use gds::{packet_cost, unit_cost, GdsOrder, GreedyDualSize};
pub use kind::{Kind, UnknownKind};
pub use lru::{Lru, LruOrder};

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

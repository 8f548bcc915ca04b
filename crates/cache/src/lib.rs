//! Deterministic, byte-bounded caches.
//!
//! The node server and the simulator use the same code, so simulated and measured hit
//! ratios can be compared. Nothing here reads a clock or a random source: the same
//! sequence of calls always gives the same contents.
//!
//! Map of the crate:
//! - [`ByteCache`] (`byte_cache.rs`): the trait every cache implements; [`CacheStats`] its
//!   counters.
//! - [`Cache`] (`cache.rs`): the engine shared by every policy: a key → slot index
//!   (`probe_index.rs`, open addressing), a slab of entries, byte accounting and
//!   statistics. What to evict is asked of a [`Replacement`] order.
//! - [`Lru`] (`lru.rs`): least recently used, O(1) per operation (intrusive list).
//! - [`GreedyDualSize`] (`gds.rs`): GreedyDual-Size, the replacement the LARD paper's
//!   simulator used; O(log n) per operation.
//! - [`Kind`] (`kind.rs`): pick a cache by name (`lru`, `gds`) and build it boxed.
//! - [`FxBuildHasher`] (`fx_hash.rs`): a fast, deterministic hasher for integer keys.

#![forbid(unsafe_code)]

mod byte_cache;
mod cache;
mod fx_hash;
mod gds;
mod kind;
mod lru;
mod probe_index;

pub use byte_cache::{ByteCache, CacheStats};
pub use cache::{Cache, Replacement, MAX_ENTRIES};
pub use fx_hash::{FxBuildHasher, FxHasher};
pub use gds::{packet_cost, unit_cost, GdsOrder, GreedyDualSize};
pub use kind::{Kind, UnknownKind};
pub use lru::{Lru, LruOrder};

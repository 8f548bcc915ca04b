//! Least recently used: an intrusive doubly linked list over the slab's slots.
//!
//! Every operation is O(1): a hit unlinks the slot and links it at the head, eviction
//! takes the tail. The links live in a `Vec` indexed by slot, so nothing is allocated
//! once the cache has been full once.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hash};

use crate::cache::{Cache, Replacement};

const NIL: u32 = u32::MAX;

#[derive(Copy, Clone)]
struct Link {
    prev: u32,
    next: u32,
}

/// The LRU order: head is the most recently used slot, tail the next victim.
pub struct LruOrder {
    links: Vec<Link>,
    head: u32,
    tail: u32,
}

impl Default for LruOrder {
    fn default() -> Self {
        LruOrder { links: Vec::new(), head: NIL, tail: NIL }
    }
}

impl LruOrder {
    fn unlink(&mut self, slot: u32) {
        let Link { prev, next } = self.links[slot as usize];
        match prev {
            NIL => self.head = next,
            p => self.links[p as usize].next = next,
        }
        match next {
            NIL => self.tail = prev,
            n => self.links[n as usize].prev = prev,
        }
    }

    fn push_front(&mut self, slot: u32) {
        let link = Link { prev: NIL, next: self.head };
        if slot as usize == self.links.len() {
            self.links.push(link);
        } else {
            self.links[slot as usize] = link;
        }
        match self.head {
            NIL => self.tail = slot,
            h => self.links[h as usize].prev = slot,
        }
        self.head = slot;
    }
}

impl Replacement for LruOrder {
    fn admitted(&mut self, slot: u32, _bytes: u64) {
        self.push_front(slot);
    }

    fn touched(&mut self, slot: u32) {
        if self.head != slot {
            self.unlink(slot);
            self.push_front(slot);
        }
    }

    fn removed(&mut self, slot: u32) {
        self.unlink(slot);
    }

    fn victim(&mut self) -> Option<u32> {
        (self.tail != NIL).then_some(self.tail)
    }

    fn clear(&mut self) {
        self.links.clear();
        self.head = NIL;
        self.tail = NIL;
    }
}

/// A byte-bounded least-recently-used cache. For a table bounded by entry count, give
/// every entry 1 byte and the capacity in entries.
pub type Lru<K, V, S = RandomState> = Cache<K, V, LruOrder, S>;

impl<K: Hash + Eq + Clone, V> Cache<K, V, LruOrder, RandomState> {
    /// An empty LRU cache holding at most `capacity_bytes`.
    pub fn new(capacity_bytes: u64) -> Self {
        Cache::with_order(capacity_bytes, LruOrder::default(), RandomState::new())
    }
}

impl<K: Hash + Eq + Clone, V, S: BuildHasher> Cache<K, V, LruOrder, S> {
    /// As [`Lru::new`], hashing keys with `hasher` (e.g. [`crate::FxBuildHasher`]).
    pub fn lru_with_hasher(capacity_bytes: u64, hasher: S) -> Self {
        Cache::with_order(capacity_bytes, LruOrder::default(), hasher)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ByteCache;

    #[test]
    fn evicts_least_recently_used_first() {
        let mut c: Lru<u32, &str> = Lru::new(3);
        c.insert(1, "a", 1);
        c.insert(2, "b", 1);
        c.insert(3, "c", 1);
        assert_eq!(c.get(&1), Some(&"a"));
        assert_eq!(c.insert(4, "d", 1), 1);
        assert!(!c.contains(&2), "2 was the least recently used");
        assert!(c.contains(&1) && c.contains(&3) && c.contains(&4));
        assert_eq!(c.stats().evictions, 1);
    }

    #[test]
    fn bytes_bound_and_oversized_insert() {
        let mut c: Lru<&str, u8> = Lru::new(100);
        c.insert("a", 1, 60);
        c.insert("b", 2, 30);
        assert_eq!(c.used_bytes(), 90);
        assert_eq!(c.insert("c", 3, 50), 1);
        assert!(!c.contains(&"a"));
        assert_eq!(c.used_bytes(), 80);
        assert_eq!(c.insert("b", 9, 101), 0);
        assert!(!c.contains(&"b"), "a refused replacement drops the stale entry");
        assert_eq!(c.stats().rejected, 1);
        assert_eq!(c.used_bytes(), 50);
    }

    #[test]
    fn get_mut_updates_in_place_and_counts() {
        let mut c: Lru<u64, u32> = Lru::new(10);
        c.insert(7, 1, 1);
        *c.get_mut(&7).unwrap() += 5;
        assert_eq!(c.peek(&7), Some(&6));
        assert!(c.get_mut(&8).is_none());
        let s = c.stats();
        assert_eq!((s.hits, s.misses, s.insertions), (1, 1, 1));
    }

    #[test]
    fn retain_clear_and_capacity_change() {
        let mut c: Lru<u32, u32> = Lru::new(10);
        for k in 0..10 {
            c.insert(k, k % 3, 1);
        }
        c.retain(|_, v| *v != 0);
        assert_eq!(c.len(), 6);
        assert_eq!(c.iter().count(), 6);
        assert_eq!(c.set_capacity(2), 4);
        assert_eq!(c.len(), 2);
        c.clear();
        assert!(c.is_empty());
        assert_eq!(c.used_bytes(), 0);
        c.insert(1, 1, 1);
        assert_eq!(c.get(&1), Some(&1));
    }
}

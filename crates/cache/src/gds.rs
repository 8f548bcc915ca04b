//! GreedyDual-Size (Cao and Irani, 1997), the replacement the LARD paper's simulator used.
//!
//! Each entry carries a priority H = L + cost(size) / size, set when it is admitted and
//! again on every hit; the entry with the lowest H is evicted and the inflation value L
//! rises to that H, so entries that have not been hit for a while age out. With cost 1
//! ([`unit_cost`]) it favours small files, which maximises the hit ratio by count.
//!
//! Cost: O(log n) per admission and eviction, and per hit at worst: the entries sit in
//! an indexed 4-ary min-heap (each slot knows its heap position), so a hit raises the
//! entry's H in place and sifts it down, which for a hot entry (already near the
//! bottom) is a step or two. Nothing is allocated once the cache has been full. Ties in
//! H go to the entry touched least recently (a sequence number), so eviction is fully
//! deterministic.
//!
//! A heap item is 16 bytes (H, a 32-bit sequence number and the slot), four to a cache
//! line: a simulator keeps a thousand of these caches, and a hit's walk down the heap
//! reads a line per level. When the sequence numbers run out they are renumbered from 1
//! in their order, which keeps every comparison, so every victim, as it was.

use std::cmp::Ordering;
use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hash};

use crate::cache::{Cache, Replacement};

/// Cost 1 per entry: GDS(1), maximising hits.
pub fn unit_cost(_bytes: u64) -> f64 {
    1.0
}

/// Network packets to send the entry (2 + bytes/536): GDS(packets), the variant Cao and
/// Irani suggest to minimise network traffic.
pub fn packet_cost(bytes: u64) -> f64 {
    2.0 + bytes as f64 / 536.0
}

#[derive(Copy, Clone)]
struct Item {
    h: f64,
    seq: u32,
    slot: u32,
}

impl Item {
    /// Evicted before `other`: lower H, or equal H and touched earlier.
    fn before(&self, other: &Item) -> bool {
        self.h.total_cmp(&other.h).then(self.seq.cmp(&other.seq)) == Ordering::Less
    }
}

/// Children per heap node: a hit's item sinks to the bottom (its H is the newest), and
/// four children side by side halve the levels, i.e. the cache lines, it reads on the
/// way. Keys (H, seq) are unique, so the victim is the same whatever the arity.
const ARITY: usize = 4;

/// The GreedyDual-Size order.
pub struct GdsOrder {
    cost: fn(u64) -> f64,
    /// Inflation value L: the H of the last victim.
    inflation: f64,
    next_seq: u32,
    /// Min-heap by (H, seq), [`ARITY`] children a node.
    heap: Vec<Item>,
    /// Per slot, where its item is and what a hit adds to L: read together on a hit, so
    /// a hit needs neither the cache's slot nor a second lookup.
    places: Vec<Place>,
}

/// A slot's item in the heap and its `cost(bytes) / bytes`, computed once on admission.
#[derive(Copy, Clone, Default)]
struct Place {
    index: u32,
    worth: f64,
}

impl GdsOrder {
    /// An order charging `cost(bytes)` to fetch an entry again.
    pub fn new(cost: fn(u64) -> f64) -> Self {
        GdsOrder { cost, inflation: 0.0, next_seq: 1, heap: Vec::new(), places: Vec::new() }
    }

    /// The current inflation value L.
    pub fn inflation(&self) -> f64 {
        self.inflation
    }

    /// A fresh (H, seq) for `slot`'s entry, worth `worth`, touched now.
    fn stamp(&mut self, slot: u32, worth: f64) -> Item {
        if self.next_seq == u32::MAX {
            self.renumber();
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        Item { h: self.inflation + worth, seq, slot }
    }

    /// Number the items' sequence numbers 1, 2, … in their order, so that numbers are
    /// free again above them: every comparison, so the heap, stays as it was.
    fn renumber(&mut self) {
        let mut order: Vec<usize> = (0..self.heap.len()).collect();
        order.sort_unstable_by_key(|&i| self.heap[i].seq);
        for (seq, i) in (1..).zip(order) {
            self.heap[i].seq = seq;
        }
        self.next_seq = self.heap.len() as u32 + 1;
    }

    fn place(&mut self, i: usize, item: Item) {
        self.heap[i] = item;
        self.places[item.slot as usize].index = i as u32;
    }

    /// Restore the heap order around index `i` after its item changed.
    fn fix(&mut self, mut i: usize) {
        let item = self.heap[i];
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if !item.before(&self.heap[parent]) {
                break;
            }
            self.place(i, self.heap[parent]);
            i = parent;
        }
        self.sift_down(i, item);
    }

    /// Move `item`, now at index `i`, down to where it belongs.
    fn sift_down(&mut self, mut i: usize, item: Item) {
        loop {
            let first = ARITY * i + 1;
            let Some(children) = self.heap.get(first..(first + ARITY).min(self.heap.len())) else {
                break;
            };
            let Some((offset, least)) =
                children.iter().enumerate().reduce(|a, b| if b.1.before(a.1) { b } else { a })
            else {
                break;
            };
            let child = first + offset;
            if !least.before(&item) {
                break;
            }
            self.place(i, self.heap[child]);
            i = child;
        }
        self.place(i, item);
    }
}

impl Default for GdsOrder {
    fn default() -> Self {
        GdsOrder::new(unit_cost)
    }
}

impl Replacement for GdsOrder {
    fn admitted(&mut self, slot: u32, bytes: u64) {
        if slot as usize >= self.places.len() {
            self.places.resize(slot as usize + 1, Place::default());
        }
        let worth = (self.cost)(bytes) / bytes.max(1) as f64;
        self.places[slot as usize].worth = worth;
        let item = self.stamp(slot, worth);
        self.heap.push(item);
        self.fix(self.heap.len() - 1);
    }

    /// With a cost of at least 0 a hit only raises H (L never falls, as every H is at
    /// least L, and the sequence number grows), so the item only moves down: the walk up,
    /// a read of the parent's line, is skipped.
    fn touched(&mut self, slot: u32) {
        let Place { index, worth } = self.places[slot as usize];
        let item = self.stamp(slot, worth);
        if worth >= 0.0 {
            self.sift_down(index as usize, item);
        } else {
            self.heap[index as usize] = item;
            self.fix(index as usize);
        }
    }

    fn removed(&mut self, slot: u32) {
        let i = self.places[slot as usize].index as usize;
        let Some(last) = self.heap.pop() else { return };
        if i < self.heap.len() {
            self.heap[i] = last;
            self.fix(i);
        }
    }

    fn victim(&mut self) -> Option<u32> {
        let first = self.heap.first()?;
        self.inflation = first.h;
        Some(first.slot)
    }

    fn clear(&mut self) {
        self.inflation = 0.0;
        self.heap.clear();
        self.places.clear();
    }
}

/// A byte-bounded GreedyDual-Size cache.
pub type GreedyDualSize<K, V, S = RandomState> = Cache<K, V, GdsOrder, S>;

impl<K: Hash + Eq + Clone, V> Cache<K, V, GdsOrder, RandomState> {
    /// An empty GDS cache of `capacity_bytes` with cost 1 per entry.
    pub fn new(capacity_bytes: u64) -> Self {
        Cache::with_order(capacity_bytes, GdsOrder::default(), RandomState::new())
    }
}

impl<K: Hash + Eq + Clone, V, S: BuildHasher> Cache<K, V, GdsOrder, S> {
    /// A GDS cache with the given cost function and key hasher.
    pub fn gds_with(capacity_bytes: u64, cost: fn(u64) -> f64, hasher: S) -> Self {
        Cache::with_order(capacity_bytes, GdsOrder::new(cost), hasher)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ByteCache, FxBuildHasher};

    #[test]
    fn small_entries_outlive_large_ones() {
        let mut c: GreedyDualSize<u32, ()> = GreedyDualSize::new(1000);
        c.insert(1, (), 600);
        c.insert(2, (), 10);
        c.insert(3, (), 500);
        assert!(!c.contains(&1), "the large entry has the lowest H");
        assert!(c.contains(&2) && c.contains(&3));
    }

    #[test]
    fn hits_protect_and_inflation_ages() {
        let mut c: GreedyDualSize<u32, ()> = GreedyDualSize::new(300);
        c.insert(1, (), 100);
        c.insert(2, (), 100);
        c.insert(3, (), 100);
        c.get(&1);
        c.insert(4, (), 100);
        assert!(c.contains(&1), "1 was refreshed after the others' H was set");
        assert!(!c.contains(&2), "equal H: the least recently touched goes");
    }

    #[test]
    fn cost_function_is_honoured() {
        fn square(bytes: u64) -> f64 {
            (bytes * bytes) as f64
        }
        let mut c = GreedyDualSize::<u32, (), _>::gds_with(1000, square, FxBuildHasher);
        c.insert(1, (), 900);
        c.insert(2, (), 50);
        c.insert(3, (), 100);
        assert!(c.contains(&1), "cost size² makes H grow with size: the large entry stays");
        assert!(!c.contains(&2));
        assert!(packet_cost(5360) > packet_cost(536) && unit_cost(9) == unit_cost(1));
    }

    #[test]
    fn heap_holds_exactly_the_entries() {
        let mut c: GreedyDualSize<u32, ()> = GreedyDualSize::new(10);
        for k in 0..30 {
            c.insert(k, (), 1 + k as u64 % 3);
            c.get(&(k / 2));
        }
        c.remove(&29);
        assert_eq!(c.order().heap.len(), c.len());
        assert!(c.order().inflation() > 0.0);
    }

    #[test]
    fn renumbering_keeps_every_victim() {
        // Equal worth, so H ties often and the sequence numbers decide. `renumber_every`
        // touches force a renumbering; the victims must not change.
        let victims = |renumber_every: usize| {
            let mut order = GdsOrder::default();
            let mut held: Vec<u32> = Vec::new();
            let mut victims = Vec::new();
            for step in 0..3000usize {
                if step % renumber_every == 0 {
                    order.renumber();
                }
                let slot = ((step * 7919) % 23) as u32;
                if held.contains(&slot) {
                    order.touched(slot);
                    continue;
                }
                if held.len() == 8 {
                    let victim = order.victim().unwrap();
                    order.removed(victim);
                    held.retain(|&s| s != victim);
                    victims.push(victim);
                }
                order.admitted(slot, 1 + u64::from(slot % 3));
                held.push(slot);
            }
            victims
        };
        let plain = victims(usize::MAX);
        assert!(plain.len() > 100);
        assert_eq!(victims(1), plain);
        assert_eq!(victims(37), plain);
        // Running out of numbers renumbers: items 1..=3, then the hit takes 4.
        let mut order = GdsOrder::default();
        (0..3).for_each(|slot| order.admitted(slot, 1));
        order.next_seq = u32::MAX;
        order.touched(0);
        assert_eq!(order.next_seq, 5);
        assert_eq!(order.victim(), Some(1), "0 was touched last");
    }
}

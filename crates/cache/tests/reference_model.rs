//! Both caches against a plain reference: a `Vec` of entries scanned in full, evicting
//! the least recently touched (LRU) or the lowest (H, touch order) (GreedyDual-Size).

use cache::{ByteCache, CacheStats, GreedyDualSize, Lru};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Get(u8),
    GetMut(u8),
    Contains(u8),
    Insert(u8, u64),
    Remove(u8),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        1 => (0u8..16).prop_map(Op::Get),
        1 => (0u8..16).prop_map(Op::GetMut),
        1 => (0u8..16).prop_map(Op::Contains),
        3 => (0u8..16, 0u64..40).prop_map(|(k, b)| Op::Insert(k, b)),
        1 => (0u8..16).prop_map(Op::Remove),
    ]
}

struct Entry {
    key: u8,
    value: u32,
    bytes: u64,
    h: f64,
    seq: u64,
}

struct Model {
    gds: bool,
    capacity: u64,
    entries: Vec<Entry>,
    inflation: f64,
    next_seq: u64,
    stats: CacheStats,
}

impl Model {
    fn new(gds: bool, capacity: u64) -> Self {
        Model {
            gds,
            capacity,
            entries: Vec::new(),
            inflation: 0.0,
            next_seq: 1,
            stats: CacheStats::default(),
        }
    }
    fn used(&self) -> u64 {
        self.entries.iter().map(|e| e.bytes).sum()
    }
    fn find(&self, key: u8) -> Option<usize> {
        self.entries.iter().position(|e| e.key == key)
    }
    fn touch(&mut self, i: usize) {
        let e = &mut self.entries[i];
        e.seq = self.next_seq;
        self.next_seq += 1;
        e.h = self.inflation + 1.0 / e.bytes.max(1) as f64;
    }
    fn get(&mut self, key: u8) -> Option<u32> {
        match self.find(key) {
            Some(i) => {
                self.stats.hits += 1;
                self.touch(i);
                Some(self.entries[i].value)
            }
            None => {
                self.stats.misses += 1;
                None
            }
        }
    }
    fn insert(&mut self, key: u8, value: u32, bytes: u64) -> usize {
        if let Some(i) = self.find(key) {
            self.entries.remove(i);
        }
        if bytes > self.capacity {
            self.stats.rejected += 1;
            return 0;
        }
        let mut evicted = 0;
        while self.used() + bytes > self.capacity {
            let victim = (0..self.entries.len())
                .min_by(|&a, &b| {
                    let (a, b) = (&self.entries[a], &self.entries[b]);
                    if self.gds {
                        a.h.total_cmp(&b.h).then(a.seq.cmp(&b.seq))
                    } else {
                        a.seq.cmp(&b.seq)
                    }
                })
                .expect("over capacity with no entries");
            if self.gds {
                self.inflation = self.entries[victim].h;
            }
            self.entries.remove(victim);
            evicted += 1;
        }
        self.stats.evictions += evicted as u64;
        self.stats.insertions += 1;
        self.entries.push(Entry { key, value, bytes, h: 0.0, seq: 0 });
        let last = self.entries.len() - 1;
        self.touch(last);
        evicted
    }
}

fn check(
    cache: &mut dyn ByteCache<u8, u32>,
    gds: bool,
    capacity: u64,
    ops: &[Op],
) -> Result<(), TestCaseError> {
    let mut model = Model::new(gds, capacity);
    for (n, op) in ops.iter().enumerate() {
        let value = n as u32;
        match *op {
            Op::Get(k) => prop_assert_eq!(cache.get(&k).copied(), model.get(k)),
            Op::GetMut(k) => {
                let got = cache.get_mut(&k).map(|v| {
                    *v += 1;
                    *v - 1
                });
                let want = model.get(k);
                if let Some(i) = model.find(k) {
                    model.entries[i].value += 1;
                }
                prop_assert_eq!(got, want);
            }
            Op::Contains(k) => prop_assert_eq!(cache.contains(&k), model.find(k).is_some()),
            Op::Insert(k, b) => {
                prop_assert_eq!(cache.insert(k, value, b), model.insert(k, value, b))
            }
            Op::Remove(k) => {
                let want = model.find(k).map(|i| model.entries.remove(i).value);
                prop_assert_eq!(cache.remove(&k), want);
            }
        }
        prop_assert_eq!(cache.len(), model.entries.len());
        prop_assert_eq!(cache.used_bytes(), model.used());
        prop_assert!(cache.used_bytes() <= cache.capacity_bytes());
        prop_assert_eq!(cache.stats(), model.stats);
        for e in &model.entries {
            prop_assert!(cache.contains(&e.key), "key {} missing after op {}", e.key, n);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn lru_matches_reference(capacity in 0u64..100, ops in prop::collection::vec(op(), 0..200)) {
        let mut cache: Lru<u8, u32> = Lru::new(capacity);
        check(&mut cache, false, capacity, &ops)?;
        prop_assert_eq!(cache.iter().count(), cache.len());
    }

    #[test]
    fn gds_matches_reference(capacity in 0u64..100, ops in prop::collection::vec(op(), 0..200)) {
        let mut cache: GreedyDualSize<u8, u32> = GreedyDualSize::new(capacity);
        check(&mut cache, true, capacity, &ops)?;
        prop_assert_eq!(cache.iter().count(), cache.len());
    }
}

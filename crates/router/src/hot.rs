//! The hottest targets, for the admin `/targets?top=N`, in bounded memory.
//!
//! Counts are exact until the table is full; then targets seen once are dropped, and if
//! that frees nothing every count is halved and the zeros dropped, so the table keeps
//! what is hot now rather than what was hot once.

use std::collections::HashMap;

use policy::{Target, TargetKey};

#[derive(Debug)]
pub(crate) struct HotTargets {
    cap: usize,
    entries: HashMap<TargetKey, HotEntry>,
}

#[derive(Clone, Debug)]
pub(crate) struct HotEntry {
    pub target: Target,
    pub path: String,
    pub hits: u64,
}

impl HotTargets {
    pub(crate) fn new(cap: usize) -> Self {
        HotTargets { cap: cap.max(1), entries: HashMap::new() }
    }

    pub(crate) fn record(&mut self, target: &Target, path: &str) {
        if let Some(e) = self.entries.get_mut(&target.key) {
            e.hits += 1;
            return;
        }
        if self.entries.len() >= self.cap {
            self.entries.retain(|_, e| e.hits > 1);
        }
        if self.entries.len() >= self.cap {
            self.entries.retain(|_, e| {
                e.hits /= 2;
                e.hits > 0
            });
        }
        if self.entries.len() < self.cap {
            let entry = HotEntry { target: *target, path: path.to_string(), hits: 1 };
            self.entries.insert(target.key, entry);
        }
    }

    /// The `n` hottest, hottest first.
    pub(crate) fn top(&self, n: usize) -> Vec<HotEntry> {
        let mut all: Vec<_> = self.entries.values().cloned().collect();
        all.sort_by(|a, b| b.hits.cmp(&a.hits).then_with(|| a.path.cmp(&b.path)));
        all.truncate(n);
        all
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_hot_and_stays_bounded() {
        let mut h = HotTargets::new(4);
        for _ in 0..10 {
            h.record(&Target::from_key(1), "/hot");
        }
        for k in 2..100 {
            h.record(&Target::from_key(k), "/cold");
        }
        assert!(h.len() <= 4);
        assert_eq!(h.top(1)[0].path, "/hot");
    }
}

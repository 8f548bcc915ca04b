//! What this node's content cache holds, as its load report says it: a digest of the
//! targets routers named for the cached bodies (`X-Larder-Target`). Every router folds
//! the same digests into its view, so the routers agree on which nodes hold a target.
//!
//! Built lazily when a report is asked for and the cache changed since the last one
//! (reports come every 200 ms from each router; inserts come far more often), and
//! versioned so a router can tell a new digest from one it has.

use std::time::SystemTime;

use wire::{TargetDigest, TargetHint};

#[derive(Debug)]
pub struct Holdings {
    /// Bumped on every change to what the cache holds or to a body's target.
    changes: u64,
    /// The first version: the start time in milliseconds, so a restarted node's versions
    /// do not repeat its previous life's.
    base: u64,
    /// The digest as it was when built, with the change counts (own, other stores') then.
    built: Option<((u64, u64), TargetDigest)>,
}

impl Holdings {
    pub fn new(started: SystemTime) -> Holdings {
        let base = started
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64)
            .wrapping_mul(1 << 20);
        Holdings { changes: 0, base, built: None }
    }

    /// The cache's content, or a body's target, changed.
    pub fn changed(&mut self) {
        self.changes += 1;
    }

    /// The digest of the cached bodies' targets (`named` lists each body's target and
    /// subtree), rebuilt only when something changed since the last one (here, or in a
    /// store that counts its own changes: `elsewhere`); `None` while no body has a target
    /// (no router named one: the node is behind another front-end).
    pub fn digest<I>(&mut self, elsewhere: u64, named: impl Fn() -> I) -> Option<TargetDigest>
    where
        I: Iterator<Item = TargetHint>,
    {
        let now = (self.changes, elsewhere);
        let fresh = matches!(&self.built, Some((at, _)) if *at == now);
        if !fresh {
            let count = named().count() as u64;
            let digest = (count > 0).then(|| {
                let mut d = TargetDigest::with_capacity(2 * count, self.base + self.changes);
                for hint in named() {
                    d.insert(hint.key);
                    if hint.tree != hint.key {
                        d.insert(hint.tree);
                    }
                }
                d
            });
            self.built = digest.map(|d| (now, d));
        }
        self.built.as_ref().map(|(_, d)| d.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_targets_of_cached_bodies_and_versions_changes() {
        let mut h = Holdings::new(SystemTime::UNIX_EPOCH);
        assert_eq!(h.digest(0, std::iter::empty), None, "no router named a target");
        let hint = TargetHint { key: 11, tree: 22 };
        h.changed();
        let d = h.digest(0, || std::iter::once(hint)).unwrap();
        assert!(d.contains(11) && d.contains(22) && !d.contains(33));
        let unchanged = h.digest(0, std::iter::empty).unwrap();
        assert_eq!(unchanged, d, "nothing changed: the same digest, not rebuilt");
        h.changed();
        assert!(h.digest(0, || std::iter::once(hint)).unwrap().version > d.version);
        let elsewhere = h.digest(1, std::iter::empty);
        assert_eq!(elsewhere, None, "a change in another store rebuilds the digest");
    }
}

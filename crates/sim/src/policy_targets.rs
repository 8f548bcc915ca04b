//! What the policy sees of each workload target, and what a node's digest lists for it.
//!
//! By default a target is known by its index ([`Target::from_key`]): then nothing needs
//! to be stored, and a request's target and its digest keys are computed from the index
//! instead of read from a table of a hundred bytes a target, which at a thousand nodes
//! and tens of thousands of targets is a cache miss for every request and for every key a
//! digest lists. Targets given by the caller (the route keys larder's URL mapper gives the
//! workload's URLs) are kept in a table.

use policy::Target;

/// The targets the policy sees, by workload index.
pub(crate) enum PolicyTargets {
    /// `count` targets, target `i` being `Target::from_key(i)`.
    Indices(usize),
    /// Target `i` is `targets[i]`, with its digest keys beside (a tenth of its size, so
    /// that building every node's digest reads a compact table).
    Given { targets: Vec<Target>, digest_keys: Vec<DigestKeys> },
}

/// What a digest lists for one target: its key, and its subtree when that differs.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct DigestKeys {
    pub(crate) key: u64,
    pub(crate) tree: u64,
}

impl PolicyTargets {
    pub(crate) fn given(targets: Vec<Target>) -> Self {
        let digest_keys =
            targets.iter().map(|t| DigestKeys { key: t.key.0, tree: t.tree.0 }).collect();
        PolicyTargets::Given { targets, digest_keys }
    }

    pub(crate) fn len(&self) -> usize {
        match self {
            PolicyTargets::Indices(count) => *count,
            PolicyTargets::Given { targets, .. } => targets.len(),
        }
    }

    /// Target `i` (below [`PolicyTargets::len`]).
    #[inline]
    pub(crate) fn get(&self, i: u32) -> Target {
        match self {
            PolicyTargets::Indices(_) => Target::from_key(u64::from(i)),
            PolicyTargets::Given { targets, .. } => targets[i as usize],
        }
    }

    /// What a digest lists for target `i`.
    #[inline]
    pub(crate) fn digest_keys(&self, i: u32) -> DigestKeys {
        match self {
            PolicyTargets::Indices(_) => DigestKeys { key: u64::from(i), tree: u64::from(i) },
            PolicyTargets::Given { digest_keys, .. } => digest_keys[i as usize],
        }
    }

    /// Start reading target `i`'s entry, when there is a table, so that the miss overlaps
    /// other work.
    #[inline]
    pub(crate) fn touch(&self, i: u32) {
        if let PolicyTargets::Given { targets, .. } = self {
            if let Some(target) = targets.get(i as usize) {
                crate::prefetch::prefetch(target);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_are_the_targets_a_table_of_keys_would_hold() {
        let table: Vec<Target> = (0..50).map(Target::from_key).collect();
        let (by_index, given) = (PolicyTargets::Indices(50), PolicyTargets::given(table));
        assert_eq!((by_index.len(), given.len()), (50, 50));
        for i in 0..50 {
            assert_eq!(by_index.get(i), given.get(i));
            assert_eq!(by_index.digest_keys(i), given.digest_keys(i));
        }
    }
}

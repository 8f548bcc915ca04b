//! What each simulated node reports it holds: the digest larder's node puts in its load
//! report ([`wire::TargetDigest`]), built from the node's cache every report period, so
//! shared placement sees the same kind of summary (false positives included) as on real
//! processes.

use cache::ByteCache;
use wire::TargetDigest;

use crate::policy_targets::PolicyTargets;

/// What one node publishes: `None` when its cache did not change since its last digest
/// (which then stands), else its new digest (`None` within for an empty cache).
pub(crate) type Published = Option<Option<TargetDigest>>;

/// One digest per node whose cache changed (`None` for the others): the keys (and
/// subtrees) of the targets its cache holds, `None` within for an empty cache.
/// `targets.digest_keys(i)` is what the digest lists for the target the cache knows as `i`.
pub(crate) fn digests<'a>(
    caches: impl Iterator<Item = Option<&'a dyn ByteCache<u32, ()>>>,
    targets: &PolicyTargets,
    version: u64,
) -> Vec<Published> {
    caches
        .map(|cache| {
            let cache = cache?;
            if cache.is_empty() {
                return Some(None);
            }
            let mut d = TargetDigest::with_capacity(2 * cache.len() as u64, version);
            cache.for_each_key(&mut |&i| {
                let t = targets.digest_keys(i);
                d.insert(t.key);
                if t.tree != t.key {
                    d.insert(t.tree);
                }
            });
            Some(Some(d))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use cache::Lru;
    use policy::Target;

    #[test]
    fn a_digest_per_node_of_what_its_cache_holds() {
        let targets: Vec<Target> = (0..4).map(|k| Target::from_key(100 + k)).collect();
        let mut a: Lru<u32, ()> = Lru::new(10);
        a.insert(1, (), 1);
        a.insert(3, (), 1);
        let b: Lru<u32, ()> = Lru::new(10);
        let caches: [Option<&dyn ByteCache<u32, ()>>; 3] = [Some(&a), Some(&b), None];
        let d = digests(caches.into_iter(), &PolicyTargets::given(targets), 5);
        let first = d[0].as_ref().unwrap().as_ref().unwrap();
        assert!(first.contains(101) && first.contains(103) && !first.contains(100));
        assert_eq!((first.version, d[1].as_ref().unwrap().is_none()), (5, true));
        assert!(d[2].is_none(), "an unchanged cache publishes nothing");
    }
}

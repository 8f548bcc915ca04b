//! The reference hit ratio: one cache as large as the whole cluster's memory.
//!
//! A locality-aware policy can at best make the cluster's caches behave like one cache
//! as large as all of them together, equal or not (no target cached twice, every request
//! sent to the node holding it). Replaying the same stream through one such cache gives
//! the hit ratio the claim for `lard-r` is checked against.

use cache::{FxBuildHasher, Kind};
use trace::Workload;

/// Hit ratio of one `kind` cache of `capacity_bytes` (for a cluster, the sum of its
/// nodes' caches: [`crate::CacheSizes::total`]) over `workload`'s requests in order,
/// counting only requests from index `warmup_requests` on (misses insert at once).
pub fn ideal_hit_ratio(
    workload: &Workload,
    capacity_bytes: u64,
    kind: Kind,
    warmup_requests: u64,
) -> f64 {
    let mut cache = kind.build_with_hasher::<u32, (), _>(capacity_bytes, FxBuildHasher);
    let (mut hits, mut lookups) = (0u64, 0u64);
    for (i, r) in workload.requests.iter().enumerate() {
        let hit = cache.get(&r.target).is_some();
        if !hit {
            let size = workload.targets.get(r.target as usize).map_or(0, |t| t.size);
            cache.insert(r.target, (), size);
        }
        if i as u64 >= warmup_requests {
            lookups += 1;
            hits += u64::from(hit);
        }
    }
    if lookups == 0 {
        0.0
    } else {
        hits as f64 / lookups as f64
    }
}

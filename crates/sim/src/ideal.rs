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
    let dataset = workload.targets.iter().fold(0u64, |sum, t| sum.saturating_add(t.size));
    if dataset <= capacity_bytes {
        return all_fit_hit_ratio(workload, warmup_requests);
    }
    replayed_hit_ratio(workload, capacity_bytes, kind, warmup_requests)
}

/// The hit ratio of replaying `workload` through the cache itself.
fn replayed_hit_ratio(
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
    ratio(hits, lookups)
}

/// The same hit ratio when the cache holds every target at once (a large cluster's
/// memory often does): nothing is ever evicted, whatever the kind, so a request hits
/// exactly when its target was asked for before. Counted without replaying the cache.
fn all_fit_hit_ratio(workload: &Workload, warmup_requests: u64) -> f64 {
    let mut seen = vec![false; workload.targets.len()];
    let (mut hits, mut lookups) = (0u64, 0u64);
    for (i, r) in workload.requests.iter().enumerate() {
        let t = r.target as usize;
        if t >= seen.len() {
            // Not a target of the workload: the cache holds it at 0 bytes after a miss.
            seen.resize(t + 1, false);
        }
        let hit = std::mem::replace(&mut seen[t], true);
        if i as u64 >= warmup_requests {
            lookups += 1;
            hits += u64::from(hit);
        }
    }
    ratio(hits, lookups)
}

fn ratio(hits: u64, lookups: u64) -> f64 {
    if lookups == 0 {
        0.0
    } else {
        hits as f64 / lookups as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trace::{TargetInfo, WorkRequest};

    #[test]
    fn a_cache_that_holds_everything_gives_the_replayed_ratio_exactly() {
        let sizes = [1000u64, 20_000, 300_000, 5_000, 70_000, 0, 123_456];
        let w = Workload {
            targets: sizes
                .iter()
                .enumerate()
                .map(|(i, &size)| TargetInfo { path: format!("/t{i}"), size })
                .collect(),
            requests: (0..5_000u64)
                .map(|i| WorkRequest {
                    target: ((i * 5 + i / 11) % 7) as u32,
                    client: 0,
                    time_ms: 0,
                })
                .collect(),
        };
        let dataset: u64 = sizes.iter().sum();
        for kind in [Kind::Lru, Kind::Gds] {
            for (capacity, warmup) in [(dataset, 0), (dataset, 3), (dataset * 2, 2_500)] {
                let replay = replayed_hit_ratio(&w, capacity, kind, warmup);
                let ideal = ideal_hit_ratio(&w, capacity, kind, warmup);
                assert_eq!(ideal.to_bits(), replay.to_bits(), "{kind} {capacity} {warmup}");
            }
            // One byte short of the data set: the replay itself, evictions and all.
            let short = replayed_hit_ratio(&w, dataset - 1, kind, 0);
            assert_eq!(ideal_hit_ratio(&w, dataset - 1, kind, 0), short);
            assert!(short < ideal_hit_ratio(&w, dataset, kind, 0));
        }
    }
}

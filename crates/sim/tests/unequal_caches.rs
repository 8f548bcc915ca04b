//! Nodes with unequal caches (HACC's 64/64/32 MB nodes, scaled down): each node gets its
//! own capacity and the one-big-cache reference gets their sum.
//!
//! Under uniform popularity an LRU cache of C bytes over a data set of D bytes hits about
//! C/D of the time, and WRR hands every node the same uniform stream, so each node's hit
//! ratio follows its own cache: here 1 MiB and 0.5 MiB nodes over a 4 MiB data set.

use cache::Kind;
use policy::{PlacementMode, PolicyKind, PolicySpec};
use sim::{sweep, CacheSizes, RunResult, SimConfig, Simulator};
use trace::{generate, Popularity, SizeMix, SynthConfig, Workload};

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;
const DOC: u64 = 4 * KIB;
const DATASET: u64 = 4 * MIB;
/// Requests in flight for the placement runs: well below overload (T_high 65 a node).
const LIMIT: u64 = 16;

fn uniform_workload() -> Workload {
    generate(&SynthConfig {
        docs: (DATASET / DOC) as u32,
        requests: 60_000,
        sizes: SizeMix::Fixed(DOC),
        popularity: Popularity::Uniform,
        ..SynthConfig::default()
    })
    .unwrap()
}

fn lru(config: SimConfig) -> SimConfig {
    SimConfig { cache_kind: Kind::Lru, ..config }
}

fn run(w: &Workload, config: &SimConfig) -> RunResult {
    Simulator::new(w).run(config).unwrap()
}

#[test]
fn under_wrr_each_node_hits_as_its_own_cache_allows_and_ideal_uses_the_sum() {
    let w = uniform_workload();
    let sizes = vec![MIB, MIB, MIB / 2, MIB / 2];
    let r = run(&w, &lru(SimConfig::per_node(sizes.clone(), PolicySpec::new(PolicyKind::Wrr))));
    let hits: Vec<f64> = r.per_node.iter().map(|n| n.hit_ratio).collect();
    for (node, (&hit, &size)) in hits.iter().zip(&sizes).enumerate() {
        let expected = size as f64 / DATASET as f64;
        assert!((hit - expected).abs() < 0.05, "node {node}: hit {hit}, expected ~{expected}");
        assert_eq!(r.per_node[node].cache_mb, size as f64 / MIB as f64);
    }
    let (big, small) = (hits[0].min(hits[1]), hits[2].max(hits[3]));
    assert!(small < 0.7 * big, "half the cache must hit clearly less: {hits:?}");

    assert_eq!(r.cache_mb_total, 3.0);
    let total = 3 * MIB;
    let expected_ideal = sim::ideal_hit_ratio(&w, total, Kind::Lru, r.warmup_requests);
    assert_eq!(r.ideal_hit_ratio, expected_ideal);
    assert!((r.ideal_hit_ratio - 0.75).abs() < 0.05, "ideal {}", r.ideal_hit_ratio);
    // Neither four big nodes nor four small ones: the sum of what there is.
    let wrr = PolicySpec::new(PolicyKind::Wrr);
    let four_big = run(&w, &lru(SimConfig::new(4, MIB, wrr.clone())));
    let four_small = run(&w, &lru(SimConfig::new(4, MIB / 2, wrr)));
    assert!(four_small.ideal_hit_ratio < r.ideal_hit_ratio - 0.1);
    assert!(four_big.ideal_hit_ratio > r.ideal_hit_ratio + 0.1);
    assert!(four_small.hit_ratio < r.hit_ratio && r.hit_ratio < four_big.hit_ratio);
}

#[test]
fn a_list_of_equal_sizes_runs_exactly_as_one_size_for_every_node() {
    let w = uniform_workload();
    for kind in [PolicyKind::Wrr, PolicyKind::LardR] {
        let uniform = SimConfig::new(3, MIB, PolicySpec::new(kind));
        let listed = SimConfig::per_node(vec![MIB; 3], PolicySpec::new(kind));
        assert_eq!(run(&w, &uniform), run(&w, &listed), "{kind:?}");
    }
}

#[test]
fn a_list_fits_only_its_own_cluster_size() {
    let w = uniform_workload();
    let mut sim = Simulator::new(&w);
    let listed = SimConfig::per_node(vec![MIB, MIB / 2], PolicySpec::new(PolicyKind::Wrr));
    let wrong = SimConfig { nodes: 3, ..listed.clone() };
    let err = sim.run(&wrong).unwrap_err().to_string();
    assert!(err.contains("2 cache sizes given for a 3-node cluster"), "{err}");
    let policies = [PolicySpec::new(PolicyKind::Wrr)];
    assert!(sweep(&mut sim, &listed, &[2], &policies, |_, _| {}).is_ok());
    assert!(sweep(&mut sim, &listed, &[2, 4], &policies, |_, _| {}).is_err());
    let empty = SimConfig::with_caches(1, CacheSizes::PerNode(Vec::new()), policies[0].clone());
    assert!(sim.run(&empty).is_err());
}

/// Shared placement weighs each node by the cache capacity it reports: a node with twice
/// the cache is first choice for twice the targets, and the cluster hits more than when
/// every cache counts alike (Zipf popularity: each node then caches the same top part of
/// its targets). Below overload, where placement is what the hashing says: at LARD's
/// saturating client count the big nodes' double share of requests makes LARD move
/// targets, and that costs more hits than the weighting gains.
#[test]
fn placement_weighs_reported_capacity_and_hits_more_for_it() {
    let w = generate(&SynthConfig {
        docs: (3 * DATASET / DOC) as u32,
        requests: 80_000,
        sizes: SizeMix::Fixed(DOC),
        popularity: Popularity::Zipf { alpha: 0.8 },
        ..SynthConfig::default()
    })
    .unwrap();
    let sizes = vec![MIB, MIB, MIB / 2, MIB / 2];
    for kind in [PolicyKind::Lard, PolicyKind::LardR] {
        let config = |placement| SimConfig {
            max_in_flight: Some(LIMIT),
            ..lru(SimConfig::per_node(
                sizes.clone(),
                PolicySpec { placement, ..PolicySpec::new(kind) },
            ))
        };
        let weighed = run(&w, &config(PlacementMode::Shared));
        let equal = run(&w, &config(PlacementMode::SharedEqual));
        let targets: u64 = weighed.per_node.iter().map(|n| n.targets).sum();
        for (node, n) in weighed.per_node.iter().enumerate() {
            let share = n.targets as f64 / targets as f64;
            let want = sizes[node] as f64 / (3 * MIB) as f64;
            // Within 30%: a new target goes to its least loaded candidate per unit of
            // weight, so capacity weighs the load a node takes, and the targets it ends
            // up with follow that load as well as the ring (a half-size node holds 21%
            // of them here, hashing alone gave it 17%).
            assert!((share / want - 1.0).abs() < 0.3, "{kind} node {node}: {share} not ~{want}");
        }
        assert!(
            weighed.hit_ratio > equal.hit_ratio,
            "{kind}: {} vs {}",
            weighed.hit_ratio,
            equal.hit_ratio
        );
    }
}

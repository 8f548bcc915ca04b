//! Nodes with unequal caches (HACC's 64/64/32 MB nodes, scaled down): each node gets its
//! own capacity and the one-big-cache reference gets their sum.
//!
//! Under uniform popularity an LRU cache of C bytes over a data set of D bytes hits about
//! C/D of the time, and WRR hands every node the same uniform stream, so each node's hit
//! ratio follows its own cache: here 1 MiB and 0.5 MiB nodes over a 4 MiB data set.

use cache::Kind;
use policy::{PolicyKind, PolicySpec};
use sim::{sweep, CacheSizes, RunResult, SimConfig, Simulator};
use trace::{generate, Popularity, SizeMix, SynthConfig, Workload};

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;
const DOC: u64 = 4 * KIB;
const DATASET: u64 = 4 * MIB;

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

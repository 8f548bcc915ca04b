//! The issue's claims at 8 nodes, on a data set about 4× one node's cache: locality-aware
//! policies beat weighted round robin by far, `lard-r` is not below `lard`, bounded-load
//! hashing beats WRR, and `lard-r` comes close to one ideal cache of all nodes' memory.
//!
//! Zipf uses alpha 0.8, within the 0.64–0.83 Breslau et al. (1999) measured on web proxy
//! traces. With alpha 1.0 and the same data set, WRR's per-node GreedyDual-Size caches
//! already hold most of the hot set and the gap shrinks to about 2× (see the report).

use policy::{PolicyKind, PolicySpec};
use sim::{RunResult, SimConfig, Simulator};
use trace::{docs_for_dataset, generate, Popularity, SizeMix, SynthConfig};

const MIB: u64 = 1024 * 1024;
const CACHE: u64 = 32 * MIB;

fn run_all(popularity: Popularity) -> Vec<RunResult> {
    let docs = docs_for_dataset(4 * CACHE, SizeMix::Hacc, 1).unwrap();
    let workload =
        generate(&SynthConfig { docs, requests: 100_000, popularity, ..SynthConfig::default() })
            .unwrap();
    let mut sim = Simulator::new(&workload);
    [PolicyKind::Wrr, PolicyKind::Bounded, PolicyKind::Lard, PolicyKind::LardR]
        .into_iter()
        .map(|kind| sim.run(&SimConfig::new(8, CACHE, PolicySpec::new(kind))).unwrap())
        .collect()
}

fn check(results: &[RunResult]) {
    let by = |name: &str| results.iter().find(|r| r.policy == name).unwrap();
    let (wrr, bounded, lard, lard_r) = (by("wrr"), by("bounded"), by("lard"), by("lard-r"));
    let summary: Vec<String> = results
        .iter()
        .map(|r| format!("{} {:.1} req/s hit {:.3}", r.policy, r.throughput_rps, r.hit_ratio))
        .collect();
    let summary = summary.join("; ");
    assert!(lard.throughput_rps >= 2.5 * wrr.throughput_rps, "{summary}");
    assert!(lard_r.throughput_rps >= 2.5 * wrr.throughput_rps, "{summary}");
    assert!(lard_r.throughput_rps >= lard.throughput_rps, "{summary}");
    assert!(bounded.throughput_rps > wrr.throughput_rps, "{summary}");
    assert!(lard_r.hit_ratio >= lard_r.ideal_hit_ratio - 0.10, "{summary}");
}

#[test]
fn zipf_workload() {
    check(&run_all(Popularity::Zipf { alpha: 0.8 }));
}

#[test]
fn uniform_workload() {
    check(&run_all(Popularity::Uniform));
}

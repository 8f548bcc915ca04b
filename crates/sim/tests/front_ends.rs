//! Several front-ends, each with its own policy instance: one front-end runs exactly as
//! before (pinned against the single front-end's results), hashing does not care how many
//! front-ends there are, and per-target tables kept per front-end lose locality.

use policy::{PolicyKind, PolicySpec};
use sim::{RunResult, SimConfig, Simulator};
use trace::{generate, Popularity, SynthConfig, Workload};

const MIB: u64 = 1024 * 1024;
const KINDS: [PolicyKind; 5] =
    [PolicyKind::Hash, PolicyKind::Bounded, PolicyKind::Lard, PolicyKind::LardR, PolicyKind::Hacc];

fn workload() -> Workload {
    generate(&SynthConfig {
        docs: 3000,
        requests: 20_000,
        popularity: Popularity::Zipf { alpha: 0.8 },
        ..SynthConfig::default()
    })
    .unwrap()
}

fn config(kind: PolicyKind, routers: usize, delay_ms: u64) -> SimConfig {
    SimConfig {
        routers,
        report_delay_ns: delay_ms * 1_000_000,
        ..SimConfig::new(4, 4 * MIB, PolicySpec::new(kind))
    }
}

/// Every number a run's outcome depends on, floats by their bits.
fn fingerprint(r: &RunResult) -> String {
    let per_node: Vec<u64> = r.per_node.iter().map(|n| n.requests).collect();
    format!(
        "{} {:x} {:x} {} {} {} {} {:?}",
        r.policy,
        r.throughput_rps.to_bits(),
        r.hit_ratio.to_bits(),
        r.measured_requests,
        r.reassignments,
        r.replications,
        r.table_entries,
        per_node
    )
}

#[test]
fn one_front_end_is_the_single_front_end_bit_for_bit() {
    // Taken from the simulator before it had several front-ends, on this very workload.
    let before = [
        "hash 404a5797e47934b5 3fe08b4395810625 15999 0 0 0 [3696, 4872, 4132, 3299]",
        "bounded 404aed766f3db534 3fde95810624dd2f 15999 0 0 0 [3387, 4800, 4498, 3314]",
        "lard 404b6e1d5098e346 3fe07df3b645a1cb 15999 15 0 2792 [3810, 4577, 3571, 4041]",
        "lard-r 404b6e1d5098e346 3fe07df3b645a1cb 15999 0 15 2792 [3810, 4577, 3571, 4041]",
        "hacc 404b491d73913e7c 3fe0353f7ced9168 15999 218 0 2792 [3885, 4334, 3754, 4026]",
    ];
    let w = workload();
    let mut sim = Simulator::new(&w);
    for (kind, want) in KINDS.into_iter().zip(before) {
        for delay_ms in [0, 200] {
            let r = sim.run(&config(kind, 1, delay_ms)).unwrap();
            assert_eq!(fingerprint(&r), want, "{kind} with a {delay_ms} ms report delay");
            assert_eq!(r.routers, 1);
        }
    }
}

#[test]
fn hashing_places_alike_on_every_front_end() {
    let w = workload();
    let mut sim = Simulator::new(&w);
    let one = sim.run(&config(PolicyKind::Hash, 1, 0)).unwrap();
    for (routers, delay_ms) in [(4, 0), (16, 200)] {
        let many = sim.run(&config(PolicyKind::Hash, routers, delay_ms)).unwrap();
        assert_eq!(many.routers, routers);
        assert_eq!(many.spread, "client", "synthetic users are spread by client");
        assert_eq!(fingerprint(&many), fingerprint(&one), "{routers} routers, {delay_ms} ms");
    }
}

#[test]
fn tables_kept_per_front_end_lose_locality() {
    let w = workload();
    let mut sim = Simulator::new(&w);
    for kind in [PolicyKind::Lard, PolicyKind::LardR] {
        let one = sim.run(&config(kind, 1, 200)).unwrap();
        let many = sim.run(&config(kind, 16, 200)).unwrap();
        let again = sim.run(&config(kind, 16, 200)).unwrap();
        assert_eq!(many, again, "{kind}: deterministic");
        assert!(
            many.hit_ratio < one.hit_ratio - 0.05,
            "{kind}: 16 tables {} vs one {}",
            many.hit_ratio,
            one.hit_ratio
        );
        assert!(many.table_entries > one.table_entries, "{kind}: each router has its own table");
        assert_eq!(many.measured_requests, one.measured_requests, "{kind}: every request done");
    }
}

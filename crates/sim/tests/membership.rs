//! Membership events in the simulator: a node added mid-run gets work afterwards (and
//! none before), a removed node gets none after it left, a restarted one comes back cold.

use policy::{PolicyKind, PolicySpec};
use sim::{SimConfig, Simulator};
use trace::{generate, MembershipEvent, Popularity, SizeMix, SynthConfig, Workload};

const MIB: u64 = 1024 * 1024;

/// 20 s of requests at 1,000 a second over 2,000 documents.
fn workload() -> Workload {
    generate(&SynthConfig {
        docs: 2000,
        requests: 20_000,
        popularity: Popularity::Zipf { alpha: 0.8 },
        ..SynthConfig::default()
    })
    .unwrap()
}

/// Requests dispatched before and after 10 s of workload time that node `node` served.
fn served(kind: PolicyKind, events: &str, node: u32, w: &Workload) -> (u64, u64) {
    let events: Vec<MembershipEvent> = events.split(',').map(|e| e.parse().unwrap()).collect();
    let config =
        SimConfig { events, warmup: 0.0, ..SimConfig::new(4, 2 * MIB, PolicySpec::new(kind)) };
    let split = w.requests.iter().position(|r| r.time_ms >= 10_000).unwrap() as u64;
    let (mut before, mut after) = (0, 0);
    Simulator::new(w)
        .run_observed(&config, |c| {
            if c.node == node {
                if c.index < split {
                    before += 1;
                } else {
                    after += 1;
                }
            }
        })
        .unwrap();
    (before, after)
}

#[test]
fn an_added_node_gets_work_and_a_removed_one_none() {
    let w = workload();
    for kind in [PolicyKind::Hash, PolicyKind::Lard, PolicyKind::LardR] {
        let (before, after) = served(kind, "add:n4@10s", 3, &w);
        assert_eq!(before, 0, "{kind}: n4 served requests before it joined");
        // Its fair share of the 10,000 requests after is a quarter; at least half of it.
        assert!(after >= 1_250, "{kind}: n4 served only {after} requests after it joined");
        let (before, after) = served(kind, "remove:n2@10s", 1, &w);
        assert!(before >= 1_250, "{kind}: n2 served {before} before it left");
        assert_eq!(after, 0, "{kind}: n2 served requests after it left");
    }
    let bad = SimConfig {
        events: vec!["remove:n9@1s".parse().unwrap()],
        ..SimConfig::new(4, 2 * MIB, PolicySpec::new(PolicyKind::Hash))
    };
    assert!(Simulator::new(&w).run(&bad).is_err(), "an event on a node that does not exist");
}

#[test]
fn a_restarted_node_comes_back_cold() {
    let w = generate(&SynthConfig {
        docs: 2000,
        requests: 20_000,
        sizes: SizeMix::Fixed(8 << 10),
        popularity: Popularity::Uniform,
        ..SynthConfig::default()
    })
    .unwrap();
    let spec = PolicySpec::new(PolicyKind::Hash);
    let steady = SimConfig { warmup: 0.0, ..SimConfig::new(4, 2 * MIB, spec) };
    let restarted = SimConfig { events: vec!["restart:n1@10s".parse().unwrap()], ..steady.clone() };
    let a = Simulator::new(&w).run(&steady).unwrap();
    let b = Simulator::new(&w).run(&restarted).unwrap();
    // The same placement (hashing keeps the restarted node's targets on it); its cache
    // comes back empty, so it misses more.
    let targets = |r: &sim::RunResult| r.per_node.iter().map(|n| n.targets).collect::<Vec<_>>();
    assert_eq!(targets(&a), targets(&b));
    assert!(b.per_node[0].hit_ratio < a.per_node[0].hit_ratio, "{b:?}");
}

//! A router alone: shared placement decides exactly as per-router placement (LARD's own
//! rule on this router's counts) when the nodes report one router and every node is a
//! candidate of every target, and only then.

use policy::home::CANDIDATES;
use policy::{
    build, Holdings, LoadView, MapperConfig, NodeId, NodeState, PlacementMode, Policy, PolicyKind,
    PolicySpec, Target, TargetMapper, SECOND,
};
use std::collections::VecDeque;
use std::sync::Arc;

const KINDS: [PolicyKind; 3] = [PolicyKind::Lard, PolicyKind::LardR, PolicyKind::Hacc];
const REQUESTS: u64 = 20_000;

fn policy(kind: PolicyKind, placement: PlacementMode, nodes: usize) -> Box<dyn Policy> {
    let spec = PolicySpec { placement, ..PolicySpec::new(kind) };
    let mut p = build(&spec).unwrap();
    p.membership(&NodeState::uniform(nodes), 0);
    p
}

/// A small deterministic generator (64-bit LCG, high bits out).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 =
            self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        self.next() as f64 / (1u64 << 31) as f64
    }
}

/// A generated workload: skewed popularity over 3,000 files in nested directories (so
/// HACC splits and merges subtrees), a flash crowd on one file for a while (so LARD/R
/// replicates), and load that rises past T_high and falls below T_low in waves.
struct Workload {
    targets: Vec<Target>,
    rng: Lcg,
}

impl Workload {
    fn new(seed: u64) -> Workload {
        let mapper = TargetMapper::new(MapperConfig::default());
        let targets = (0..3_000u64)
            .map(|i| {
                let path = format!("/d{}/e{}/f{i}.html", i % 7, i % 31);
                mapper.map(path.as_bytes()).unwrap().target
            })
            .collect();
        Workload { targets, rng: Lcg(seed) }
    }

    /// Request `i`'s target.
    fn target(&mut self, i: u64) -> Target {
        if (6_000..9_000).contains(&i) && self.rng.next().is_multiple_of(3) {
            return self.targets[17];
        }
        let u = self.rng.unit();
        self.targets[(u * u * u * self.targets.len() as f64) as usize]
    }

    /// How many requests may be in flight around request `i`: waves from 8 to 700.
    fn concurrency(&self, i: u64) -> usize {
        let phase = (i % 4_000) as f64 / 4_000.0;
        (8.0 + 692.0 * (phase * std::f64::consts::PI).sin().powi(2)) as usize
    }
}

/// What a node says it holds: every target whose key leaves `rest` modulo 3.
#[derive(Debug)]
struct Thirds(u64);

impl Holdings for Thirds {
    fn holds(&self, key: policy::TargetKey) -> bool {
        key.0 % 3 == self.0
    }
}

/// A view of `nodes` equal nodes that all report being polled by `routers` routers, and
/// what they hold (a third of all targets each, so the shared rule's holders would count).
fn view(nodes: usize, routers: u32) -> LoadView {
    let mut v = LoadView::new(nodes);
    for i in 0..nodes {
        let node = NodeId(i as u32);
        v.set_capacity(node, 64 << 20);
        v.report_routers(node, routers);
        v.set_holdings(node, Some(Arc::new(Thirds(i as u64 % 3))));
    }
    v
}

/// Run the workload through `a` and `b` (each request started on `a`'s node, the oldest
/// finished when the wave falls, reports of requests in flight and bytes of misses
/// folded in every 50 requests, as a poll would); the number of requests on which they
/// picked different nodes. `b` reads the same view without the nodes' holdings, as the
/// papers' single front-end knew nothing of them.
fn differences(a: &mut dyn Policy, b: &mut dyn Policy, v: LoadView, seed: u64) -> u64 {
    let mut views = [v.clone(), v];
    for i in 0..views[1].len() {
        views[1].set_holdings(NodeId(i as u32), None);
    }
    let mut w = Workload::new(seed);
    let mut flight: VecDeque<NodeId> = VecDeque::new();
    let mut differ = 0;
    for i in 0..REQUESTS {
        let now = i * SECOND / 1_000;
        if i % 50 == 0 {
            let in_flight: Vec<u64> = (0..views[0].len())
                .map(|n| u64::from(views[0].in_flight(NodeId(n as u32))))
                .collect();
            let miss_bytes: Vec<u64> = in_flight.iter().map(|_| (w.rng.next() % 8) << 20).collect();
            for v in &mut views {
                for (n, (&count, &bytes)) in in_flight.iter().zip(&miss_bytes).enumerate() {
                    v.report_in_flight(NodeId(n as u32), count / 2);
                    v.report_miss_bytes(NodeId(n as u32), bytes);
                }
            }
        }
        let target = w.target(i);
        let (x, y) = (a.pick(&target, &views[0], now), b.pick(&target, &views[1], now));
        differ += u64::from(x != y);
        let node = x.unwrap();
        flight.push_back(node);
        for v in &mut views {
            v.started(node);
        }
        while flight.len() > w.concurrency(i) {
            let done = flight.pop_front().unwrap();
            for v in &mut views {
                v.finished(done);
            }
        }
    }
    differ
}

#[test]
fn one_router_at_eight_nodes_decides_as_per_router_pick_for_pick() {
    for kind in KINDS {
        for seed in [1, 2, 3] {
            let mut shared = policy(kind, PlacementMode::Shared, 8);
            let mut alone = policy(kind, PlacementMode::PerRouter, 8);
            let d = differences(&mut *shared, &mut *alone, view(8, 1), seed);
            assert_eq!(d, 0, "{kind} seed {seed}: {d} of {REQUESTS} picks differ");
            assert_eq!(shared.stats(), alone.stats(), "{kind} seed {seed}");
        }
        let mut equal = policy(kind, PlacementMode::SharedEqual, 8);
        let mut alone = policy(kind, PlacementMode::PerRouter, 8);
        assert_eq!(differences(&mut *equal, &mut *alone, view(8, 1), 1), 0, "{kind} equal");
    }
}

#[test]
fn lard_r_replicates_as_per_router_when_alone() {
    let mut shared = policy(PolicyKind::LardR, PlacementMode::Shared, 8);
    let mut alone = policy(PolicyKind::LardR, PlacementMode::PerRouter, 8);
    assert_eq!(differences(&mut *shared, &mut *alone, view(8, 1), 4), 0);
    assert!(alone.stats().replications > 0, "the workload replicates");
}

/// With two routers, no router report, nodes of unequal caches or more nodes than a target
/// has candidates, the shared rule stays: the picks are not per-router LARD's.
#[test]
fn shared_rule_stays_with_two_routers_unknown_routers_unequal_nodes_or_more_nodes() {
    let mut unequal = view(8, 1);
    unequal.set_capacity(NodeId(3), 128 << 20);
    let cases = [
        ("two routers", 8, view(8, 2)),
        ("no report", 8, view(8, 0)),
        ("unequal caches", 8, unequal),
        ("more nodes than candidates", CANDIDATES + 1, view(CANDIDATES + 1, 1)),
    ];
    for (case, nodes, v) in cases {
        for kind in KINDS {
            let mut shared = policy(kind, PlacementMode::Shared, nodes);
            let mut alone = policy(kind, PlacementMode::PerRouter, nodes);
            let d = differences(&mut *shared, &mut *alone, v.clone(), 1);
            assert!(d > 100, "{kind}, {case}: only {d} of {REQUESTS} picks differ");
        }
    }
}

/// A second router appearing moves nothing this router placed alone: below T_high every
/// target stays on its node.
#[test]
fn a_second_router_reshuffles_nothing_placed_alone() {
    let targets: Vec<Target> = (0..400).map(Target::from_key).collect();
    for kind in [PolicyKind::Lard, PolicyKind::LardR] {
        let mut p = policy(kind, PlacementMode::Shared, 8);
        let mut v = view(8, 1);
        let placed: Vec<_> = targets.iter().map(|t| p.pick(t, &v, 0).unwrap()).collect();
        let mut round_robin = (0..8).cycle();
        assert!(
            placed.iter().all(|n| n.0 == round_robin.next().unwrap()),
            "{kind}: alone on an idle cluster new targets rotate over the nodes, as LARD's do"
        );
        for i in 0..8 {
            v.report_routers(NodeId(i), 2);
        }
        let again: Vec<_> = targets.iter().map(|t| p.pick(t, &v, SECOND).unwrap()).collect();
        assert_eq!(placed, again, "{kind}");
    }
}

//! Flash crowds under `lard-r`: two routers, each seeing every other request of one
//! stream and its own (different) loads, give a target that jumps to 30% of the requests
//! the same replicas within a second, drop them once the crowd is gone, and leave steady
//! Zipf traffic alone.

use policy::home::{Capacity, Homes};
use policy::{build, LoadView, NodeId, NodeState, Policy, PolicyKind, PolicySpec, Target, SECOND};

const NODES: usize = 4;
const TARGETS: u64 = 1000;
/// Requests per second over both routers.
const RATE: u64 = 4000;

fn target(k: u64) -> Target {
    Target::from_key(k.wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

fn router() -> Box<dyn Policy> {
    let mut p = build(&PolicySpec::new(PolicyKind::LardR)).unwrap();
    p.membership(&NodeState::uniform(NODES), 0);
    p
}

/// A view with requests in flight per node (all below T_low, so no load-driven replica).
fn view(in_flight: [u32; NODES]) -> LoadView {
    let mut v = LoadView::new(NODES);
    for (node, n) in in_flight.into_iter().enumerate() {
        for _ in 0..n {
            v.started(NodeId(node as u32));
        }
    }
    v
}

/// xorshift64*: a fixed stream of numbers, so the test is the same on every run.
struct Rng(u64);
impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Zipf(1) over `TARGETS` ranks, as a cumulative table.
struct Zipf(Vec<f64>);
impl Zipf {
    fn new() -> Zipf {
        let mut sum = 0.0;
        let cdf = (1..=TARGETS)
            .map(|k| {
                sum += 1.0 / k as f64;
                sum
            })
            .collect::<Vec<_>>();
        Zipf(cdf.iter().map(|c| c / sum).collect())
    }
    fn draw(&self, rng: &mut Rng) -> u64 {
        let u = rng.unit();
        self.0.partition_point(|&c| c < u).min(TARGETS as usize - 1) as u64
    }
}

/// Two routers, their own loads, and the stream between them.
struct Cluster {
    routers: [Box<dyn Policy>; 2],
    views: [LoadView; 2],
    rng: Rng,
    zipf: Zipf,
    request: u64,
}

/// The target of the crowd (outside the Zipf ranks).
const CROWD: u64 = TARGETS + 7;

impl Cluster {
    fn new() -> Cluster {
        Cluster {
            routers: [router(), router()],
            views: [view([3, 20, 0, 11]), view([18, 0, 9, 2])],
            rng: Rng(0x1234_5678_9abc_def1),
            zipf: Zipf::new(),
            request: 0,
        }
    }

    fn now(&self) -> u64 {
        self.request * SECOND / RATE
    }

    /// Run for `secs` with `crowd` of the requests on [`CROWD`], the rest Zipf.
    fn run(&mut self, secs: f64, crowd: f64) {
        let end = self.request + (secs * RATE as f64) as u64;
        while self.request < end {
            let now = self.now();
            let k = if self.rng.unit() < crowd { CROWD } else { self.zipf.draw(&mut self.rng) };
            let r = (self.request % 2) as usize;
            let node = self.routers[r].pick(&target(k), &self.views[r], now).unwrap();
            assert!(node.index() < NODES);
            self.request += 1;
        }
    }

    fn replicas(&self, k: u64) -> [Vec<NodeId>; 2] {
        let mut sets = [0, 1].map(|r| self.routers[r].placement(&target(k)));
        sets.iter_mut().for_each(|s| s.sort());
        sets
    }
}

#[test]
fn both_routers_give_a_crowd_the_same_replicas_within_a_second_and_drop_them_after() {
    let mut c = Cluster::new();
    c.run(3.0, 0.0);
    let [a, b] = c.replicas(CROWD);
    assert!(a.is_empty() && b.is_empty(), "the crowd's target was never asked for");
    c.run(1.0, 0.3);
    let [a, b] = c.replicas(CROWD);
    assert_eq!(a, b, "one replica set on both routers");
    // 30% of the requests over 4 nodes: each replica takes at most half a node's share.
    assert_eq!(a.len(), 3, "{a:?}");
    // They are the target's first three candidates by name, whatever each router's loads.
    let mut homes = Homes::new(Capacity::Weighed);
    homes.rebuild(&NodeState::uniform(NODES));
    let mut first =
        homes.candidates(target(CROWD).key, &LoadView::new(NODES)).as_slice()[..3].to_vec();
    first.sort();
    assert_eq!(a, first);
    // While it lasts, the crowd's requests go to its replicas on both routers.
    let now = c.now();
    for r in 0..2 {
        for _ in 0..20 {
            let node = c.routers[r].pick(&target(CROWD), &c.views[r], now).unwrap();
            assert!(a.contains(&node));
        }
    }
    c.run(2.0, 0.3);
    assert_eq!(c.replicas(CROWD), [a.clone(), a.clone()], "stable while the crowd lasts");
    // The crowd leaves (a trickle stays): below half the threshold for 2 s, replicas go.
    c.run(1.0, 0.01);
    assert_eq!(c.replicas(CROWD)[0].len(), 3, "not at the first dip");
    c.run(3.0, 0.01);
    let [a, b] = c.replicas(CROWD);
    assert_eq!((a.len(), b.len()), (1, 1), "{a:?} {b:?}");
    assert_eq!(a, b);
}

#[test]
fn steady_zipf_traffic_makes_no_target_hot() {
    let mut c = Cluster::new();
    c.run(10.0, 0.0);
    for r in 0..2 {
        let replicated = (0..TARGETS).filter(|&k| c.routers[r].placement(&target(k)).len() > 1);
        assert_eq!(replicated.count(), 0, "router {r}");
        assert_eq!(c.routers[r].stats().replications, 0, "router {r}");
    }
    // The hottest rank takes 1/H(1000) ≈ 13% of the requests: hot at a lower threshold.
    let spec = PolicySpec {
        heat: policy::heat::HeatConfig { share: 0.1, ..Default::default() },
        ..PolicySpec::new(PolicyKind::LardR)
    };
    let mut p = build(&spec).unwrap();
    p.membership(&NodeState::uniform(NODES), 0);
    let v = LoadView::new(NODES);
    let mut rng = Rng(7);
    for i in 0..2 * RATE {
        let k = c.zipf.draw(&mut rng);
        p.pick(&target(k), &v, i * SECOND / RATE);
    }
    assert_eq!(p.placement(&target(0)).len(), 2, "{:?}", p.placement(&target(0)));
    assert_eq!(p.placement(&target(1)).len(), 1);
}

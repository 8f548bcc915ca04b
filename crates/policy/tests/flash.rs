//! Flash crowds under `lard-r`: two routers (and sixteen), each seeing its turn of the
//! requests of one stream and its own (different) loads, give a target that jumps to 30%
//! of the requests the same replicas within a second, drop them once the crowd is gone,
//! and leave steady Zipf traffic alone.

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

/// Routers, their own loads, and the stream between them (request i to router i mod n).
struct Cluster {
    routers: Vec<Box<dyn Policy>>,
    views: Vec<LoadView>,
    rng: Rng,
    zipf: Zipf,
    request: u64,
}

/// The target of the crowd (outside the Zipf ranks).
const CROWD: u64 = TARGETS + 7;

impl Cluster {
    fn new() -> Cluster {
        Cluster::with_views(vec![view([3, 20, 0, 11]), view([18, 0, 9, 2])])
    }

    /// `n` routers, each with loads of its own (all below T_low).
    fn many(n: usize) -> Cluster {
        let mut rng = Rng(0x0bad_cafe_f00d_d00d);
        let views =
            (0..n).map(|_| view([0; NODES].map(|_: u32| (rng.unit() * 24.0) as u32))).collect();
        Cluster::with_views(views)
    }

    fn with_views(views: Vec<LoadView>) -> Cluster {
        Cluster {
            routers: views.iter().map(|_| router()).collect(),
            views,
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
            let r = (self.request % self.routers.len() as u64) as usize;
            let node = self.routers[r].pick(&target(k), &self.views[r], now).unwrap();
            assert!(node.index() < NODES);
            self.request += 1;
        }
    }

    fn replicas(&self, k: u64) -> [Vec<NodeId>; 2] {
        let sets = self.all_replicas(k);
        [sets[0].clone(), sets[1].clone()]
    }

    /// Every router's set for `k`, sorted.
    fn all_replicas(&self, k: u64) -> Vec<Vec<NodeId>> {
        let mut sets: Vec<_> = self.routers.iter().map(|p| p.placement(&target(k))).collect();
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
    homes.sync(&LoadView::new(NODES));
    let mut first = homes.candidates(target(CROWD).key).as_slice()[..3].to_vec();
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

/// Sixteen routers, each seeing a sixteenth of the stream (250 requests a second, the
/// crowd 75 of them: above the heat's 50 a second at every router). Each router estimates
/// the crowd's share from its own few requests, so one whose estimate falls under a step
/// takes one replica fewer, or (as a hot set only grows) one more ([`policy::heat`]):
/// every set is a prefix of the same order, within one of the 3 the share calls for.
#[test]
fn sixteen_routers_give_a_crowd_prefixes_of_one_order_and_drop_them_alike() {
    let mut c = Cluster::many(16);
    c.run(3.0, 0.0);
    assert!(c.all_replicas(CROWD).iter().all(Vec::is_empty));
    let mut homes = Homes::new(Capacity::Weighed);
    homes.rebuild(&NodeState::uniform(NODES));
    homes.sync(&LoadView::new(NODES));
    let order = homes.candidates(target(CROWD).key).as_slice().to_vec();
    let prefix = |len: usize| {
        let mut p = order[..len].to_vec();
        p.sort();
        p
    };
    for secs in [1.0, 2.0] {
        c.run(secs, 0.3);
        let sets = c.all_replicas(CROWD);
        let three = sets.iter().filter(|s| **s == prefix(3)).count();
        let near = |s: &Vec<NodeId>| (2..=4).any(|len| *s == prefix(len));
        assert!(sets.iter().all(near), "{sets:?} not prefixes of {order:?}");
        assert!(three >= 8, "most routers take the 3 replicas 30% calls for: {sets:?}");
    }
    // A trickle of 2.5 requests a second a router: each router hears the crowd is gone at
    // its first request for it after 2 s below the line.
    c.run(6.0, 0.01);
    let sets = c.all_replicas(CROWD);
    assert!(sets.iter().all(|s| s.len() == 1 && s[0] == sets[0][0]), "{sets:?}");
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

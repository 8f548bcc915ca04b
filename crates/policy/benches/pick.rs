//! The cost of one pick against the size of the cluster:
//! `cargo bench -p policy --bench pick [-- PICKS] [--same-mix] [--pattern] [--spread]
//! [--at=NODES] [POLICY…]` (default 2 M picks a measurement, every policy).
//!
//! A timing claim lives here, not in a test. For every policy, one pick is timed at 8,
//! 100, 1,000 and 10,000 nodes over the same stream (Zipf(0.8) over 200,000 targets, so
//! both new and known targets), with loads that move: each pick starts a request on its
//! node and the request picked 30·nodes picks earlier finishes (about 30 in flight a
//! node, between LARD's T_low and T_high). The sizes take turns, round after round (A B A
//! B), and each prints its median over the rounds, so a neighbour's load on the machine
//! falls on every size alike; the last column is the cost at 10,000 nodes over the cost
//! at 8. Each policy prints two rows: `gross` as timed, and `net` less the bench's own
//! bookkeeping (starting and finishing the same requests without picking, timed alone),
//! so that a cost that grows with the cluster is the policy's, not the bench's.
//!
//! `--same-mix` holds the load pattern alike across sizes: each Zipf rank stands for
//! nodes/8 targets of equal popularity, so no target asks more of one node's share than at
//! 8 nodes (over a fixed 200,000 targets the hottest asks 0.15 of a node's share at 8
//! nodes and 190 nodes' shares at 10,000, so `bounded` spills far more often there).
//! `--pattern` prints, for `bounded`, that load pattern at each size: the share of nodes
//! at the bound, of picks whose home is at it, and the ring points a pick reads.
//! `--spread` prints the ring's balance at each size (what `hash` gives each node of many
//! targets), for the default ring and for one without the whole ring's bound on points.
//! `--at=NODES` times one round at that size alone (no table), for a profiler to read
//! one policy at one size: `valgrind --tool=callgrind --cache-sim=yes … lard --at=10000`.
//!
//! The library reads no clock and prints nothing (`clippy.toml`); a benchmark of it must.
#![allow(clippy::disallowed_types, clippy::disallowed_methods, clippy::disallowed_macros)]

use std::collections::VecDeque;
use std::hint::black_box;
use std::time::Instant;

use policy::bounded::load_bound;
use policy::ring::{HashRing, RingConfig};
use policy::{build, LoadView, NodeId, NodeState, Policy, PolicyKind, PolicySpec, Target};

const SIZES: [usize; 4] = [8, 100, 1_000, 10_000];
const ROUNDS: usize = 5;
const TARGETS: u64 = 200_000;

/// xorshift64*: a fixed stream of numbers, the same on every run.
struct Rng(u64);
impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Target keys drawn Zipf(0.8) over [`TARGETS`] ranks, each rank standing for `copies`
/// targets of equal popularity (1: the rank is the target).
fn stream(picks: usize, copies: u64) -> Vec<Target> {
    let mut sum = 0.0;
    let cdf: Vec<f64> = (1..=TARGETS)
        .map(|k| {
            sum += (k as f64).powf(-0.8);
            sum
        })
        .collect();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    (0..picks)
        .map(|_| {
            let u = rng.unit() * sum;
            let rank = cdf.partition_point(|&c| c < u) as u64;
            let copy = if copies > 1 { (rng.unit() * copies as f64) as u64 } else { 0 };
            let key = (rank + copy * TARGETS).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            Target::from_key(key)
        })
        .collect()
}

/// What `bounded` meets at `nodes` over `targets` (the second pass, as timed): the share
/// of nodes at the bound (sampled every 64 picks), of picks whose home is at it, and the
/// ring points a pick reads (up to the first point of the node it picks).
fn load_pattern(nodes: usize, targets: &[Target]) -> (f64, f64, f64) {
    let spec = PolicySpec::new(PolicyKind::Bounded);
    let mut policy = build(&spec).expect("a policy");
    let states = NodeState::uniform(nodes);
    policy.membership(&states, 0);
    let mut ring = HashRing::new(RingConfig::default());
    ring.rebuild(&states);
    let mut view = LoadView::new(nodes);
    let mut in_flight = VecDeque::with_capacity(30 * nodes + 1);
    let (mut full, mut samples, mut spilled, mut points) = (0.0, 0u64, 0u64, 0u64);
    for pass in 0..2 {
        for (i, target) in targets.iter().enumerate() {
            let node = policy.pick(target, &view, 0).expect("a node");
            if pass == 1 {
                let bound = load_bound(spec.balance_factor, view.total_in_flight(), nodes);
                let at_bound = |n: NodeId| u64::from(view.in_flight(n)) >= bound;
                spilled += u64::from(ring.primary(target.key).is_some_and(at_bound));
                points += ring.walk(target.key).position(|n| n == node).map_or(0, |p| p + 1) as u64;
                if i % 64 == 0 {
                    let count = (0..nodes).filter(|&n| at_bound(NodeId(n as u32))).count();
                    full += count as f64 / nodes as f64;
                    samples += 1;
                }
            }
            view.started(node);
            in_flight.push_back(node);
            if in_flight.len() > 30 * nodes {
                let done = in_flight.pop_front().expect("in flight");
                view.finished(done);
            }
        }
    }
    let picks = targets.len() as f64;
    (full / samples as f64, spilled as f64 / picks, points as f64 / picks)
}

/// The ring's spread at `nodes` nodes of weight 1: points a node, and the largest,
/// 99th-percentile and smallest node's share of the circle over the mean share.
fn spread(config: RingConfig, nodes: usize) -> (usize, f64, f64, f64) {
    let mut ring = HashRing::new(config);
    ring.rebuild(&NodeState::uniform(nodes));
    let mut shares = ring.shares();
    shares.sort_by(f64::total_cmp);
    let mean = 1.0 / nodes as f64;
    let at = |q: f64| shares[((shares.len() - 1) as f64 * q) as usize] / mean;
    let points = ring.walk(policy::TargetKey(0)).count() / nodes;
    (points, at(1.0), at(0.99), at(0.0))
}

/// Nanoseconds per pick of `kind` at `nodes` over `targets` (after the first pass, which
/// fills the policy's table and is not timed), and of the bench's own bookkeeping around
/// those picks alone (starting and finishing the same requests on the same nodes from the
/// same loads, without picking), which grows with the cluster too.
fn ns_per_pick(kind: PolicyKind, nodes: usize, targets: &[Target]) -> (f64, f64) {
    let mut policy: Box<dyn Policy> = build(&PolicySpec::new(kind)).expect("a policy");
    policy.membership(&NodeState::uniform(nodes), 0);
    let mut view = LoadView::new(nodes);
    let mut in_flight = VecDeque::with_capacity(30 * nodes + 1);
    let mut picked = Vec::with_capacity(targets.len());
    let run = |policy: &mut Box<dyn Policy>,
               view: &mut LoadView,
               in_flight: &mut VecDeque<NodeId>,
               picked: &mut Vec<NodeId>,
               from: u64| {
        picked.clear();
        for (i, target) in targets.iter().enumerate() {
            // 1 µs a pick: heat windows see a steady stream.
            let now = (from + i as u64) * 1_000;
            let node = policy.pick(target, view, now).expect("a node");
            picked.push(node);
            view.started(node);
            in_flight.push_back(node);
            if in_flight.len() > 30 * nodes {
                let done = in_flight.pop_front().expect("in flight");
                view.finished(done);
            }
            black_box(node);
        }
    };
    run(&mut policy, &mut view, &mut in_flight, &mut picked, 0);
    let (view_before, in_flight_before) = (view.clone(), in_flight.clone());
    let start = Instant::now();
    run(&mut policy, &mut view, &mut in_flight, &mut picked, targets.len() as u64);
    let picks = start.elapsed().as_nanos() as f64 / targets.len() as f64;
    let (mut view, mut in_flight) = (view_before, in_flight_before);
    let start = Instant::now();
    for (target, &node) in targets.iter().zip(&picked) {
        black_box(target);
        black_box(node);
        view.started(node);
        in_flight.push_back(node);
        if in_flight.len() > 30 * nodes {
            let done = in_flight.pop_front().expect("in flight");
            view.finished(done);
        }
    }
    let bookkeeping = start.elapsed().as_nanos() as f64 / targets.len() as f64;
    (picks, bookkeeping)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let picks = args.iter().find_map(|a| a.parse::<usize>().ok()).unwrap_or(2_000_000);
    let named: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .filter(|a| a.parse::<usize>().is_err() && !a.starts_with('-'))
        .collect();
    let same_mix = args.iter().any(|a| a == "--same-mix");
    // Each size's stream: the same one at every size, or the 8-node mix at each.
    let streams: Vec<Vec<Target>> = SIZES
        .iter()
        .map(|&nodes| stream(picks, if same_mix { (nodes as u64 / 8).max(1) } else { 1 }))
        .collect();
    if args.iter().any(|a| a == "--spread") {
        println!("a node's share of the circle over the mean share (nodes of weight 1):");
        println!(
            "{:<24} {:>8} {:>8} {:>8} {:>8} {:>8}",
            "ring", "nodes", "points", "largest", "99th %", "smallest"
        );
        let unbounded = RingConfig { max_points: u32::MAX, ..RingConfig::default() };
        for (label, config) in
            [("default", RingConfig::default()), ("no whole-ring bound", unbounded)]
        {
            for nodes in SIZES {
                let (points, largest, p99, smallest) = spread(config, nodes);
                println!(
                    "{label:<24} {nodes:>8} {points:>8} {largest:>8.2} {p99:>8.2} {smallest:>8.2}"
                );
            }
        }
        return;
    }
    if args.iter().any(|a| a == "--pattern") {
        println!("bounded's load pattern over the timed pass ({picks} picks):");
        println!(
            "{:>8} {:>16} {:>16} {:>16}",
            "nodes", "nodes at bound", "home at bound", "points a pick"
        );
        for (&nodes, targets) in SIZES.iter().zip(&streams) {
            let (full, spilled, points) = load_pattern(nodes, targets);
            println!(
                "{nodes:>8} {:>15.2}% {:>15.2}% {points:>16.2}",
                100.0 * full,
                100.0 * spilled
            );
        }
        return;
    }
    let kinds = [
        PolicyKind::Rr,
        PolicyKind::Wrr,
        PolicyKind::Least,
        PolicyKind::Hash,
        PolicyKind::Bounded,
        PolicyKind::Lard,
        PolicyKind::LardR,
        PolicyKind::Hacc,
    ];
    let kinds = kinds.into_iter().filter(|k| named.is_empty() || named.contains(&k.name()));
    if let Some(nodes) = args.iter().find_map(|a| a.strip_prefix("--at=")?.parse::<usize>().ok()) {
        for kind in kinds {
            let (picks, bookkeeping) = ns_per_pick(kind, nodes, &streams[0]);
            let net = picks - bookkeeping;
            println!("{} at {nodes} nodes: {picks:.1} ns a pick gross, {net:.1} net", kind.name());
        }
        return;
    }
    let mix = if same_mix { "the 8-node mix at every size" } else { "one stream at every size" };
    println!("ns per pick, median of {ROUNDS} rounds of {picks} picks (sizes in turn; {mix});");
    println!(
        "gross: as timed, with the bench's bookkeeping; net: less that bookkeeping timed alone"
    );
    println!(
        "{:<8} {:<6} {:>8} {:>8} {:>8} {:>8} {:>12}",
        "policy", "", 8, 100, 1000, 10000, "10000/8"
    );
    for kind in kinds {
        let mut gross = vec![Vec::new(); SIZES.len()];
        let mut net = vec![Vec::new(); SIZES.len()];
        for _ in 0..ROUNDS {
            for (i, &nodes) in SIZES.iter().enumerate() {
                let (picks, bookkeeping) = ns_per_pick(kind, nodes, &streams[i]);
                gross[i].push(picks);
                net[i].push(picks - bookkeeping);
            }
        }
        for (label, samples) in [("gross", &mut gross), ("net", &mut net)] {
            let medians: Vec<f64> = samples
                .iter_mut()
                .map(|s| {
                    s.sort_by(f64::total_cmp);
                    s[s.len() / 2]
                })
                .collect();
            println!(
                "{:<8} {:<6} {:>8.1} {:>8.1} {:>8.1} {:>8.1} {:>12.2}",
                kind.name(),
                label,
                medians[0],
                medians[1],
                medians[2],
                medians[3],
                medians[3] / medians[0]
            );
        }
    }
}

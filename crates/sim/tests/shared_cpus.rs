//! A cluster on one machine: nodes, front-end and clients sharing a few cores, a node's
//! event loop and helper thread each doing one job at a time, and targets named by the
//! caller. Expected throughputs are worked out by hand from the costs.

use policy::{PolicyKind, PolicySpec, Target};
use sim::{Model, SimConfig, SimError, Simulator};
use trace::{TargetInfo, WorkRequest, Workload};

fn workload(targets: usize, size: u64, pattern: impl Fn(u64) -> u32, requests: u64) -> Workload {
    Workload {
        targets: (0..targets).map(|i| TargetInfo { path: format!("/t{i}"), size }).collect(),
        requests: (0..requests)
            .map(|i| WorkRequest { target: pattern(i), client: 0, time_ms: 0 })
            .collect(),
    }
}

/// CPU only: a hit costs `hit_us` on the node's loop, a miss `miss_us` more on its helper.
fn cpu_model(hit_us: u64, miss_us: u64, front_us: u64) -> Model {
    Model {
        setup_ns: hit_us * 500,
        teardown_ns: hit_us * 500,
        transmit_ns: 0,
        disk_read_ns: 0,
        disk_block_ns: 0,
        disk_chunk_ns: 0,
        front_ns: front_us * 1000,
        miss_cpu_ns: miss_us * 1000,
        ..Model::default()
    }
}

fn config(nodes: usize, cache: u64, model: Model, shared: Option<u32>) -> SimConfig {
    SimConfig {
        model,
        shared_cpus: shared,
        max_in_flight: Some(32),
        ..SimConfig::new(nodes, cache, PolicySpec::new(PolicyKind::Rr))
    }
}

fn close(got: f64, want: f64) -> bool {
    (got / want - 1.0).abs() < 0.01
}

#[test]
fn nodes_sharing_one_core_serve_what_one_core_can() {
    // All hits (one small target, warm): 100 µs each. Four nodes with a CPU each serve
    // 40,000/s; on one shared core, 10,000/s; on two, 20,000/s.
    let w = workload(1, 100, |_| 0, 40_000);
    let mut sim = Simulator::new(&w);
    let own = sim.run(&config(4, 1 << 20, cpu_model(100, 0, 0), None)).unwrap();
    let one = sim.run(&config(4, 1 << 20, cpu_model(100, 0, 0), Some(1))).unwrap();
    let two = sim.run(&config(4, 1 << 20, cpu_model(100, 0, 0), Some(2))).unwrap();
    assert!(close(own.throughput_rps, 40_000.0), "{}", own.throughput_rps);
    assert!(close(one.throughput_rps, 10_000.0), "{}", one.throughput_rps);
    assert!(close(two.throughput_rps, 20_000.0), "{}", two.throughput_rps);
    // Each node's CPU time over the window: a quarter or half of a core.
    assert!(one.per_node.iter().all(|n| close(n.cpu_util, 0.25)), "{:?}", one.per_node);
    assert!(two.per_node.iter().all(|n| close(n.cpu_util, 0.5)), "{:?}", two.per_node);
}

#[test]
fn a_node_uses_one_core_for_its_loop_however_many_are_free() {
    // One node, all hits of 100 µs, eight shared cores: its event loop caps it at 10,000/s.
    let w = workload(1, 100, |_| 0, 20_000);
    let r = Simulator::new(&w).run(&config(1, 1 << 20, cpu_model(100, 0, 0), Some(8))).unwrap();
    assert!(close(r.throughput_rps, 10_000.0), "{}", r.throughput_rps);
}

#[test]
fn the_helper_thread_caps_the_misses_a_node_computes() {
    // No cache: every request misses, 10 µs on the loop and 1 ms on the one helper. With
    // eight cores the helper is the limit: 1,000/s. On one core, loop and helper share
    // it: 1 / 1.01 ms.
    let w = workload(1, 100, |_| 0, 5_000);
    let mut sim = Simulator::new(&w);
    let many = sim.run(&config(1, 0, cpu_model(10, 1000, 0), Some(8))).unwrap();
    let one = sim.run(&config(1, 0, cpu_model(10, 1000, 0), Some(1))).unwrap();
    assert!(close(many.throughput_rps, 1000.0), "{}", many.throughput_rps);
    assert!(close(one.throughput_rps, 1e6 / 1010.0), "{}", one.throughput_rps);
    assert_eq!(many.hit_ratio, 0.0);
    // Without shared cores the miss's computation takes the node's own CPU too.
    let own = sim.run(&config(1, 0, cpu_model(10, 1000, 0), None)).unwrap();
    assert!(close(own.throughput_rps, 1e6 / 1010.0), "{}", own.throughput_rps);
}

#[test]
fn front_end_work_takes_shared_cores_or_a_cpu_of_its_own() {
    // Hits of 100 µs on 4 nodes plus 100 µs per request at the front-end: on 2 shared
    // cores, 200 µs per request over 2 cores = 10,000/s. With a CPU each, the front-end's
    // one CPU is the bottleneck at 10,000/s as well; at 50 µs it is not (40,000/s → 20,000/s).
    let w = workload(1, 100, |_| 0, 40_000);
    let mut sim = Simulator::new(&w);
    let shared = sim.run(&config(4, 1 << 20, cpu_model(100, 0, 100), Some(2))).unwrap();
    assert!(close(shared.throughput_rps, 10_000.0), "{}", shared.throughput_rps);
    let own = sim.run(&config(4, 1 << 20, cpu_model(100, 0, 100), None)).unwrap();
    assert!(close(own.throughput_rps, 10_000.0), "{}", own.throughput_rps);
    let light = sim.run(&config(4, 1 << 20, cpu_model(100, 0, 50), None)).unwrap();
    assert!(close(light.throughput_rps, 20_000.0), "{}", light.throughput_rps);
}

#[test]
fn the_policy_sees_the_targets_it_is_given() {
    // Eight targets, two nodes, `hash`: naming every target alike puts them all on one
    // node; naming them by index spreads them.
    let w = workload(8, 100, |i| (i % 8) as u32, 4_000);
    let hash = SimConfig {
        model: cpu_model(100, 0, 0),
        ..SimConfig::new(2, 1 << 20, PolicySpec::new(PolicyKind::Hash))
    };
    let spread = Simulator::new(&w).run(&hash).unwrap();
    assert!(spread.per_node.iter().all(|n| n.requests > 0), "{:?}", spread.per_node);
    let alike = vec![Target::from_key(7); 8];
    let one = Simulator::with_targets(&w, alike).unwrap().run(&hash).unwrap();
    assert_eq!(one.per_node.iter().filter(|n| n.requests > 0).count(), 1, "{:?}", one.per_node);
    assert!(matches!(
        Simulator::with_targets(&w, vec![Target::from_key(0); 3]),
        Err(SimError::Config(_))
    ));
}

#[test]
fn zero_shared_cpus_is_refused() {
    let w = workload(1, 100, |_| 0, 10);
    let r = Simulator::new(&w).run(&config(1, 0, cpu_model(10, 0, 0), Some(0)));
    assert!(matches!(r, Err(SimError::Config(_))));
}

//! The simulator's bookkeeping on small deterministic workloads.

use policy::{PolicyKind, PolicySpec};
use sim::{sweep, SimConfig, SimError, Simulator};
use trace::{TargetInfo, WorkRequest, Workload};

fn workload(sizes: &[u64], pattern: impl Fn(u64) -> u32, requests: u64) -> Workload {
    Workload {
        targets: sizes
            .iter()
            .enumerate()
            .map(|(i, &size)| TargetInfo { path: format!("/t{i}"), size })
            .collect(),
        requests: (0..requests)
            .map(|i| WorkRequest { target: pattern(i), client: 0, time_ms: 0 })
            .collect(),
    }
}

fn rr(nodes: usize, cache_bytes: u64) -> SimConfig {
    SimConfig::new(nodes, cache_bytes, PolicySpec::new(PolicyKind::Rr))
}

#[test]
fn every_request_completes_once_and_in_flight_stays_within_s() {
    let w = workload(&[1000, 20_000, 300_000, 5_000, 70_000], |i| (i * 7 % 5) as u32, 5_000);
    let config = rr(4, 200_000);
    let limit = config.in_flight_limit();
    assert_eq!(limit, 3 * 65 + 25 - 1);
    let mut seen = vec![0u32; w.requests.len()];
    let mut last_time = 0;
    let result = Simulator::new(&w)
        .run_observed(&config, |c| {
            seen[c.index as usize] += 1;
            assert!(c.in_flight <= limit, "{} in flight, limit {limit}", c.in_flight);
            assert!(c.time >= last_time, "completions come in time order");
            last_time = c.time;
        })
        .unwrap();
    assert!(seen.iter().all(|&n| n == 1), "every request completes exactly once");
    assert_eq!(result.max_in_flight, limit);
    assert_eq!(result.requests, 5_000);
    assert!(result.saturated);
    let per_node: u64 = result.per_node.iter().map(|n| n.requests).sum();
    assert_eq!(per_node, result.measured_requests);
    assert!(result.per_node.iter().all(|n| n.cpu_util <= 1.0 + 1e-9 && n.disk_util <= 1.0 + 1e-9));
}

#[test]
fn a_trace_that_fits_in_cache_hits_after_warm_up() {
    let w = workload(&[10_000; 50], |i| (i % 50) as u32, 20_000);
    let result = Simulator::new(&w).run(&rr(2, 1 << 20)).unwrap();
    assert!(result.hit_ratio > 0.999, "hit ratio {}", result.hit_ratio);
    assert!(result.ideal_hit_ratio > 0.999);
    assert!(result.mean_disk_util < 0.01);
}

#[test]
fn one_node_all_hits_matches_hand_computed_throughput() {
    // One 512-byte target: after the first misses, every request is a hit costing
    // 145 µs set-up + 40 µs transmit + 145 µs tear-down = 330 µs of CPU.
    let w = workload(&[512], |_| 0, 10_000);
    let result = Simulator::new(&w).run(&rr(1, 1 << 20)).unwrap();
    let expected = 1e9 / 330_000.0;
    assert!((result.throughput_rps / expected - 1.0).abs() < 1e-3, "{}", result.throughput_rps);
    assert!((result.mean_cpu_util - 1.0).abs() < 1e-3);
    assert_eq!(result.hit_ratio, 1.0);
}

#[test]
fn one_node_all_misses_is_disk_bound() {
    // No cache: every request reads 4 KB from disk, 28 ms + 410 µs, while the CPU needs
    // only 145 + 8·40 + 145 µs: the disk sets the pace.
    let w = workload(&[4096], |_| 0, 3_000);
    let result = Simulator::new(&w).run(&rr(1, 0)).unwrap();
    let expected = 1e9 / 28_410_000.0;
    assert!((result.throughput_rps / expected - 1.0).abs() < 1e-3, "{}", result.throughput_rps);
    assert!((result.mean_disk_util - 1.0).abs() < 1e-3);
    let cpu = (145_000.0 + 8.0 * 40_000.0 + 145_000.0) / 28_410_000.0;
    assert!((result.mean_cpu_util - cpu).abs() < 1e-3, "{}", result.mean_cpu_util);
    assert_eq!(result.hit_ratio, 0.0);
}

#[test]
fn runs_are_deterministic() {
    let w = workload(&[3000, 9000, 90_000, 400], |i| (i * i % 4) as u32, 3_000);
    let mut sim = Simulator::new(&w);
    let config = rr(3, 50_000);
    assert_eq!(sim.run(&config).unwrap(), sim.run(&config).unwrap());
}

#[test]
fn sweep_runs_every_size_and_policy_and_prints_json_lines() {
    let w = workload(&[8000, 16_000, 64_000], |i| (i % 3) as u32, 4_000);
    let mut sim = Simulator::new(&w);
    let policies = [PolicySpec::new(PolicyKind::Rr), PolicySpec::new(PolicyKind::Rr)];
    let mut heard = 0;
    let results =
        sweep(&mut sim, &rr(1, 10_000), &[1, 2, 3], &policies, |_, _| heard += 1).unwrap();
    assert_eq!(heard, 6);
    let sizes: Vec<usize> = results.iter().map(|r| r.nodes).collect();
    assert_eq!(sizes, vec![1, 1, 2, 2, 3, 3]);
    for r in &results {
        let line = serde_json::to_string(r).unwrap();
        assert!(!line.contains('\n'));
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        for key in ["policy", "nodes", "requests", "throughput_rps", "hit_ratio", "ideal_hit_ratio"]
        {
            assert!(v.get(key).is_some(), "missing {key}");
        }
        assert_eq!(v["per_node"].as_array().unwrap().len(), r.nodes);
    }
    let svg = sim::throughput_svg(&results, "t");
    assert!(svg.starts_with("<svg") && svg.contains("<polyline") && svg.contains("\nrr\n"));
    // One dot per run, the cluster sizes (whole numbers) on the x axis.
    assert_eq!(svg.matches("<circle").count(), results.len());
    assert!(
        ["\n1\n", "\n2\n", "\n3\n"].iter().all(|n| svg.contains(n)) && !svg.contains("\n1.5\n")
    );
    let table = sim::table(&results, Some(1.0));
    assert_eq!(table.lines().filter(|l| l.starts_with("rr ")).count(), 6);
    // A sweep of front-ends alone on one cluster size: the x axis is the front-ends.
    let by_routers: Vec<_> = [1, 4]
        .iter()
        .map(|&routers| {
            let config = sim::SimConfig { routers, ..rr(2, 10_000) };
            sim.run(&config).unwrap()
        })
        .collect();
    let svg = sim::throughput_svg(&by_routers, "t");
    assert!(svg.contains("front-ends") && svg.contains("\n4\n"), "{svg}");
    assert_eq!(svg.matches("<circle").count(), 2);
}

#[test]
fn bad_input_is_an_error() {
    let empty = Workload::default();
    assert!(matches!(Simulator::new(&empty).run(&rr(1, 0)), Err(SimError::EmptyWorkload)));
    let bad = workload(&[1], |i| i as u32, 2);
    assert!(matches!(Simulator::new(&bad).run(&rr(1, 0)), Err(SimError::BadTarget { .. })));
    let w = workload(&[1], |_| 0, 2);
    let mut sim = Simulator::new(&w);
    assert!(sim.run(&rr(0, 0)).is_err());
    assert!(sim.run(&SimConfig { warmup: 1.0, ..rr(1, 0) }).is_err());
    assert!(sim.run(&SimConfig { max_in_flight: Some(0), ..rr(1, 0) }).is_err());
    let zero = sim::Model {
        setup_ns: 0,
        teardown_ns: 0,
        transmit_ns: 0,
        disk_read_ns: 0,
        disk_block_ns: 0,
        disk_chunk_ns: 0,
        ..sim::Model::default()
    };
    assert!(sim.run(&SimConfig { model: zero, ..rr(1, 0) }).is_err());
}

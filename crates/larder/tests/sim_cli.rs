//! `larder sim` end to end: a generated workload swept over cluster sizes, as JSON and SVG.

use std::process::{Command, Output};

fn larder(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_larder")).args(args).output().expect("larder runs")
}

#[test]
fn sweep_prints_one_json_object_per_run_and_draws_the_chart() {
    let svg = std::env::temp_dir().join(format!("larder-sim-cli-{}.svg", std::process::id()));
    let svg_arg = svg.to_str().unwrap();
    let out = larder(&[
        "sim",
        "--gen",
        "uniform",
        "--requests",
        "20000",
        "--cache-mb",
        "1",
        "--nodes",
        "1..3",
        "--policy",
        "wrr,lard-r",
        "--json",
        "--svg",
        svg_arg,
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let runs: Vec<serde_json::Value> =
        stdout.lines().map(|l| serde_json::from_str(l).expect("one JSON object a line")).collect();
    assert_eq!(runs.len(), 6, "3 cluster sizes × 2 policies: {stdout}");
    for run in &runs {
        for key in ["policy", "nodes", "requests", "throughput_rps", "hit_ratio"] {
            assert!(run.get(key).is_some(), "{key} missing in {run}");
        }
        assert!(run["throughput_rps"].as_f64().unwrap() > 0.0);
    }
    let nodes: Vec<u64> = runs.iter().map(|r| r["nodes"].as_u64().unwrap()).collect();
    assert!(nodes.contains(&1) && nodes.contains(&3), "{nodes:?}");
    let chart = std::fs::read_to_string(&svg).expect("svg written");
    let _ = std::fs::remove_file(&svg);
    assert!(chart.starts_with("<svg") || chart.starts_with("<?xml"), "{}", &chart[..40]);
    assert!(chart.contains("lard-r") && chart.contains("wrr"), "legend names the policies");
}

#[test]
fn bad_input_is_a_clear_error_not_a_panic() {
    for args in [
        &["sim", "--gen", "zipf", "--policy", "nosuch"][..],
        &["sim", "--gen", "zipf", "--nodes", "0"],
        &["sim", "--trace", "/nonexistent/larder/trace.log"],
    ] {
        let out = larder(args);
        assert!(!out.status.success(), "{args:?} should fail");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("error"), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

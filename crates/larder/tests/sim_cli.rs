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

#[test]
fn a_cache_list_gives_each_node_its_own_cache_and_sets_the_cluster_size() {
    let out = larder(&[
        "sim",
        "--gen",
        "uniform",
        "--sizes",
        "fixed:4KiB",
        "--dataset-mb",
        "4",
        "--requests",
        "40000",
        "--cache-mb",
        "1,1,0.5,0.5",
        "--cache",
        "lru",
        "--policy",
        "wrr",
        "--json",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let runs: Vec<serde_json::Value> =
        stdout.lines().map(|l| serde_json::from_str(l).expect("one JSON object a line")).collect();
    let [run] = &runs[..] else { panic!("one run expected: {stdout}") };
    assert_eq!(run["nodes"], 4, "the list's length is the cluster size");
    assert_eq!(run["cache"], "lru");
    assert_eq!(run["cache_mb_total"], 3.0);
    let nodes = run["per_node"].as_array().unwrap();
    let caches: Vec<f64> = nodes.iter().map(|n| n["cache_mb"].as_f64().unwrap()).collect();
    assert_eq!(caches, [1.0, 1.0, 0.5, 0.5]);
    let hits: Vec<f64> = nodes.iter().map(|n| n["hit_ratio"].as_f64().unwrap()).collect();
    assert!(hits[2].max(hits[3]) < hits[0].min(hits[1]), "half the cache hits less: {hits:?}");

    // --nodes may repeat the list's length; the table names each node's cache.
    let out = larder(&[
        "sim",
        "--gen",
        "uniform",
        "--requests",
        "5000",
        "--nodes",
        "3",
        "--cache-mb",
        "2,2,1",
        "--policy",
        "lard",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.contains("cache 2,2,1 MiB node by node, 5 MiB in all (gds)"), "{table}");
    assert!(table.contains("cache MiB"), "{table}");
}

#[test]
fn bad_cache_lists_are_clear_errors() {
    let cases: [(&[&str], &str); 7] = [
        (&["--cache-mb", "16,16,8,8", "--nodes", "3"], "lists 4 cache sizes but --nodes is 3"),
        (&["--cache-mb", "16,16,8,8", "--nodes", "1..4"], "fixes the cluster at 4 nodes"),
        (&["--cache-mb", "16,16", "--nodes", "2,2"], "fixes the cluster at 2 nodes"),
        (&["--cache-mb", "0"], "more than 0"),
        (&["--cache-mb", "16,0,8"], "more than 0"),
        (&["--cache-mb", "16,x"], "cache size \"x\""),
        (&["--cache-mb", "16,,8"], "cache size \"\""),
    ];
    assert_refused(&cases);
}

#[test]
fn help_explains_the_cache_list_and_lru() {
    let out = larder(&["sim", "--help"]);
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    assert!(help.contains("--cache-mb") && help.contains("16,16,8,8"), "{help}");
    assert!(help.contains("lru"), "{help}");
}

/// `larder sim --json` with `args` after a small generated workload's flags: one run.
fn one_run(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["sim", "--gen", "uniform", "--requests", "20000", "--json"];
    all.extend_from_slice(args);
    let out = larder(&all);
    assert!(out.status.success(), "{all:?}: {}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    serde_json::from_str(stdout.lines().next().expect("one run")).expect("JSON")
}

#[test]
fn one_machine_shares_its_cores_and_keys_targets_as_the_router_does() {
    // Four nodes, all CPU: with a core each they serve about twice what 2 shared cores do.
    let cpu_only = [
        "--cache-mb",
        "4,4,2,2",
        "--cache",
        "lru",
        "--policy",
        "wrr",
        "--max-in-flight",
        "32",
        "--setup-us",
        "20",
        "--teardown-us",
        "20",
        "--transmit-us",
        "0",
        "--miss-cpu-us",
        "500",
        "--front-us",
        "30",
        "--disk-read-ms",
        "0",
        "--disk-block-us",
        "0",
        "--disk-chunk-ms",
        "0",
    ];
    let own = one_run(&cpu_only);
    let mut shared_args = cpu_only.to_vec();
    shared_args.extend_from_slice(&["--shared-cpus", "2"]);
    let shared = one_run(&shared_args);
    let (own_rps, shared_rps) =
        (own["throughput_rps"].as_f64().unwrap(), shared["throughput_rps"].as_f64().unwrap());
    assert!(shared_rps < own_rps * 0.7, "shared {shared_rps} vs own {own_rps}");
    // Same stream, same caches: the hit ratio does not depend on the cores.
    let hit = |r: &serde_json::Value| r["hit_ratio"].as_f64().unwrap();
    assert!((hit(&own) - hit(&shared)).abs() < 0.05, "{own} vs {shared}");

    // Route keys: every target under one URL is one target to `hash`, so one node.
    let urls = std::env::temp_dir().join(format!("larder-sim-urls-{}.txt", std::process::id()));
    let docs = 64;
    let text: String = (0..docs).map(|d| format!("/app/db0/v0/d{d}?OpenDocument\n")).collect();
    std::fs::write(&urls, text).unwrap();
    let docs_arg = docs.to_string();
    let keyed = |extra: &[&str]| {
        let mut a = vec!["--docs", &docs_arg, "--nodes", "4", "--policy", "hash", "--route-keys"];
        a.extend_from_slice(extra);
        one_run(&a)
    };
    let busy_nodes = |r: &serde_json::Value| {
        let nodes = r["per_node"].as_array().unwrap();
        nodes.iter().filter(|n| n["requests"].as_u64().unwrap() > 0).count()
    };
    let one_view = keyed(&["--target-urls", urls.to_str().unwrap(), "--tree-depth", "3"]);
    let by_path = keyed(&[]);
    let _ = std::fs::remove_file(&urls);
    assert_eq!(busy_nodes(&one_view), 1, "{one_view}");
    assert_eq!(busy_nodes(&by_path), 4, "{by_path}");
}

#[test]
fn bad_machine_settings_are_clear_errors() {
    let urls = std::env::temp_dir().join(format!("larder-sim-few-{}.txt", std::process::id()));
    std::fs::write(&urls, "/a\n/b\n").unwrap();
    let few = urls.to_str().unwrap();
    let cases: [(&[&str], &str); 4] = [
        (&["--shared-cpus", "0"], "shared_cpus must be at least 1"),
        (&["--tree-depth", "3"], "--route-keys"),
        (&["--route-keys", "--docs", "5", "--target-urls", few], "2 URLs for 5 targets"),
        (&["--miss-cpu-us=-1"], "expected a finite number >= 0"),
    ];
    assert_refused(&cases);
    let _ = std::fs::remove_file(&urls);
}

/// Each `(flags, message)`: a small uniform simulation with these flags fails with an
/// error naming `message`, and never panics.
fn assert_refused(cases: &[(&[&str], &str)]) {
    for (extra, message) in cases {
        let mut args = vec!["sim", "--gen", "uniform", "--requests", "1000"];
        args.extend_from_slice(extra);
        let out = larder(&args);
        assert!(!out.status.success(), "{args:?} should fail");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("error") && err.contains(message), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn routers_sweep_names_the_count_in_json_and_table() {
    let common = ["sim", "--gen", "zipf", "--requests", "20000", "--cache-mb", "1", "--nodes", "4"];
    let mut args = common.to_vec();
    args.extend(["--routers", "1,4", "--policy", "hash,lard", "--json"]);
    let out = larder(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let runs: Vec<serde_json::Value> =
        stdout.lines().map(|l| serde_json::from_str(l).expect("one JSON object a line")).collect();
    let got: Vec<(u64, &str)> = runs
        .iter()
        .map(|r| (r["routers"].as_u64().unwrap(), r["policy"].as_str().unwrap()))
        .collect();
    assert_eq!(got, [(1, "hash"), (1, "lard"), (4, "hash"), (4, "lard")], "{stdout}");
    assert!(runs.iter().all(|r| r["report_delay_ms"] == 200.0 && r["spread"] == "client"));
    // Hashing places alike on every front-end; per-front-end tables do not.
    assert_eq!(runs[0]["hit_ratio"], runs[2]["hit_ratio"], "{stdout}");
    assert!(runs[3]["hit_ratio"].as_f64() < runs[1]["hit_ratio"].as_f64(), "{stdout}");

    let mut args = common.to_vec();
    args.extend(["--routers", "4", "--report-delay-ms", "50", "--policy", "lard"]);
    let out = larder(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.contains("routers") && table.contains("up to 50 ms old"), "{table}");
    for bad in [["--routers", "0"], ["--report-delay-ms", "-1"]] {
        let mut args = common.to_vec();
        args.extend(bad);
        let out = larder(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains("error"), "{bad:?}: {err}");
    }
}

//! `larder bench experiment` and `larder up --bench` end to end, shrunk to seconds: real
//! nodes and routers on loopback, a few hundred milliseconds of load per front-end, and
//! the files a user reads afterwards. Bad arguments are refused before anything starts.

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use testkit::{output_within, TempDir};

/// A failure guard only: these runs take a few seconds each.
const LIMIT: Duration = Duration::from_secs(180);

/// Runs larder with `args`; kills it if it outlives [`LIMIT`].
fn larder(args: &[&str]) -> Output {
    output_within(Command::new(env!("CARGO_BIN_EXE_larder")).args(args), LIMIT)
}

fn text(o: &Output) -> String {
    format!(
        "status {}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn rows(out: &Path) -> Vec<serde_json::Value> {
    let json = std::fs::read_to_string(out.join("rows.json")).unwrap();
    serde_json::from_str::<serde_json::Value>(&json).unwrap().as_array().unwrap().clone()
}

fn tiny<'a>(kind: &'a str, caches: &'a str, store: &'a str, out: &'a str) -> Vec<&'a str> {
    vec![
        "bench",
        "experiment",
        kind,
        "--cache-mb",
        caches,
        "--dataset-mb",
        "1",
        "--rounds",
        "1",
        "--duration",
        "400ms",
        "--warmup",
        "200ms",
        "--users",
        "2",
        "--dyn-cost-us",
        "200",
        "--store-dir",
        store,
        "--out",
        out,
    ]
}

#[test]
fn locality_runs_every_front_end_and_writes_results() {
    let dir = TempDir::new("experiment-test-locality");
    let (store, out) = (dir.0.join("store"), dir.0.join("out"));
    let (s, o) = (store.to_str().unwrap(), out.to_str().unwrap());
    let mut args = tiny("locality", "1,1", s, o);
    args.extend(["--workloads", "dynamic-uniform,static-uniform", "--systems", "wrr,lard-r"]);
    args.extend(["--connections", "keep-alive,per-request"]);
    let output = larder(&args);
    assert!(output.status.success(), "{}", text(&output));
    let rows = rows(&out);
    // 2 workloads × 2 connection modes × 2 systems × 1 round.
    assert_eq!(rows.len(), 8, "{}", text(&output));
    for row in &rows {
        assert!(row["requests"].as_u64().unwrap() > 0, "{row}");
        assert_eq!(row["errors"].as_u64(), Some(0), "{row}");
        let hit = row["hit_ratio"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&hit), "{row}");
        // The nodes' load reports saw the requests the load generator sent (the
        // front-end adds none: it has no health checks here).
        let served: u64 =
            row["node_requests"].as_array().unwrap().iter().map(|n| n.as_u64().unwrap()).sum();
        assert!(served >= row["requests"].as_u64().unwrap(), "{row}");
    }
    let systems: Vec<&str> = rows.iter().map(|r| r["system"].as_str().unwrap()).collect();
    assert_eq!(&systems[..4], ["wrr", "lard-r", "wrr", "lard-r"]);
    let table = std::fs::read_to_string(out.join("table.md")).unwrap();
    assert!(table.contains("### dynamic-uniform, per-request"), "{table}");
    assert!(table.contains("lard-r/wrr throughput"), "{table}");
    // The shape the simulator fit reads back.
    let shape: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("shape.json")).unwrap()).unwrap();
    assert_eq!(shape["users"], 2, "{shape}");
    assert!(shape["cpus"].as_u64().unwrap() >= 1, "{shape}");
    let svg =
        std::fs::read_to_string(out.join("static-uniform-keep-alive-throughput.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("lard-r"), "{svg}");
    // The static store is kept for the next run.
    assert!(std::fs::read_dir(&store).unwrap().count() > 0);
}

#[test]
fn classes_reports_static_and_dynamic_response_times() {
    let dir = TempDir::new("experiment-test-classes");
    let (store, out) = (dir.0.join("store"), dir.0.join("out"));
    let (s, o) = (store.to_str().unwrap(), out.to_str().unwrap());
    let mut args = tiny("classes", "1,1,1,1", s, o);
    args.extend(["--rate", "200"]);
    let output = larder(&args);
    assert!(output.status.success(), "{}", text(&output));
    let rows = rows(&out);
    let systems: Vec<&str> = rows.iter().map(|r| r["system"].as_str().unwrap()).collect();
    assert_eq!(systems, ["rr", "class"], "{}", text(&output));
    for row in &rows {
        assert!(row["static_mean_ms"].as_f64().unwrap() > 0.0, "{row}");
        assert!(row["dynamic_mean_ms"].as_f64().unwrap() > 0.0, "{row}");
    }
    // `class` sends the dynamic requests to n3 and n4 only; `rr` to every node.
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("static mean response class"), "{stdout}");
}

#[test]
fn up_bench_compares_the_policies() {
    let dir = TempDir::new("experiment-test-up");
    let store = dir.0.to_str().unwrap();
    let output = larder(&[
        "up",
        "--bench",
        "--nodes",
        "2",
        "--cache-mb",
        "1",
        "--bench-secs",
        "1",
        "--store-dir",
        store,
    ]);
    assert!(output.status.success(), "{}", text(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    for policy in ["wrr", "hash", "bounded", "lard", "lard-r"] {
        assert!(stdout.contains(&format!("| {policy} |")), "{stdout}");
    }
    assert!(dir.0.join("up-bench").join("table.md").is_file());
    // The table and the claims are the output; the processes' own lines go to logs/.
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stdout.contains("\nclaims:\n") && !stdout.contains("issue"), "{stdout}");
    assert!(!stdout.contains("[router]") && !stderr.contains("[router]"), "{}", text(&output));
    let logs = dir.0.join("up-bench").join("logs");
    let runs = std::fs::read_dir(&logs).unwrap().count();
    assert_eq!(runs, 5, "one directory of logs per policy in {}", logs.display());
}

#[test]
fn bad_arguments_are_refused_before_anything_starts() {
    let cases: [(&[&str], &str); 7] = [
        (&["--cache-mb", "16,0"], "at least 1 MiB"),
        (&["--pin", "0"], "--pin gives 1 CPUs for 4 nodes"),
        (&["--pin", "0,0,0,999"], "does not exist"),
        (&["--workloads", "movies"], "expected static-uniform"),
        (&["--workloads", "video"], "the origin experiment's"),
        (&["--systems", "envoy"], "expected a policy"),
        (&["--rounds", "0"], "must be above 0"),
    ];
    for (extra, message) in cases {
        let mut args = vec!["bench", "experiment", "--out", "/nonexistent/never-written"];
        args.extend(extra);
        let output = larder(&args);
        assert!(!output.status.success(), "{extra:?}: {}", text(&output));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(message), "{extra:?}: {stderr}");
    }
    let output = larder(&["bench", "experiment", "classes", "--workloads", "dynamic-uniform"]);
    assert!(String::from_utf8_lossy(&output.stderr).contains("static workloads only"));
    let output = larder(&["up", "--bench", "--docroot", "/tmp"]);
    assert!(!output.status.success());
}

#[test]
fn help_explains_the_experiments() {
    let output = larder(&["bench", "experiment", "--help"]);
    let help = String::from_utf8_lossy(&output.stdout);
    for word in ["locality", "classes", "--cache-mb", "--workloads", "haproxy", "--ramp"] {
        assert!(help.contains(word), "{word}: {help}");
    }
}

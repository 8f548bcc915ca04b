//! `larder trace` end to end: gen → stats → docroot on a generated log.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use testkit::TempDir;

fn larder(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_larder")).args(args).output().expect("larder runs")
}

fn ok(args: &[&str]) -> String {
    let out = larder(args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn json_u64(json: &str, key: &str) -> u64 {
    let at = json.find(&format!("\"{key}\":")).unwrap_or_else(|| panic!("{key} in {json}"));
    json[at + key.len() + 3..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .unwrap()
}

#[test]
fn gen_stats_docroot() {
    let tmp = TempDir::new("trace-cli");
    let log = tmp.path("w.log.gz");
    let root = tmp.path("root");
    let gen = |out: &str| {
        let args = [
            "trace",
            "gen",
            "--docs",
            "300",
            "--requests",
            "5000",
            "--users",
            "40",
            "--seed",
            "7",
            "--size-mix",
            "fixed:2KB",
            "-o",
            out,
        ];
        args.map(String::from).to_vec()
    };
    let mut first = gen(&log);
    first.extend(["--docroot".to_string(), root.clone()]);
    ok(&first.iter().map(String::as_str).collect::<Vec<_>>());
    let json = ok(&["trace", "stats", &log, "--json"]);
    assert_eq!(json_u64(&json, "requests"), 5000);
    assert_eq!(json_u64(&json, "skipped_lines"), 0);
    let targets = json_u64(&json, "targets");
    assert!(targets > 200 && targets <= 300, "{json}");
    assert_eq!(json_u64(&json, "dataset_bytes"), targets * 2000);

    // gen --docroot wrote all 300 documents; docroot from the log finds them in place.
    let files = walk(Path::new(&root));
    assert_eq!(files.len(), 300);
    assert!(files.iter().all(|(_, size)| *size == 2000));
    let out = larder(&["trace", "docroot", &log, &root]);
    assert!(out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("0 files written") && said.contains(&format!("{targets} already")),
        "{said}"
    );

    // Same seed, same log.
    let again = tmp.path("again.log.gz");
    ok(&gen(&again).iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(std::fs::read(&log).unwrap(), std::fs::read(&again).unwrap());

    let table = ok(&["trace", "stats", &log]);
    assert!(table.contains("distinct targets") && table.contains("99% of requests"), "{table}");
}

#[test]
fn single_file_and_dataset_sizing() {
    let tmp = TempDir::new("trace-cli-sizes");
    let log = tmp.path("one.log");
    ok(&["trace", "gen", "--single-file", "8KiB", "--requests", "100", "-o", &log]);
    let json = ok(&["trace", "stats", &log, "--json"]);
    assert_eq!((json_u64(&json, "targets"), json_u64(&json, "dataset_bytes")), (1, 8192));

    let log = tmp.path("ds.log");
    ok(&[
        "trace",
        "gen",
        "--dataset-mb",
        "20",
        "--dist",
        "uniform",
        "--requests",
        "200000",
        "-o",
        &log,
    ]);
    let json = ok(&["trace", "stats", &log, "--json"]);
    let dataset = json_u64(&json, "dataset_bytes");
    assert!((20 << 20..(20 << 20) + 1_500_000).contains(&dataset), "{json}");
}

#[test]
fn bad_input_is_a_clear_error() {
    let tmp = TempDir::new("trace-cli-bad");
    let out = larder(&["trace", "stats", &tmp.path("missing.log")]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing.log"));
    for args in [
        &["trace", "gen", "--docs", "0", "-o", &tmp.path("x.log")][..],
        &["trace", "gen", "--size-mix", "pareto", "-o", &tmp.path("x.log")],
        &["trace", "gen", "--single-file", "8 parsecs", "-o", &tmp.path("x.log")],
        &["trace", "gen", "--docs", "5", "--dataset-mb", "5", "-o", &tmp.path("x.log")],
        &["trace", "stats", &tmp.path("x.log"), "--statuses", "299-200"],
    ] {
        let out = larder(args);
        assert!(!out.status.success(), "{args:?} should fail");
        assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"), "{args:?}");
    }
    // Garbage in, counted out.
    let junk = tmp.path("junk.log");
    std::fs::write(&junk, b"\xff\xfe garbage\nnot a log line\n\n").unwrap();
    let json = ok(&["trace", "stats", &junk, "--json"]);
    assert_eq!((json_u64(&json, "requests"), json_u64(&json, "skipped_lines")), (0, 3));
}

fn walk(dir: &Path) -> Vec<(PathBuf, u64)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let meta = entry.metadata().unwrap();
        if meta.is_dir() {
            out.extend(walk(&entry.path()));
        } else {
            out.push((entry.path(), meta.len()));
        }
    }
    out
}

//! The harness keeps its promises: output arrives, deadlines hold, nothing is left running.

use std::process::Command;
use std::time::Duration;

use testkit::{output_within, Spawned, TempDir};

const LIMIT: Duration = Duration::from_secs(20);

#[test]
fn a_spawned_child_reports_lines_and_exit() {
    let child = Spawned::start(Command::new("sh").args(["-c", "echo out; echo err >&2; exit 3"]));
    assert_eq!(child.stdout.recv_timeout(LIMIT).unwrap(), "out");
    assert_eq!(child.stderr.recv_timeout(LIMIT).unwrap(), "err");
    assert_eq!(child.wait_within(LIMIT).unwrap().code(), Some(3));
    child.signal("TERM"); // exited: a no-op, not an error
}

#[test]
fn a_signal_reaches_the_child() {
    let child = Spawned::start(Command::new("sh").args(["-c", "echo ready; exec sleep 60"]));
    assert_eq!(child.stdout.recv_timeout(LIMIT).unwrap(), "ready");
    child.signal("TERM");
    let status = child.wait_within(LIMIT).expect("exits on SIGTERM");
    assert!(!status.success());
}

#[test]
fn output_within_collects_everything() {
    let out = output_within(Command::new("sh").args(["-c", "echo a; echo b >&2"]), LIMIT);
    assert!(out.status.success());
    assert_eq!(out.stdout, b"a\n");
    assert_eq!(out.stderr, b"b\n");
}

#[test]
#[should_panic(expected = "did not finish within")]
fn output_within_kills_a_child_that_overruns() {
    output_within(Command::new("sleep").arg("60"), Duration::from_millis(200));
}

#[test]
fn temp_dirs_are_distinct_and_removed() {
    let (a, b) = (TempDir::new("kit"), TempDir::new("kit"));
    assert_ne!(a.0, b.0);
    assert!(a.0.is_dir() && a.path("x").starts_with(a.0.to_str().unwrap()));
    let path = a.0.clone();
    drop(a);
    assert!(!path.exists());
}

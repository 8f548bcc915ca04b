//! `larder node` as a program: it serves, and SIGTERM makes it exit cleanly.

use std::process::Command;
use std::time::Duration;

use testkit::{get_once, Route, Spawned, TempDir, TestOrigin};

const WAIT: Duration = Duration::from_secs(20);

#[test]
fn serves_then_exits_on_sigterm() {
    let dir = TempDir::new("node-cli");
    let root = &dir.0;
    std::fs::write(root.join("a.txt"), b"cli ok\n").unwrap();
    let child = Spawned::start(
        Command::new(env!("CARGO_BIN_EXE_larder"))
            .args(["node", "--listen", "127.0.0.1:0", "--docroot"])
            .arg(root)
            .args(["--dyn-iterations", "1000", "--threads", "1"]),
    );
    // The node prints its bound address on stderr; wait for it, bounded.
    let line = child.stderr.recv_timeout(WAIT).expect("no start-up line");
    let addr = line.split("http://").nth(1).and_then(|s| s.split_whitespace().next()).unwrap();

    let resp = get_once(addr, "/a.txt", WAIT);
    assert!(resp.starts_with("HTTP/1.1 200 OK\r\n"), "{resp}");
    assert!(resp.ends_with("\r\n\r\ncli ok\n"), "{resp}");

    child.signal("TERM");
    let status = child.wait_within(WAIT).expect("node did not exit on SIGTERM");
    assert!(status.success(), "{status}");
}

#[test]
fn help_explains_the_flags() {
    let out = Command::new(env!("CARGO_BIN_EXE_larder")).args(["node", "--help"]).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    for flag in [
        "--docroot",
        "--listen",
        "--cache-mb",
        "--direct-io",
        "--threads",
        "--header-timeout-ms",
        "--origin ",
        "--origin-default-ttl",
        "--origin-stale-if-error",
        "--origin-targeted-cache-control",
        "--origin-heuristic-percent",
        "--origin-heuristic-max-secs",
        "--origin-timeout-ms",
        "--origin-max-idle",
        "--origin-max-head-kb",
        "--origin-max-head-fields",
    ] {
        assert!(text.contains(flag), "{flag} missing from --help");
    }
}

#[test]
fn caches_an_origin_without_a_docroot() {
    let origin = TestOrigin::start();
    origin.set("/o.txt", Route::ok(&[("Cache-Control", "max-age=600")], b"from the origin\n"));
    let child = Spawned::start(Command::new(env!("CARGO_BIN_EXE_larder")).args([
        "node",
        "--listen",
        "127.0.0.1:0",
        "--origin",
        &origin.url(),
    ]));
    let line = child.stderr.recv_timeout(WAIT).expect("no start-up line");
    // The line names the origin first, then the node's own address.
    let addr = line.rsplit("http://").next().and_then(|s| s.split_whitespace().next()).unwrap();
    for cache in ["MISS", "HIT"] {
        let resp = get_once(addr, "/o.txt", WAIT);
        assert!(resp.starts_with("HTTP/1.1 200 OK\r\n"), "{resp}");
        assert!(resp.contains(&format!("\r\nX-Larder-Cache: {cache}\r\n")), "{resp}");
        assert!(resp.ends_with("\r\n\r\nfrom the origin\n"), "{resp}");
    }
    assert_eq!(origin.hits("/o.txt"), 1);
    child.signal("TERM");
    let status = child.wait_within(WAIT).expect("node did not exit on SIGTERM");
    assert!(status.success(), "{status}");
}

#[test]
fn a_bad_origin_url_is_refused_clearly() {
    let out = Command::new(env!("CARGO_BIN_EXE_larder"))
        .args(["node", "--listen", "127.0.0.1:0", "--origin", "https://example.org"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("\"https://example.org\" is not an http://"), "{err}");
}

/// A start-up error names what failed and says the OS error once.
fn assert_named_once(stderr: &[u8], path: &str) {
    let text = String::from_utf8_lossy(stderr);
    assert!(text.contains(path), "{text}");
    assert_eq!(text.matches("os error").count(), 1, "{text}");
}

#[test]
fn a_bad_access_log_or_docroot_is_named_and_an_os_error_said_once() {
    let dir = TempDir::new("node-cli-errors");
    let bad_log = dir.0.join("missing-dir/access.log");
    let out = Command::new(env!("CARGO_BIN_EXE_larder"))
        .args(["node", "--listen", "127.0.0.1:0", "--docroot"])
        .arg(&dir.0)
        .arg("--access-log")
        .arg(&bad_log)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert_named_once(&out.stderr, &bad_log.display().to_string());
    let bad_root = dir.0.join("no-such-root");
    let out = Command::new(env!("CARGO_BIN_EXE_larder"))
        .args(["node", "--listen", "127.0.0.1:0", "--docroot"])
        .arg(&bad_root)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(text.contains(&bad_root.display().to_string()), "{text}");
}

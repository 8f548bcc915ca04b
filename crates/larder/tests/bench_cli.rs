//! `larder bench` end to end: the binary against a small in-test server on 127.0.0.1:0,
//! with a URL, a replayed log, JSON and HTML output, and `compare`.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A keep-alive server answering every request with `hello`; counts requests.
struct Server {
    url: String,
    requests: Arc<AtomicU64>,
}

fn server() -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let requests = Arc::new(AtomicU64::new(0));
    let counter = requests.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let counter = counter.clone();
            std::thread::spawn(move || serve(stream, &counter));
        }
    });
    Server { url, requests }
}

fn serve(stream: TcpStream, requests: &AtomicU64) {
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    loop {
        // Read one request head; any read error or end of stream ends the connection.
        let mut close = false;
        loop {
            line.clear();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) if line == "\r\n" => break,
                Ok(_) => close |= line.eq_ignore_ascii_case("connection: close\r\n"),
            }
        }
        requests.fetch_add(1, Ordering::SeqCst);
        if writer.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello").is_err() || close
        {
            return;
        }
    }
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("larder-bench-cli-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn larder(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_larder")).args(args).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "larder {args:?} failed: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn url_run_writes_table_json_and_html() {
    let s = server();
    let dir = temp_dir("url");
    let json = dir.join("r.json");
    let html = dir.join("r.html");
    let table = larder(&[
        "bench",
        "--url",
        &s.url,
        "--users",
        "2",
        "--requests",
        "50",
        "--threads",
        "1",
        "--json",
        json.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
    ]);
    assert!(table.contains("requests    50"), "{table}");
    assert_eq!(s.requests.load(Ordering::SeqCst), 50);
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["requests"], 50);
    assert_eq!(report["users"], 2);
    assert_eq!(report["bytes"], 50 * 43);
    assert!(report["latency_ms"]["p999"].is_number());
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<svg") && page.contains("Latency by percentile"));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_log_is_replayed_in_full_per_user_or_flat() {
    let s = server();
    let dir = temp_dir("trace");
    let log = dir.join("access.log");
    let lines = [
        "a - - [01/Aug/1995:00:00:01 -0400] \"GET /x HTTP/1.0\" 200 10",
        "b - - [01/Aug/1995:00:00:02 -0400] \"GET /y HTTP/1.0\" 200 20",
        "a - - [01/Aug/1995:00:00:03 -0400] \"GET /y HTTP/1.0\" 200 20",
        "c - - [01/Aug/1995:00:00:04 -0400] \"GET /z HTTP/1.0\" 404 0",
    ];
    std::fs::write(&log, lines.join("\n") + "\n").unwrap();
    let log = log.to_str().unwrap();
    let table = larder(&[
        "bench",
        "--trace",
        log,
        "--base",
        &s.url,
        "--think-scale",
        "0",
        "--threads",
        "1",
    ]);
    assert!(table.contains("requests    3"), "{table}");
    larder(&[
        "bench",
        "--trace",
        log,
        "--base",
        &s.url,
        "--flat",
        "--users",
        "1",
        "--threads",
        "1",
    ]);
    assert_eq!(s.requests.load(Ordering::SeqCst), 6);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_synthetic_workload_is_sent_in_full() {
    let s = server();
    let table = larder(&[
        "bench",
        "--synth",
        "--synth-docs",
        "10",
        "--synth-requests",
        "100",
        "--synth-users",
        "5",
        "--think-scale",
        "0",
        "--base",
        &s.url,
        "--threads",
        "1",
    ]);
    assert!(table.contains("requests    100"), "{table}");
    assert_eq!(s.requests.load(Ordering::SeqCst), 100);
}

#[test]
fn compare_prints_ratios_to_the_first_target() {
    let (a, b) = (server(), server());
    let out = larder(&[
        "bench",
        "compare",
        "--target",
        &a.url,
        "--target",
        &b.url,
        "--requests",
        "20",
        "--rounds",
        "2",
        "--users",
        "1",
        "--threads",
        "1",
    ]);
    assert!(out.contains("B/A") && out.contains("req/s per run"), "{out}");
    assert_eq!(a.requests.load(Ordering::SeqCst), 40);
    assert_eq!(b.requests.load(Ordering::SeqCst), 40);
}

#[test]
fn bad_input_is_a_clear_error() {
    for args in [
        &["bench"][..],
        &["bench", "--url", "https://127.0.0.1/"],
        &["bench", "--url", "http://127.0.0.1:1/", "--ramp", "0:1:1s"],
        &["bench", "--url", "http://127.0.0.1:1/", "--users", "0"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_larder")).args(args).output().unwrap();
        assert!(!out.status.success(), "{args:?} should fail");
        assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"), "{args:?}");
    }
}

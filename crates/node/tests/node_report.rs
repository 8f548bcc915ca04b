//! The dynamic route, the load report and metrics, the access log and graceful shutdown.

mod common;

use common::*;
use std::time::{Duration, Instant};

fn load(c: &mut Client) -> serde_json::Value {
    let r = c.get("/.larder/load");
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("application/json"));
    serde_json::from_slice(&r.body).unwrap()
}

#[test]
fn dynamic_documents_are_deterministic_and_cached_per_view() {
    let node = TestNode::start(|_| {});
    let mut c = node.client();
    let before = load(&mut c);
    let a = c.get("/app/db1/v1/doc1?OpenDocument");
    assert_eq!(a.status, 200);
    assert_eq!(a.body.len(), 3000);
    assert_eq!(a.header("content-type"), Some("text/html; charset=utf-8"));
    let view = node::dynamic::compute_view("db1", "v1", 10_000, 16 * 1024);
    let app = node::dynamic::AppPath { db: "db1", view: "v1", doc: "doc1" };
    assert_eq!(a.body, node::dynamic::render_document(&app, &view, 3000));
    let mid = load(&mut c);
    assert_eq!(mid["misses"].as_u64().unwrap(), before["misses"].as_u64().unwrap() + 1);
    // Same view: a hit, same bytes for the same URL, different bytes for another doc.
    assert_eq!(c.get("/app/db1/v1/doc1?OpenDocument").body, a.body);
    assert_ne!(c.get("/app/db1/v1/doc2").body, a.body);
    let after = load(&mut c);
    assert_eq!(after["hits"].as_u64().unwrap(), mid["hits"].as_u64().unwrap() + 2);
    assert_eq!(after["misses"], mid["misses"]);
    assert!(after["cache_bytes"].as_u64().unwrap() >= 16 * 1024);
    assert_ne!(c.get("/app/db1/v2/doc1").body, a.body);
    c.send(b"HEAD /app/db1/v1/doc1 HTTP/1.1\r\nHost: t\r\n\r\n");
    let h = c.response(true);
    assert_eq!(h.header("content-length"), Some("3000"));
    assert_eq!(c.get("/app/db1/v1/doc1?EditDocument").status, 404);
    assert_eq!(c.get("/app/db1/v1").status, 404);

    // Another node computes exactly the same bytes.
    let other = TestNode::start(|_| {});
    assert_eq!(other.client().get("/app/db1/v1/doc1?OpenDocument").body, a.body);
}

#[test]
fn load_report_and_metrics() {
    let node = TestNode::start(|cfg| cfg.cache_bytes = 5 << 20);
    let mut c = node.client();
    assert_eq!(c.get("/small.txt").status, 200);
    assert_eq!(c.get("/small.txt").status, 200);
    let v = load(&mut c);
    for field in [
        "in_flight",
        "open_connections",
        "cpu_pct",
        "disk_read_bytes_per_sec",
        "disk_read_bytes",
        "cache_bytes",
        "cache_capacity_bytes",
        "hits",
        "misses",
        "requests",
        "miss_bytes_reading",
    ] {
        assert!(v[field].is_number(), "{field} missing in {v}");
    }
    assert_eq!(v["cache_capacity_bytes"].as_u64(), Some(5 << 20));
    assert_eq!(v["in_flight"].as_u64(), Some(1), "the report request itself");
    assert_eq!(v["open_connections"].as_u64(), Some(1));
    assert_eq!(v["miss_bytes_reading"].as_u64(), Some(0), "every miss read has ended");
    assert_eq!(v["requests"].as_u64(), Some(3));
    assert!(v["hits"].as_u64().unwrap() >= 1 && v["misses"].as_u64().unwrap() >= 1);
    assert!(v["cache_bytes"].as_u64().unwrap() >= SMALL.len() as u64);
    let m = c.get("/.larder/metrics");
    assert_eq!(m.status, 200);
    let text = String::from_utf8(m.body).unwrap();
    assert!(text.contains("larder_node_requests_total 4\n"), "{text}");
    assert!(text.contains("# TYPE larder_node_cache_bytes gauge\n"));
}

#[test]
fn report_paths_are_configurable_and_can_be_off() {
    let node = TestNode::start(|cfg| {
        cfg.load_path = Some("/status/load".into());
        cfg.metrics_path = None;
        cfg.dynamic = None;
    });
    let mut c = node.client();
    assert_eq!(c.get("/status/load").status, 200);
    assert_eq!(c.get("/.larder/load").status, 404);
    assert_eq!(c.get("/.larder/metrics").status, 404);
    assert_eq!(c.get("/app/db/v/d").status, 404);
}

#[test]
fn access_log_in_combined_format() {
    let scratch = TempDir::new("node-log");
    let log_path = scratch.0.join("access.log");
    let lp = log_path.clone();
    let mut node = TestNode::start(move |cfg| cfg.access_log = Some(lp));
    let mut c = node.client();
    c.send(
        b"GET /small.txt HTTP/1.1\r\nHost: t\r\nUser-Agent: tester/1\r\nReferer: http://r/\r\n\r\n",
    );
    assert_eq!(c.response(false).status, 200);
    assert_eq!(c.get("/missing").status, 404);
    drop(c);
    node.stop().unwrap();
    let log = std::fs::read_to_string(&log_path).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 2, "{log}");
    assert!(lines[0].starts_with("127.0.0.1 - - ["), "{}", lines[0]);
    assert!(
        lines[0].ends_with(&format!(
            "+0000] \"GET /small.txt HTTP/1.1\" 200 {} \"http://r/\" \"tester/1\"",
            SMALL.len()
        )),
        "{}",
        lines[0]
    );
    assert!(lines[1].contains("\"GET /missing HTTP/1.1\" 404 "), "{}", lines[1]);
}

#[test]
fn shutdown_finishes_in_flight_requests() {
    let mut node = TestNode::start(|cfg| {
        cfg.dynamic = Some(node::DynamicConfig {
            mount: "app".into(),
            iterations: 150_000_000,
            view_bytes: 1024,
            doc_bytes: 1000,
        });
    });
    let mut slow = node.client();
    slow.send(b"GET /app/db/heavy/doc HTTP/1.1\r\nHost: t\r\n\r\n");
    let mut idle = node.client();
    assert_eq!(idle.get("/small.txt").status, 200);
    // Wait (bounded) until the slow request is in flight, as the node itself reports.
    let mut watcher = node.client();
    let deadline = Instant::now() + WAIT;
    while load(&mut watcher)["in_flight"].as_u64() < Some(2) {
        assert!(Instant::now() < deadline, "slow request never started");
    }
    drop(watcher);
    let addr = node.addr;
    let stopper = std::thread::spawn(move || node.stop());
    let r = slow.response(false);
    assert_eq!(r.status, 200);
    assert_eq!(r.body.len(), 1000);
    assert!(slow.closed(), "closed after the in-flight answer");
    assert!(idle.closed(), "idle keep-alive connections are closed");
    stopper.join().unwrap().unwrap();
    let refused = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(2));
    assert!(refused.is_err(), "no longer accepting");
}

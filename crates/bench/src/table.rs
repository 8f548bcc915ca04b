//! The report as a plain-text table for a terminal or a log.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::report::Report;

/// Render `report` as lines of text.
pub fn render(report: &Report) -> String {
    let t = &report.total;
    let mut out = String::new();
    let how = if report.connection_per_request { "connection per request" } else { "keep-alive" };
    let who = match (report.mode, report.rate) {
        ("open", Some(rate)) => {
            format!("open loop at {rate} req/s over {} connections", report.users)
        }
        ("ramp", _) => format!("ramp, {} users sustained", report.users),
        _ => format!("closed loop, {} users", report.users),
    };
    let _ = writeln!(out, "larder bench {}: {who}, {how}", report.target);
    let _ = writeln!(out, "  stopped because {}", report.stop_reason.describe());
    let _ = writeln!(out, "  {:<12}{:.2} s", "duration", report.duration_s);
    let _ = writeln!(out, "  {:<12}{} ({:.1} req/s)", "requests", t.requests, t.throughput_rps);
    let _ = writeln!(out, "  {:<12}{} ({:.2} Mbit/s)", "bytes", t.bytes, t.throughput_mbps);
    let e = &t.errors;
    let _ = writeln!(
        out,
        "  {:<12}{} (connect {}, timeout {}, 4xx {}, 5xx {}, reset {}, protocol {}, mismatch {})",
        "errors",
        e.total,
        e.connect,
        e.timeout,
        e.status_4xx,
        e.status_5xx,
        e.reset,
        e.protocol,
        e.mismatch
    );
    let c = &t.connect_ms;
    let _ = writeln!(
        out,
        "  {:<12}avg {:.3} ms, max {:.3} ms over {} connects",
        "connect", c.avg, c.max, c.count
    );
    let l = &t.latency_ms;
    let _ = writeln!(
        out,
        "  {:<12}p50 {:.3}  p90 {:.3}  p99 {:.3}  p99.9 {:.3}  max {:.3}  (ms)",
        "latency", l.p50, l.p90, l.p99, l.p999, l.max
    );
    if !t.nodes.is_empty() {
        let _ = writeln!(out, "  {:<12}{}", "nodes", shares(&t.nodes));
    }
    if !t.routers.is_empty() {
        let _ = writeln!(out, "  {:<12}{}", "routers", shares(&t.routers));
    }
    if report.epochs.len() > 1 {
        let _ = writeln!(
            out,
            "  {:>5} {:>9} {:>6} {:>11} {:>9} {:>9} {:>9} {:>7}",
            "epoch", "start s", "users", "req/s", "p50 ms", "p99 ms", "conn ms", "errors"
        );
        for ep in &report.epochs {
            let s = &ep.summary;
            let _ = writeln!(
                out,
                "  {:>5} {:>9.1} {:>6} {:>11.1} {:>9.3} {:>9.3} {:>9.3} {:>7}",
                ep.index,
                ep.start_s,
                ep.users,
                s.throughput_rps,
                s.latency_ms.p50,
                s.latency_ms.p99,
                s.connect_ms.avg,
                s.errors.total
            );
        }
    }
    out
}

/// `a 50.0% (10), b 50.0% (10)`: each name's share of the responses that named one
/// (nodes by `X-Larder-Node`, routers by `X-Larder-Router`).
pub fn shares(counts: &BTreeMap<String, u64>) -> String {
    let named: u64 = counts.values().sum();
    counts
        .iter()
        .map(|(node, n)| format!("{node} {:.1}% ({n})", 100.0 * *n as f64 / named.max(1) as f64))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One line for a progress display while a run goes on.
pub fn progress_line(epoch: &crate::report::EpochReport) -> String {
    let s = &epoch.summary;
    format!(
        "epoch {} at {:.0} s: {} users, {:.0} req/s, p99 {:.2} ms, {} errors",
        epoch.index,
        epoch.start_s + epoch.duration_s,
        epoch.users,
        s.throughput_rps,
        s.latency_ms.p99,
        s.errors.total
    )
}

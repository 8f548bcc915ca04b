//! The shared real logs in `../shared/traces` beside the checkout. They are not part of
//! the repository, so these tests are ignored by a plain `cargo test` and run by
//! `scripts/test-real-logs.sh`, where a missing log is a failure.

use std::path::PathBuf;
use trace::{load_workload, LoadOptions, SkipReason, Stats, DEFAULT_IDLE_GAP_MS};

const NEEDS_LOGS: &str = "needs ../shared/traces beside the checkout: scripts/test-real-logs.sh";

/// The path of a shared log; panics (fails the test) when it is not there.
fn shared_trace(name: &str) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces").join(name);
    assert!(path.is_file(), "shared log {} not found ({NEEDS_LOGS})", path.display());
    path
}

#[test]
#[ignore = "needs ../shared/traces beside the checkout: scripts/test-real-logs.sh"]
fn epa_aug95() {
    let path = shared_trace("epa_aug95.log.gz");
    let (w, report) = load_workload(&path, &LoadOptions::default()).unwrap();
    assert_eq!(report.lines, 47_748);
    assert_eq!(report.lines, report.requests + report.skipped_lines);
    // Checked independently with awk: 40,697 GET/HEAD lines with status 200 or 304, for
    // 5,141 distinct targets; the rest are the 1,622 POSTs and 5,429 other statuses (302,
    // 404, 501, ...; the one line with a broken request line is a 404). No line is
    // malformed beyond that: a DEL byte inside one target is kept as part of the target.
    assert_eq!(report.requests, 40_697, "{report:?}");
    assert_eq!(w.targets.len(), 5_141);
    assert_eq!(report.skipped_by_reason[&SkipReason::MethodNotAccepted], 1_622);
    assert_eq!(report.skipped_by_reason[&SkipReason::StatusNotAccepted], 5_429);
    assert_eq!(report.malformed_lines(), 0);
    let stats = Stats::of(&w, Some(&report), DEFAULT_IDLE_GAP_MS);
    // One day of log, 29/Aug 23:53 to 30/Aug 23:53 (EDT).
    assert!(stats.span_ms > 23 * 3_600_000 && stats.span_ms <= 24 * 3_600_000, "{stats:?}");
    assert!(stats.users > 1_500 && stats.users <= 2_333);
    assert!(stats.sessions >= stats.users);
    assert!(stats.coverage.windows(2).all(|p| p[0].cache_bytes <= p[1].cache_bytes));
}

#[test]
#[ignore = "needs ../shared/traces beside the checkout: scripts/test-real-logs.sh"]
fn apache_combined_2015() {
    let path = shared_trace("apache_combined_2015.log");
    let (w, report) = load_workload(&path, &LoadOptions::default()).unwrap();
    assert_eq!(report.lines, 10_000);
    // Checked independently with awk: 9,614 GET/HEAD lines with status 2xx or 304.
    assert_eq!(report.requests, 9_614, "{report:?}");
    assert_eq!(report.malformed_lines(), 0);
    assert_eq!(w.targets.len(), 1_389);
    assert!(w.dataset_bytes() > 0);
}

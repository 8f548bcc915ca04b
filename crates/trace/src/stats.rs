//! Summary figures of a workload, including its working-set curve.
//!
//! The curve answers "how big must one ideal cache be to serve P% of the requests from
//! memory?" (the figure the scalable-distribution paper quotes for its IBM trace:
//! 43/69/165 MB for 97/98/99%). It is computed greedily: targets in decreasing order of
//! requests per byte, accumulated until P% of the requests are covered. That is the
//! classic density-greedy answer to this knapsack; it is exact when the targets taken
//! fill the share exactly and otherwise at most one target's size above the optimum.

use crate::load::LoadReport;
use crate::session::session_count;
use crate::skip::SkipReason;
use crate::workload::Workload;
use serde::Serialize;
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// The request shares (percent) the working-set curve is reported at.
pub const COVERAGE_PERCENTS: [u32; 5] = [90, 95, 97, 98, 99];

/// One point of the working-set curve.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Coverage {
    /// Share of requests covered, in percent.
    pub percent: u32,
    /// Targets the cache must hold.
    pub targets: u64,
    /// Bytes the cache must hold.
    pub cache_bytes: u64,
}

/// Summary of a workload (and of the log it came from, if any).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Stats {
    pub requests: u64,
    /// Distinct targets.
    pub targets: u64,
    /// Sum of target sizes: what all caches together would need to hold everything.
    pub dataset_bytes: u64,
    /// Sum over requests of the requested target's size.
    pub bytes_requested: u64,
    /// Time from the earliest to the latest request.
    pub span_ms: u64,
    /// Distinct clients that sent requests.
    pub users: u64,
    pub sessions: u64,
    /// The idle gap `sessions` was counted with.
    pub idle_gap_ms: u64,
    /// Lines read (0 for a workload that did not come from a log).
    pub lines: u64,
    pub skipped_lines: u64,
    pub skipped_by_reason: BTreeMap<SkipReason, u64>,
    /// Ideal single-cache size per share of requests, at [`COVERAGE_PERCENTS`].
    pub coverage: Vec<Coverage>,
}

/// Requests per target, indexed like [`Workload::targets`].
fn request_counts(workload: &Workload) -> Vec<u64> {
    let mut counts = vec![0u64; workload.targets.len()];
    for r in &workload.requests {
        counts[r.target as usize] += 1;
    }
    counts
}

/// The working-set curve at the given percentages (see the module doc).
pub fn coverage(workload: &Workload, percents: &[u32]) -> Vec<Coverage> {
    let counts = request_counts(workload);
    let mut order: Vec<usize> = (0..counts.len()).filter(|&i| counts[i] > 0).collect();
    // Decreasing requests per byte; compare c1/s1 > c2/s2 as c1*s2 > c2*s1 (exact).
    order.sort_by(|&a, &b| {
        let (ca, sa) = (u128::from(counts[a]), u128::from(workload.targets[a].size));
        let (cb, sb) = (u128::from(counts[b]), u128::from(workload.targets[b].size));
        match (cb * sa).cmp(&(ca * sb)) {
            Ordering::Equal => sa.cmp(&sb).then(a.cmp(&b)),
            other => other,
        }
    });
    let total = workload.requests.len() as u128;
    percents
        .iter()
        .map(|&percent| {
            let (mut covered, mut targets, mut cache_bytes) = (0u128, 0u64, 0u64);
            for &i in &order {
                if covered * 100 >= u128::from(percent) * total {
                    break;
                }
                covered += u128::from(counts[i]);
                targets += 1;
                cache_bytes += workload.targets[i].size;
            }
            Coverage { percent, targets, cache_bytes }
        })
        .collect()
}

impl Stats {
    /// Figures for `workload`; pass the [`LoadReport`] when it came from a log.
    pub fn of(workload: &Workload, report: Option<&LoadReport>, idle_gap_ms: u64) -> Stats {
        let reqs = &workload.requests;
        let times = reqs.iter().map(|r| r.time_ms);
        let span_ms = times.clone().max().unwrap_or(0) - times.min().unwrap_or(0);
        let mut seen = vec![false; reqs.iter().map(|r| r.client as usize + 1).max().unwrap_or(0)];
        reqs.iter().for_each(|r| seen[r.client as usize] = true);
        let report = report.cloned().unwrap_or_default();
        Stats {
            requests: reqs.len() as u64,
            targets: workload.targets.len() as u64,
            dataset_bytes: workload.dataset_bytes(),
            bytes_requested: reqs.iter().map(|r| workload.targets[r.target as usize].size).sum(),
            span_ms,
            users: seen.iter().filter(|&&s| s).count() as u64,
            sessions: session_count(workload, idle_gap_ms),
            idle_gap_ms,
            lines: report.lines,
            skipped_lines: report.skipped_lines,
            skipped_by_reason: report.skipped_by_reason,
            coverage: coverage(workload, &COVERAGE_PERCENTS),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{TargetInfo, WorkRequest};

    fn workload(sizes: &[u64], reqs: &[(u32, u32, u64)]) -> Workload {
        Workload {
            targets: sizes
                .iter()
                .enumerate()
                .map(|(i, &size)| TargetInfo { path: format!("/{i}"), size })
                .collect(),
            requests: reqs
                .iter()
                .map(|&(target, client, time_ms)| WorkRequest { target, client, time_ms })
                .collect(),
        }
    }

    #[test]
    fn figures() {
        // Target 0: 10 bytes x 6 requests; 1: 1000 bytes x 3; 2: 1 byte x 1; 3 unrequested.
        let mut reqs = vec![(0, 0, 0); 6];
        reqs.extend([(1, 1, 100), (1, 1, 5000), (1, 2, 7000), (2, 2, 9000)]);
        let w = workload(&[10, 1000, 1, 50], &reqs);
        let s = Stats::of(&w, None, 1000);
        assert_eq!((s.requests, s.targets, s.dataset_bytes), (10, 4, 1061));
        assert_eq!((s.bytes_requested, s.span_ms, s.users), (60 + 3000 + 1, 9000, 3));
        // Sessions: client 0 one; client 1 split at 100 -> 5000; client 2 split 7000 -> 9000.
        assert_eq!(s.sessions, 5);
        // Density order: target 2 (1/B), then 0 (0.6/B), then 1 (0.003/B).
        let c = coverage(&w, &[0, 10, 70, 71, 90, 100]);
        let got: Vec<_> = c.iter().map(|c| (c.percent, c.targets, c.cache_bytes)).collect();
        assert_eq!(
            got,
            vec![(0, 0, 0), (10, 1, 1), (70, 2, 11), (71, 3, 1011), (90, 3, 1011), (100, 3, 1011)]
        );
    }

    #[test]
    fn empty_workload() {
        let s = Stats::of(&Workload::default(), None, 1000);
        assert_eq!((s.requests, s.span_ms, s.users, s.sessions), (0, 0, 0, 0));
        assert!(s.coverage.iter().all(|c| c.cache_bytes == 0));
    }
}

//! Throughput against cluster size, one line per policy: the shape of the LARD paper's
//! figures, drawn by the `chart` crate.

use chart::{line_chart, Series, PALETTE};

use crate::RunResult;

/// At most this many cluster sizes are named on the x axis.
const MAX_X_LABELS: usize = 12;

/// The chart as an SVG document. Policies appear in order of first result; each line
/// joins that policy's points in order of cluster size. When the runs had different
/// numbers of front-ends, each policy has a line per count (`lard ×4`), unless every run
/// had the same cluster size: then the x axis is the number of front-ends (a sweep of
/// `--routers` alone).
pub fn throughput_svg(results: &[RunResult], title: &str) -> String {
    let one_size = results.iter().all(|r| r.nodes == results[0].nodes);
    let several = results.iter().any(|r| r.routers != results[0].routers);
    if one_size && several {
        return against_routers(results, title);
    }
    let line_of = |r: &RunResult| {
        if several {
            format!("{} ×{}", r.policy, r.routers)
        } else {
            r.policy.clone()
        }
    };
    let mut lines: Vec<String> = Vec::new();
    for r in results {
        let line = line_of(r);
        if !lines.contains(&line) {
            lines.push(line);
        }
    }
    let series: Vec<Series<'_>> = lines
        .iter()
        .enumerate()
        .map(|(i, line)| {
            let mut points: Vec<(f64, f64)> = results
                .iter()
                .filter(|r| line_of(r) == *line)
                .map(|r| (r.nodes as f64, r.throughput_rps))
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            Series { name: line, color: PALETTE[i % PALETTE.len()], points }
        })
        .collect();
    // Cluster sizes are whole numbers: name those that were run, not fractions between.
    let mut sizes: Vec<usize> = results.iter().map(|r| r.nodes).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let step = sizes.len().div_ceil(MAX_X_LABELS).max(1);
    let x_labels: Vec<(f64, String)> =
        sizes.iter().step_by(step).map(|n| (*n as f64, n.to_string())).collect();
    line_chart(
        title,
        "cluster size (back-end nodes)",
        "throughput (requests/s)",
        &series,
        Some(&x_labels),
    )
}

/// Throughput against the number of front-ends, one line per policy.
fn against_routers(results: &[RunResult], title: &str) -> String {
    let mut policies: Vec<&str> = Vec::new();
    for r in results {
        if !policies.contains(&r.policy.as_str()) {
            policies.push(&r.policy);
        }
    }
    let series: Vec<Series<'_>> = policies
        .iter()
        .enumerate()
        .map(|(i, policy)| {
            let mut points: Vec<(f64, f64)> = results
                .iter()
                .filter(|r| r.policy == *policy)
                .map(|r| (r.routers as f64, r.throughput_rps))
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            Series { name: policy, color: PALETTE[i % PALETTE.len()], points }
        })
        .collect();
    let mut counts: Vec<usize> = results.iter().map(|r| r.routers).collect();
    counts.sort_unstable();
    counts.dedup();
    let x_labels: Vec<(f64, String)> = counts.iter().map(|n| (*n as f64, n.to_string())).collect();
    let x_title = format!("front-ends (routers), {} nodes", results[0].nodes);
    line_chart(title, &x_title, "throughput (requests/s)", &series, Some(&x_labels))
}

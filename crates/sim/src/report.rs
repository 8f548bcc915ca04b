//! The readable table `larder sim` prints.

use std::fmt::Write;

use crate::RunResult;

/// A table of runs; with one run, also its per-node lines. `wall_seconds` (total wall
/// time of the runs), when given, adds the replay speed to the footer.
pub fn table(results: &[RunResult], wall_seconds: Option<f64>) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<8} {:>5} {:>7} {:>10} {:>12} {:>6} {:>6} {:>5} {:>5} {:>5} {:>5} {:>6}",
        "policy",
        "nodes",
        "routers",
        "requests",
        "throughput/s",
        "hit%",
        "ideal%",
        "cpu%",
        "max",
        "disk%",
        "max",
        "imbal"
    );
    for r in results {
        let max = |f: fn(&crate::NodeResult) -> f64| r.per_node.iter().map(f).fold(0.0, f64::max);
        let _ = writeln!(
            out,
            "{:<8} {:>5} {:>7} {:>10} {:>12.1} {:>6.1} {:>6.1} {:>5.0} {:>5.0} {:>5.0} {:>5.0} {:>6.2}",
            r.policy,
            r.nodes,
            r.routers,
            r.requests,
            r.throughput_rps,
            100.0 * r.hit_ratio,
            100.0 * r.ideal_hit_ratio,
            100.0 * r.mean_cpu_util,
            100.0 * max(|n| n.cpu_util),
            100.0 * r.mean_disk_util,
            100.0 * max(|n| n.disk_util),
            r.imbalance,
        );
    }
    if let [r] = results {
        let _ = writeln!(
            out,
            "\n{:>5} {:>9} {:>10} {:>8} {:>6} {:>6} {:>6}",
            "node", "cache MiB", "requests", "targets", "cpu%", "disk%", "hit%"
        );
        for (i, n) in r.per_node.iter().enumerate() {
            let _ = writeln!(
                out,
                "{:>5} {:>9} {:>10} {:>8} {:>6.1} {:>6.1} {:>6.1}",
                i,
                n.cache_mb,
                n.requests,
                n.targets,
                100.0 * n.cpu_util,
                100.0 * n.disk_util,
                100.0 * n.hit_ratio
            );
        }
    }
    let _ = writeln!(
        out,
        "\ncpu%/disk%: mean and max over nodes of busy time in the measured window; imbal: \
         max/mean requests per node; targets: targets whose last request went to the node; \
         ideal%: one cache as large as all nodes' caches together."
    );
    if let Some(r) = results.iter().find(|r| r.routers > 1) {
        let _ = writeln!(
            out,
            "routers: front-ends, each with its own policy instance, seeing node reports up to \
             {} ms old; requests spread over them per {}.",
            r.report_delay_ms, r.spread
        );
    }
    if let Some(wall) = wall_seconds {
        let replayed: u64 = results.iter().map(|r| r.requests).sum();
        let _ = writeln!(
            out,
            "replayed {replayed} requests in {wall:.2} s of wall time: {:.0} simulated requests/s",
            replayed as f64 / wall.max(1e-9)
        );
    }
    out
}

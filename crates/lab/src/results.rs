//! What the experiments measured: one [`Row`] per run, and the medians over rounds as a
//! table (Markdown, so it pastes into docs/results/), JSON and SVG bar charts.

use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::claims::Claim;
use crate::error::{Context, Result};
use crate::hosts::LinkBytes;

/// One front-end on one workload in one round.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Row {
    pub workload: String,
    /// `keep-alive` or `per-request`.
    pub connections: String,
    pub system: String,
    pub round: u32,
    pub requests: u64,
    pub errors: u64,
    pub throughput_rps: f64,
    pub mean_ms: f64,
    pub p99_ms: f64,
    /// Aggregate cache hit ratio of all nodes (their load reports), measured part only.
    pub hit_ratio: f64,
    /// Disk bytes the nodes read per request.
    pub disk_bytes_per_request: f64,
    /// CPU microseconds per request: front-end, all nodes, load generator.
    pub cpu_us_front: f64,
    pub cpu_us_nodes: f64,
    pub cpu_us_client: f64,
    /// Requests each node served (its load report), n1 first.
    pub node_requests: Vec<u64>,
    /// Users sustained under the DBench ramp, when it ran.
    pub users_sustained: Option<u32>,
    /// The classes experiment: static and dynamic requests apart.
    pub static_mean_ms: Option<f64>,
    pub static_p99_ms: Option<f64>,
    pub dynamic_mean_ms: Option<f64>,
    /// larder route: the share of its recent picks (the last 5–10 s, over every router of
    /// the run) that went to a node holding the target by the node's own report.
    #[serde(default)]
    pub picks_on_holders: Option<f64>,
    /// Caching nodes: requests the nodes sent to the origin per client request.
    #[serde(default)]
    pub origin_requests_per_request: Option<f64>,
    /// Caching nodes: bytes the origin sent per client request.
    #[serde(default)]
    pub origin_bytes_per_request: Option<f64>,
    /// Large objects: body bytes served per client request.
    #[serde(default)]
    pub served_bytes_per_request: Option<f64>,
    /// Hosts of their own: what each host's link carried in the measured part.
    #[serde(default)]
    pub link_bytes: Vec<LinkBytes>,
}

/// Rows of one (workload, connections) group, by system in first-seen order.
type Group<'a> = crate::grouping::BySystem<'a, Row>;

/// Rows by (workload, connections), in first-seen order.
pub fn groups(rows: &[Row]) -> Vec<((String, String), Group<'_>)> {
    crate::grouping::by_key_then_system(
        rows,
        |r| (r.workload.clone(), r.connections.clone()),
        |r| r.system.as_str(),
    )
}

/// The median of `f` over `runs` (the lower middle for an even count, so it is a value
/// that was measured).
pub fn median(runs: &[&Row], f: impl Fn(&Row) -> f64) -> f64 {
    let mut v: Vec<f64> = runs.iter().map(|r| f(r)).filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    v.get(v.len().saturating_sub(1) / 2).copied().unwrap_or(f64::NAN)
}

fn optional(runs: &[&Row], f: impl Fn(&Row) -> Option<f64>) -> Option<f64> {
    runs.iter().any(|r| f(r).is_some()).then(|| median(runs, |r| f(r).unwrap_or(f64::NAN)))
}

/// A figure with two decimals, or "–" where there is none (a NaN).
fn cell(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.2}")
    } else {
        "–".into()
    }
}

/// Medians per system, with ratios to `baseline` (the first system if it is absent).
pub fn render_table(rows: &[Row], baseline: &str) -> String {
    let mut out = String::new();
    for ((workload, connections), systems) in groups(rows) {
        let base = systems.iter().find(|(s, _)| *s == baseline).or(systems.first());
        let base_rps = base.map_or(f64::NAN, |(_, runs)| median(runs, |r| r.throughput_rps));
        let base_name = base.map_or("", |(s, _)| *s);
        let rounds = systems.iter().map(|(_, r)| r.len()).max().unwrap_or(0);
        let of = if rounds == 1 {
            "one round".to_string()
        } else {
            format!("median of {rounds} rounds")
        };
        let _ = writeln!(out, "\n### {workload}, {connections} ({of})\n");
        let classes =
            systems.iter().any(|(_, runs)| runs.iter().any(|r| r.static_mean_ms.is_some()));
        let ramp = systems.iter().any(|(_, runs)| runs.iter().any(|r| r.users_sustained.is_some()));
        let agreement =
            systems.iter().any(|(_, runs)| runs.iter().any(|r| r.picks_on_holders.is_some()));
        let origin = systems
            .iter()
            .any(|(_, runs)| runs.iter().any(|r| r.origin_bytes_per_request.is_some()));
        let served = systems
            .iter()
            .any(|(_, runs)| runs.iter().any(|r| r.served_bytes_per_request.is_some()));
        let mut head = format!(
            "| system | req/s | × {base_name} | hit ratio | mean ms | p99 ms | errors | disk MB/s | CPU µs/req router · nodes · client |"
        );
        let mut rule = "|---|---:|---:|---:|---:|---:|---:|---:|---|".to_string();
        if served {
            head.push_str(" MB/s served |");
            rule.push_str("---:|");
        }
        if ramp {
            head.push_str(" users sustained |");
            rule.push_str("---:|");
        }
        if agreement {
            head.push_str(" picks on holders |");
            rule.push_str("---:|");
        }
        if origin {
            head.push_str(" origin req/req | origin KiB/req | origin MB/s |");
            rule.push_str("---:|---:|---:|");
        }
        if classes {
            head.push_str(" static mean ms | static p99 ms | dynamic mean ms |");
            rule.push_str("---:|---:|---:|");
        }
        let _ = writeln!(out, "{head}\n{rule}");
        for (system, runs) in &systems {
            let rps = median(runs, |r| r.throughput_rps);
            let disk = median(runs, |r| r.disk_bytes_per_request * r.throughput_rps / 1e6);
            let _ = write!(
                out,
                "| {system} | {rps:.0} | {:.2} | {:.3} | {:.2} | {} | {} | {disk:.1} | {:.0} · {:.0} · {:.0} |",
                rps / base_rps,
                median(runs, |r| r.hit_ratio),
                median(runs, |r| r.mean_ms),
                cell(median(runs, |r| r.p99_ms)),
                runs.iter().map(|r| r.errors).sum::<u64>(),
                median(runs, |r| r.cpu_us_front),
                median(runs, |r| r.cpu_us_nodes),
                median(runs, |r| r.cpu_us_client),
            );
            if served {
                let rate = optional(runs, |r| {
                    r.served_bytes_per_request.map(|b| b * r.throughput_rps / 1e6)
                });
                let _ = write!(out, " {} |", rate.map_or("–".into(), |m| format!("{m:.1}")));
            }
            if ramp {
                let users = optional(runs, |r| r.users_sustained.map(f64::from));
                let _ = write!(out, " {} |", users.map_or("–".into(), |u| format!("{u:.0}")));
            }
            if agreement {
                let share = optional(runs, |r| r.picks_on_holders);
                let _ = write!(out, " {} |", share.map_or("–".into(), |s| format!("{s:.3}")));
            }
            if origin {
                let fetches = optional(runs, |r| r.origin_requests_per_request);
                let bytes = optional(runs, |r| r.origin_bytes_per_request);
                let rate = optional(runs, |r| {
                    r.origin_bytes_per_request.map(|b| b * r.throughput_rps / 1e6)
                });
                let _ = write!(
                    out,
                    " {} | {} | {} |",
                    fetches.map_or("–".into(), |f| format!("{f:.3}")),
                    bytes.map_or("–".into(), |b| format!("{:.2}", b / 1024.0)),
                    rate.map_or("–".into(), |m| format!("{m:.1}")),
                );
            }
            if classes {
                let cell = |v: Option<f64>| cell(v.unwrap_or(f64::NAN));
                let _ = write!(
                    out,
                    " {} | {} | {} |",
                    cell(optional(runs, |r| r.static_mean_ms)),
                    cell(optional(runs, |r| r.static_p99_ms)),
                    cell(optional(runs, |r| r.dynamic_mean_ms)),
                );
            }
            out.push('\n');
        }
    }
    out
}

/// Writes `rows.json`, `table.md` and, per group, throughput and hit-ratio charts.
pub fn write(
    dir: &Path,
    rows: &[Row],
    baseline: &str,
    header: &str,
    claims: &[Claim],
) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))
    };
    write("rows.json", &serde_json::to_string_pretty(rows).context("encoding rows")?)?;
    let claims: String = claims.iter().map(|c| format!("- {c}\n")).collect();
    let table = render_table(rows, baseline);
    write("table.md", &format!("{header}\n{table}\nClaims:\n\n{claims}"))?;
    for ((workload, connections), systems) in groups(rows) {
        let chart = |title: &str, unit: &str, f: &dyn Fn(&Row) -> f64| {
            let bars: Vec<(String, f64)> =
                systems.iter().map(|(s, runs)| (s.to_string(), median(runs, f))).collect();
            chart::bar_chart(&format!("{title}: {workload}, {connections}"), &bars, unit)
        };
        let stem = format!("{workload}-{connections}");
        write(
            &format!("{stem}-throughput.svg"),
            &chart("Requests per second", " req/s", &|r| r.throughput_rps),
        )?;
        write(
            &format!("{stem}-hit-ratio.svg"),
            &chart("Aggregate cache hit ratio", "", &|r| r.hit_ratio),
        )?;
        write(&format!("{stem}-p99.svg"), &chart("p99 latency", " ms", &|r| r.p99_ms))?;
        if systems.iter().any(|(_, runs)| runs.iter().any(|r| r.origin_bytes_per_request.is_some()))
        {
            let kib = |r: &Row| r.origin_bytes_per_request.map_or(f64::NAN, |b| b / 1024.0);
            write(
                &format!("{stem}-origin-bytes.svg"),
                &chart("Origin bytes per client request", " KiB", &kib),
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claims::rows;

    /// The claims' lines, as printed.
    fn lines(claims: Vec<Claim>) -> Vec<String> {
        claims.iter().map(ToString::to_string).collect()
    }

    fn controls(rows: &[Row]) -> Vec<String> {
        lines(rows::controls(rows))
    }

    fn claims(rows: &[Row]) -> Vec<String> {
        lines(rows::claims(rows))
    }

    fn origin_claims(rows: &[Row]) -> Vec<String> {
        lines(rows::origin_claims(rows))
    }

    fn row(system: &str, round: u32, rps: f64) -> Row {
        Row {
            workload: "dynamic-uniform".into(),
            connections: "keep-alive".into(),
            system: system.into(),
            round,
            requests: 100,
            errors: 0,
            throughput_rps: rps,
            mean_ms: 1.0,
            p99_ms: 2.0,
            hit_ratio: 0.5,
            disk_bytes_per_request: 0.0,
            cpu_us_front: 10.0,
            cpu_us_nodes: 20.0,
            cpu_us_client: 5.0,
            node_requests: vec![50, 50],
            users_sustained: None,
            static_mean_ms: None,
            static_p99_ms: None,
            dynamic_mean_ms: None,
            picks_on_holders: None,
            origin_requests_per_request: None,
            origin_bytes_per_request: None,
            served_bytes_per_request: None,
            link_bytes: Vec::new(),
        }
    }

    #[test]
    fn a_control_is_set_against_its_first_listing() {
        let rows = [
            row("lard", 0, 100.0),
            row("lard-r", 0, 90.0),
            row("lard#2", 0, 95.0),
            Row { p99_ms: 3.0, ..row("lard-r#2", 0, 80.0) },
        ];
        let c = controls(&rows);
        assert_eq!(c.len(), 2, "{c:?}");
        assert!(c[0].contains("A/A control lard#2/lard throughput 0.95x, p99 1.00x"), "{c:?}");
        assert!(c[1].contains("A/A control lard-r#2/lard-r throughput 0.89x, p99 1.50x"), "{c:?}");
        assert!(controls(&rows[..2]).is_empty(), "no system listed twice, no control");
    }

    #[test]
    fn table_shows_medians_and_ratios() {
        let rows = [
            row("wrr", 0, 100.0),
            row("lard-r", 0, 300.0),
            row("wrr", 1, 140.0),
            row("lard-r", 1, 500.0),
            row("wrr", 2, 120.0),
            row("lard-r", 2, 360.0),
        ];
        let t = render_table(&rows, "wrr");
        assert!(t.contains("| wrr | 120 | 1.00 |"), "{t}");
        assert!(t.contains("| lard-r | 360 | 3.00 |"), "{t}");
        let claims = claims(&rows);
        assert_eq!(claims.len(), 2, "{claims:?}");
        assert!(claims[0].contains("lard-r/wrr throughput 3.00x (>= 2: holds)"), "{claims:?}");
        assert!(claims[1].contains("hit ratio 0.500 (>= 0.9: FAILS)"), "{claims:?}");
        let with_hash = [row("lard-r", 0, 300.0), Row { hit_ratio: 0.9, ..row("hash", 0, 200.0) }];
        let claims = self::claims(&with_hash);
        assert!(
            claims.iter().any(|c| c
                .contains("lard-r/hash throughput 1.50x (> 1: holds), hit ratio 0.500 vs 0.900")),
            "{claims:?}"
        );
    }

    #[test]
    fn agreement_has_a_column_when_routers_counted_it() {
        let rows = [
            row("haproxy", 0, 100.0),
            Row { picks_on_holders: Some(0.987), ..row("lard-r ×4", 0, 300.0) },
        ];
        let t = render_table(&rows, "haproxy");
        assert!(t.contains("| picks on holders |"), "{t}");
        assert!(t.contains("| 0.987 |") && t.contains("| – |"), "{t}");
        assert!(!render_table(&rows[..1], "haproxy").contains("picks on holders"));
    }

    #[test]
    fn origin_figures_have_columns_and_claims() {
        let origin = |system: &str, rps: f64, p99: f64, kib: f64| Row {
            p99_ms: p99,
            origin_requests_per_request: Some(kib / 16.0),
            origin_bytes_per_request: Some(kib * 1024.0),
            ..row(system, 0, rps)
        };
        let rows = [
            origin("wrr", 1000.0, 9.0, 10.0),
            origin("haproxy", 2500.0, 6.0, 3.0),
            origin("varnish", 3000.0, 5.0, 1.0),
            origin("lard-r", 3500.0, 4.0, 1.04),
        ];
        let t = render_table(&rows, "wrr");
        assert!(t.contains("| origin req/req | origin KiB/req | origin MB/s |"), "{t}");
        assert!(t.contains("| 0.625 | 10.00 | 10.2 |"), "{t}");
        let c = origin_claims(&rows);
        assert_eq!(c.len(), 3, "{c:?}");
        assert!(
            c[0].contains(
                "throughput 3.50x (>= 3: holds), origin bytes 9.62x fewer (>= 2.5: holds)"
            ),
            "{c:?}"
        );
        assert!(
            c[1].contains("throughput 1.40x (>= 1.3: holds), p99 4.00 vs 6.00 ms (lower: holds)"),
            "{c:?}"
        );
        assert!(
            c[2].contains(
                "throughput 1.17x (>= 1: holds), origin bytes 1.040x varnish's (<= 1.05: holds)"
            ),
            "{c:?}"
        );
        assert!(!render_table(&rows[..0], "wrr").contains("origin"));
    }

    #[test]
    fn large_objects_are_judged_against_the_varnish_cluster() {
        let large = |system: &str, rps: f64, kib: f64| Row {
            workload: "video".into(),
            origin_requests_per_request: Some(kib / 1024.0),
            origin_bytes_per_request: Some(kib * 1024.0),
            served_bytes_per_request: Some(8.0 * 1024.0 * 1024.0),
            ..row(system, 0, rps)
        };
        let rows = [
            large("varnish-cluster", 100.0, 2000.0),
            large("nginx-slice", 110.0, 1500.0),
            large("lard-r", 140.0, 1000.0),
        ];
        let t = render_table(&rows, "varnish-cluster");
        assert!(t.contains("| MB/s served |"), "{t}");
        assert!(t.contains("| 1174.4 |"), "{t}");
        let c = origin_claims(&rows);
        assert_eq!(c.len(), 1, "{c:?}");
        assert!(
            c[0].contains(
                "lard-r/varnish-cluster throughput 1.40x (>= 1.3: holds), origin bytes 0.500x varnish-cluster's (<= 1: holds)"
            ),
            "{c:?}"
        );
        let slower = [large("varnish-cluster", 100.0, 1000.0), large("lard-r", 120.0, 1001.0)];
        let c = origin_claims(&slower);
        assert!(c[0].contains("1.20x (>= 1.3: FAILS)") && c[0].contains("(<= 1: FAILS)"), "{c:?}");
    }

    #[test]
    fn peers_are_judged_against_the_self_routing_varnish_cluster() {
        let hosts = |system: &str, rps: f64, kib: f64| Row {
            workload: "static-zipf".into(),
            origin_bytes_per_request: Some(kib * 1024.0),
            ..row(system, 0, rps)
        };
        let rows = [
            hosts("lard-r", 150.0, 10.0),
            hosts("peers", 300.0, 10.0),
            hosts("varnish-self-routing", 250.0, 20.0),
        ];
        let c = origin_claims(&rows);
        assert_eq!(c.len(), 1, "{c:?}");
        assert!(
            c[0].contains(
                "peers/varnish-self-routing throughput 1.20x (>= 1: holds), origin bytes 0.500x varnish-self-routing's (<= 1: holds)"
            ),
            "{c:?}"
        );
        let behind = [hosts("peers", 240.0, 21.0), hosts("varnish-self-routing", 250.0, 20.0)];
        let c = origin_claims(&behind);
        assert!(c[0].contains("0.96x (>= 1: FAILS)") && c[0].contains("(<= 1: FAILS)"), "{c:?}");
    }

    #[test]
    fn origin_claims_hold_when_both_fetch_nothing() {
        let origin = |system: &str, rps: f64, kib: f64| Row {
            origin_requests_per_request: Some(kib / 16.0),
            origin_bytes_per_request: Some(kib * 1024.0),
            ..row(system, 0, rps)
        };
        // Every cache holds the whole data set: no origin traffic behind either front-end.
        let rows = [
            origin("wrr", 1000.0, 3.0),
            origin("varnish", 3000.0, 0.0),
            origin("lard-r", 3500.0, 0.0),
        ];
        let c = origin_claims(&rows);
        assert_eq!(c.len(), 2, "{c:?}");
        assert!(
            c[0].contains("origin bytes 0.00 vs 3.00 KiB per request (>= 2.5: holds)"),
            "{c:?}"
        );
        assert!(
            c[1].contains("origin bytes 0.00 vs 0.00 KiB per request (<= 1.05: holds)"),
            "{c:?}"
        );
        // More than nothing is not within 5% of nothing.
        let rows = [origin("varnish", 3000.0, 0.0), origin("lard-r", 3500.0, 0.5)];
        assert!(origin_claims(&rows)[0].contains("(<= 1.05: FAILS)"));
    }

    #[test]
    fn median_of_an_even_count_is_a_measured_value() {
        let (a, b) = (row("x", 0, 1.0), row("x", 1, 3.0));
        assert_eq!(median(&[&a, &b], |r| r.throughput_rps), 1.0);
    }
}

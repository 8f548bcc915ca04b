//! The report as one self-contained HTML page: inline CSS and inline SVG charts, no script
//! and no external resource, so it opens anywhere, offline, and screenshots reliably.

use std::collections::BTreeMap;
use std::fmt::Write;

use chart::{bar_chart, line_chart, RGBColor, Series};

use crate::report::Report;
use crate::table::render;

/// Render `report` as an HTML page.
pub fn render_html(report: &Report) -> String {
    let mut body = String::new();
    let _ = write!(body, "<h1>larder bench: {}</h1>", escape(&report.target));
    let _ = write!(body, "<pre>{}</pre>", escape(&render(report)));
    body.push_str(&over_time(report));
    body.push_str(&distribution(report));
    body.push_str(&nodes(report));
    if !report.total.routers.is_empty() {
        body.push_str(&share_chart("Per-router share", "router", &report.total.routers));
    }
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>larder bench: {}</title>\
         <style>body{{font-family:sans-serif;margin:24px;color:#222}}pre{{background:#f6f6f6;padding:12px;\
         font-size:12px;overflow-x:auto}}.charts{{display:flex;flex-wrap:wrap;gap:16px}}\
         svg{{background:#fff;border:1px solid #ccc}}</style></head><body>{body}</body></html>\n",
        escape(&report.target)
    )
}

/// Throughput and latency percentiles per epoch (and users, for a ramp).
fn over_time(report: &Report) -> String {
    let at = |e: &crate::report::EpochReport| e.start_s + e.duration_s;
    let rps = Series {
        name: "req/s",
        color: RGBColor(0x4c, 0x78, 0xa8),
        points: report.epochs.iter().map(|e| (at(e), e.summary.throughput_rps)).collect(),
    };
    let latency =
        |name, color: RGBColor, pick: fn(&crate::latency::LatencySummary) -> f64| Series {
            name,
            color,
            points: report.epochs.iter().map(|e| (at(e), pick(&e.summary.latency_ms))).collect(),
        };
    let mut out = String::from("<h2>Over time</h2><div class=\"charts\">");
    out.push_str(&line_chart("Throughput per epoch", "seconds", "requests/s", &[rps], None));
    out.push_str(&line_chart(
        "Latency per epoch",
        "seconds",
        "milliseconds",
        &[
            latency("p50", RGBColor(0x54, 0xa2, 0x4b), |l| l.p50),
            latency("p90", RGBColor(0xf5, 0x85, 0x18), |l| l.p90),
            latency("p99", RGBColor(0xe4, 0x57, 0x56), |l| l.p99),
        ],
        None,
    ));
    if report.mode == "ramp" {
        let users = Series {
            name: "users",
            color: RGBColor(0x72, 0xb7, 0xb2),
            points: report.epochs.iter().map(|e| (at(e), f64::from(e.users))).collect(),
        };
        out.push_str(&line_chart("Users per epoch", "seconds", "users", &[users], None));
    }
    out.push_str("</div>");
    out
}

/// Latency by percentile on the usual HDR axis, where each step right is a tenfold rarer
/// tail (90%, 99%, 99.9%, ...).
fn distribution(report: &Report) -> String {
    let tail_x = |percentile: f64| {
        let tail = (1.0 - percentile / 100.0).max(1e-7);
        -tail.log10()
    };
    let points = report.latency_distribution.iter().map(|&(p, ms)| (tail_x(p), ms)).collect();
    let labels: Vec<(f64, String)> = ["0%", "90%", "99%", "99.9%", "99.99%", "99.999%", "99.9999%"]
        .iter()
        .enumerate()
        .map(|(i, l)| (i as f64, l.to_string()))
        .collect();
    let series = Series { name: "latency", color: RGBColor(0x4c, 0x78, 0xa8), points };
    format!(
        "<h2>Latency distribution</h2><div class=\"charts\">{}</div>",
        line_chart("Latency by percentile", "percentile", "milliseconds", &[series], Some(&labels))
    )
}

/// Each node's share of the responses, from `X-Larder-Node`.
fn nodes(report: &Report) -> String {
    let nodes = &report.total.nodes;
    if nodes.is_empty() {
        return "<h2>Per-node share</h2><p>No response carried X-Larder-Node.</p>".to_string();
    }
    share_chart("Per-node share", "node", nodes)
}

/// A heading and a bar chart of each name's share of the responses that named one.
fn share_chart(title: &str, per: &str, counts: &BTreeMap<String, u64>) -> String {
    let named: u64 = counts.values().sum();
    let bars: Vec<(String, f64)> =
        counts.iter().map(|(n, c)| (n.clone(), 100.0 * *c as f64 / named as f64)).collect();
    format!(
        "<h2>{title}</h2><div class=\"charts\">{}</div>",
        bar_chart(&format!("Share of requests per {per}"), &bars, "%")
    )
}

/// `text` made safe inside HTML text and attribute values.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn markup_characters_are_escaped() {
        assert_eq!(escape(r#"<a href="x">&</a>"#), "&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;");
        assert_eq!(escape("plain"), "plain");
    }
}

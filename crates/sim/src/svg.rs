//! Throughput against cluster size, one line per policy: the shape of the LARD paper's
//! figures. Plain SVG written by hand, so the chart needs no dependency.

use std::fmt::Write;

use crate::RunResult;

const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 440.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 150.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 60.0;
const COLOURS: [&str; 8] =
    ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"];

/// A round step near `span / 5` (1, 2 or 5 times a power of ten).
fn tick_step(span: f64) -> f64 {
    let raw = (span / 5.0).max(f64::MIN_POSITIVE);
    let magnitude = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0].into_iter().map(|m| m * magnitude).find(|s| *s >= raw).unwrap_or(raw)
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The chart as an SVG document. Policies appear in order of first result; each line
/// joins that policy's points in order of cluster size.
pub fn throughput_svg(results: &[RunResult], title: &str) -> String {
    let mut policies: Vec<&str> = Vec::new();
    for r in results {
        if !policies.contains(&r.policy.as_str()) {
            policies.push(&r.policy);
        }
    }
    let min_n = results.iter().map(|r| r.nodes).min().unwrap_or(1) as f64;
    let max_n = (results.iter().map(|r| r.nodes).max().unwrap_or(1) as f64).max(min_n + 1.0);
    let y_step = tick_step(results.iter().map(|r| r.throughput_rps).fold(0.0, f64::max).max(1.0));
    let max_y =
        (results.iter().map(|r| r.throughput_rps).fold(0.0, f64::max) / y_step).ceil().max(1.0)
            * y_step;
    let (plot_w, plot_h) = (WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM);
    let x = |n: f64| LEFT + (n - min_n) / (max_n - min_n) * plot_w;
    let y = |v: f64| TOP + plot_h - v / max_y * plot_h;

    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="22" text-anchor="middle" font-size="15">{}</text>"#,
        LEFT + plot_w / 2.0,
        escape(title)
    );
    // Axes, grid and ticks.
    let _ = writeln!(
        s,
        r#"<path d="M{LEFT},{TOP} V{} H{}" fill="none" stroke="black"/>"#,
        TOP + plot_h,
        LEFT + plot_w
    );
    let mut v = 0.0;
    while v <= max_y + y_step / 2.0 {
        let yy = y(v);
        let _ = writeln!(
            s,
            r##"<line x1="{LEFT}" y1="{yy:.1}" x2="{}" y2="{yy:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
            LEFT + plot_w,
            LEFT - 6.0,
            yy + 4.0,
            v
        );
        v += y_step;
    }
    let x_step = tick_step(max_n - min_n).max(1.0).round();
    let mut n = min_n;
    while n <= max_n + 0.5 {
        let xx = x(n);
        let _ = writeln!(
            s,
            r#"<line x1="{xx:.1}" y1="{}" x2="{xx:.1}" y2="{}" stroke="black"/><text x="{xx:.1}" y="{}" text-anchor="middle">{n}</text>"#,
            TOP + plot_h,
            TOP + plot_h + 5.0,
            TOP + plot_h + 20.0
        );
        n += x_step;
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">cluster size (back-end nodes)</text>"#,
        LEFT + plot_w / 2.0,
        HEIGHT - 15.0
    );
    let _ = writeln!(
        s,
        r#"<text transform="translate(20,{}) rotate(-90)" text-anchor="middle">throughput (requests/s)</text>"#,
        TOP + plot_h / 2.0
    );
    // One line per policy, and the legend.
    for (i, policy) in policies.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let mut points: Vec<(f64, f64)> = results
            .iter()
            .filter(|r| r.policy == *policy)
            .map(|r| (r.nodes as f64, r.throughput_rps))
            .collect();
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        let path: Vec<String> =
            points.iter().map(|&(n, t)| format!("{:.1},{:.1}", x(n), y(t))).collect();
        let _ = writeln!(
            s,
            r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="2"/>"#,
            path.join(" ")
        );
        for &(n, t) in &points {
            let _ =
                writeln!(s, r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{colour}"/>"#, x(n), y(t));
        }
        let ly = TOP + 10.0 + 20.0 * i as f64;
        let lx = LEFT + plot_w + 15.0;
        let _ = writeln!(
            s,
            r#"<line x1="{lx}" y1="{ly}" x2="{}" y2="{ly}" stroke="{colour}" stroke-width="2"/><text x="{}" y="{}">{}</text>"#,
            lx + 25.0,
            lx + 32.0,
            ly + 4.0,
            escape(policy)
        );
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_ticks() {
        assert_eq!(tick_step(100.0), 20.0);
        assert_eq!(tick_step(15.0), 5.0);
        assert_eq!(tick_step(7000.0), 2000.0);
    }
}

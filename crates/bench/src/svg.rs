//! Tiny inline-SVG charts (lines and bars), so an HTML report needs no script and no
//! network to show its pictures.

use std::fmt::Write;

const WIDTH: f64 = 640.0;
const HEIGHT: f64 = 300.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 44.0;
const BOTTOM: f64 = 44.0;

/// One line of a chart.
pub struct Series<'a> {
    pub name: &'a str,
    pub color: &'a str,
    pub points: Vec<(f64, f64)>,
}

/// Escape `text` for use inside SVG or HTML.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Round tick positions covering `0..=max` (about five of them).
fn ticks(max: f64) -> Vec<f64> {
    if !(max.is_finite() && max > 0.0) {
        return vec![0.0, 1.0];
    }
    let rough = max / 5.0;
    let magnitude = 10f64.powf(rough.log10().floor());
    let step =
        [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * magnitude).find(|s| *s >= rough).unwrap_or(rough);
    let n = (max / step).ceil() as usize;
    (0..=n).map(|i| i as f64 * step).collect()
}

fn label(value: f64) -> String {
    if value == 0.0 || value.abs() >= 100.0 {
        format!("{value:.0}")
    } else if value.abs() >= 1.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.3}")
    }
}

/// A line chart. `x_labels` replaces the numeric x tick labels (e.g. for a log scale); the
/// y axis starts at zero.
pub fn line_chart(
    title: &str,
    x_title: &str,
    y_title: &str,
    series: &[Series<'_>],
    x_labels: Option<&[(f64, String)]>,
) -> String {
    let all = || series.iter().flat_map(|s| s.points.iter().copied());
    let finite = |v: &f64| v.is_finite();
    let x_min = all().map(|p| p.0).filter(finite).fold(f64::INFINITY, f64::min);
    let x_max = all().map(|p| p.0).filter(finite).fold(f64::NEG_INFINITY, f64::max);
    let (x_min, x_max) = if !x_min.is_finite() {
        (0.0, 1.0)
    } else if x_min < x_max {
        (x_min, x_max)
    } else {
        (x_min - 0.5, x_min + 0.5)
    };
    let y_max = all().map(|p| p.1).filter(finite).fold(0.0, f64::max);
    let y_ticks = ticks(y_max);
    let y_top = *y_ticks.last().unwrap_or(&1.0);
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let px = |x: f64| LEFT + (x - x_min) / (x_max - x_min) * plot_w;
    let py = |y: f64| TOP + plot_h - y / y_top * plot_h;

    let mut svg = open(title);
    for y in &y_ticks {
        let _ = write!(
            svg,
            r##"<line x1="{LEFT}" x2="{}" y1="{py:.1}" y2="{py:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end" font-size="11">{}</text>"##,
            WIDTH - RIGHT,
            LEFT - 6.0,
            py(*y) + 4.0,
            label(*y),
            py = py(*y),
        );
    }
    let numeric: Vec<(f64, String)>;
    let x_ticks = match x_labels {
        Some(given) => given,
        None => {
            let round = if x_min >= 0.0 { ticks(x_max) } else { ticks(x_max - x_min) };
            let shift = if x_min >= 0.0 { 0.0 } else { x_min };
            numeric = round.into_iter().map(|t| (shift + t, label(shift + t))).collect();
            &numeric
        }
    };
    for (x, text) in x_ticks.iter().filter(|(x, _)| *x >= x_min && *x <= x_max) {
        let _ = write!(
            svg,
            r##"<text x="{:.1}" y="{}" text-anchor="middle" font-size="11">{}</text>"##,
            px(*x),
            HEIGHT - BOTTOM + 16.0,
            escape(text)
        );
    }
    axes(&mut svg, x_title, y_title);
    for (i, s) in series.iter().enumerate() {
        let pts: Vec<String> = s
            .points
            .iter()
            .filter(|p| p.0.is_finite() && p.1.is_finite())
            .map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
            .collect();
        let _ = write!(
            svg,
            r##"<polyline fill="none" stroke="{c}" stroke-width="2" points="{}"/>"##,
            pts.join(" "),
            c = s.color
        );
        for p in &pts {
            let (x, y) = p.split_once(',').unwrap_or(("0", "0"));
            let _ = write!(svg, r##"<circle cx="{x}" cy="{y}" r="2.5" fill="{}"/>"##, s.color);
        }
        let lx = LEFT + 10.0 + 110.0 * i as f64;
        let _ = write!(
            svg,
            r##"<rect x="{lx}" y="{}" width="12" height="4" fill="{c}"/><text x="{}" y="{}" font-size="11">{}</text>"##,
            TOP - 18.0,
            lx + 16.0,
            TOP - 14.0,
            escape(s.name),
            c = s.color
        );
    }
    svg.push_str("</svg>");
    svg
}

/// A horizontal bar chart of `(label, value)`; `unit` follows each value.
pub fn bar_chart(title: &str, bars: &[(String, f64)], unit: &str) -> String {
    let max = bars.iter().map(|b| b.1).filter(|v| v.is_finite()).fold(0.0, f64::max);
    let row = 26.0;
    let height = TOP + row * bars.len().max(1) as f64 + 12.0;
    let mut svg = format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="sans-serif"><text x="{LEFT}" y="18" font-size="14" font-weight="bold">{}</text>"##,
        escape(title)
    );
    let plot_w = WIDTH - LEFT - RIGHT - 120.0;
    for (i, (name, value)) in bars.iter().enumerate() {
        let y = TOP + row * i as f64;
        let w = if max > 0.0 { value / max * plot_w } else { 0.0 };
        let _ = write!(
            svg,
            r##"<text x="{}" y="{:.1}" text-anchor="end" font-size="12">{}</text><rect x="{LEFT}" y="{y:.1}" width="{w:.1}" height="{}" fill="#4c78a8"/><text x="{:.1}" y="{:.1}" font-size="12">{:.1}{}</text>"##,
            LEFT - 6.0,
            y + row * 0.55,
            escape(name),
            row - 8.0,
            LEFT + w + 6.0,
            y + row * 0.55,
            value,
            escape(unit)
        );
    }
    svg.push_str("</svg>");
    svg
}

fn open(title: &str) -> String {
    format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif"><text x="{}" y="14" text-anchor="middle" font-size="14" font-weight="bold">{}</text>"##,
        WIDTH / 2.0,
        escape(title)
    )
}

fn axes(svg: &mut String, x_title: &str, y_title: &str) {
    let _ = write!(
        svg,
        r##"<line x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{b}" stroke="#333"/><line x1="{LEFT}" x2="{r}" y1="{b}" y2="{b}" stroke="#333"/><text x="{cx}" y="{}" text-anchor="middle" font-size="12">{}</text><text x="14" y="{cy}" text-anchor="middle" font-size="12" transform="rotate(-90 14 {cy})">{}</text>"##,
        HEIGHT - 6.0,
        escape(x_title),
        escape(y_title),
        b = HEIGHT - BOTTOM,
        r = WIDTH - RIGHT,
        cx = LEFT + (WIDTH - LEFT - RIGHT) / 2.0,
        cy = TOP + (HEIGHT - TOP - BOTTOM) / 2.0,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_maximum() {
        assert_eq!(ticks(10.0), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert!(*ticks(73.0).last().unwrap() >= 73.0);
        assert_eq!(ticks(0.0), vec![0.0, 1.0]);
        assert_eq!(ticks(f64::NAN), vec![0.0, 1.0]);
    }

    #[test]
    fn charts_escape_text_and_survive_degenerate_data() {
        let s = Series { name: "<a&b>", color: "#000", points: vec![(1.0, 2.0)] };
        let svg = line_chart("t", "x", "y", &[s], None);
        assert!(svg.contains("&lt;a&amp;b&gt;"));
        assert!(svg.ends_with("</svg>"));
        let empty = line_chart("t", "x", "y", &[], None);
        assert!(!empty.contains("NaN") && !empty.contains("inf"));
        let bars = bar_chart("n", &[("a".into(), 0.0)], "%");
        assert!(bars.contains("<rect"));
    }
}

//! Line charts: one line (with a dot per point) for each series over a numeric x axis, a
//! y axis from zero, and a legend naming the lines.

use std::ops::Range;

use plotters::prelude::*;

use crate::caption::title_px;
use crate::number::number;
use crate::series::Series;
use crate::ticked_axis::TickedAxis;

const SIZE: (u32, u32) = (640, 320);
/// How many ticks plotters may place on a numeric axis.
const TICKS: usize = 8;

/// A line chart as an SVG document. `x_labels` names chosen x positions in place of
/// numeric ticks (e.g. `"99%"` on a log-scaled percentile axis); the y axis starts at
/// zero. Empty or non-finite data gives an empty frame, never `NaN` in the document.
pub fn line_chart(
    title: &str,
    x_title: &str,
    y_title: &str,
    series: &[Series<'_>],
    x_labels: Option<&[(f64, String)]>,
) -> String {
    let mut svg = String::new();
    draw(&mut svg, title, x_title, y_title, series, x_labels)
        .unwrap_or_else(|e| unreachable!("drawing into a String cannot fail: {e}"));
    svg
}

fn draw(
    svg: &mut String,
    title: &str,
    x_title: &str,
    y_title: &str,
    series: &[Series<'_>],
    x_labels: Option<&[(f64, String)]>,
) -> Result<(), DrawingAreaErrorKind<std::io::Error>> {
    let root = SVGBackend::with_string(svg, SIZE).into_drawing_area();
    root.fill(&WHITE)?;
    let x_range = x_span(series);
    let y_range = 0.0..y_top(series);
    let x_axis = match x_labels {
        Some(given) => TickedAxis::at(x_range, given.iter().map(|(x, _)| *x)),
        None => TickedAxis::round(x_range, TICKS),
    };
    let x_text = |x: &f64| match x_labels {
        Some(given) => given.iter().find(|(at, _)| at == x).map(|(_, t)| t.clone()),
        None => None,
    };
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", title_px(title, SIZE.0)))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(64)
        .build_cartesian_2d(x_axis, y_range)?;
    chart
        .configure_mesh()
        .x_desc(x_title)
        .y_desc(y_title)
        .y_labels(TICKS)
        .x_label_formatter(&|x| x_text(x).unwrap_or_else(|| number(*x)))
        .y_label_formatter(&|y| number(*y))
        .max_light_lines(0)
        .draw()?;
    for s in series {
        let color = s.color;
        chart
            .draw_series(LineSeries::new(s.finite_points(), color.stroke_width(2)))?
            .label(s.name)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], color.stroke_width(2)));
        chart.draw_series(s.finite_points().map(|p| Circle::new(p, 3, color.filled())))?;
    }
    if !series.is_empty() {
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.3))
            .draw()?;
    }
    root.present()?;
    Ok(())
}

/// The x values' extent, widened to one unit around a single value (and `0..1` without
/// data) so every point has a place.
fn x_span(series: &[Series<'_>]) -> Range<f64> {
    let xs = || series.iter().flat_map(|s| s.finite_points().map(|p| p.0));
    let lo = xs().fold(f64::INFINITY, f64::min);
    let hi = xs().fold(f64::NEG_INFINITY, f64::max);
    if !lo.is_finite() {
        0.0..1.0
    } else if lo < hi {
        lo..hi
    } else {
        lo - 0.5..lo + 0.5
    }
}

/// A little above the largest y, so the top point is not on the frame (1 without data).
fn y_top(series: &[Series<'_>]) -> f64 {
    let max = series.iter().flat_map(|s| s.finite_points().map(|p| p.1)).fold(0.0, f64::max);
    if max > 0.0 {
        max * 1.05
    } else {
        1.0
    }
}

//! Horizontal bar charts: one bar per label, top to bottom in the given order, with the
//! value and its unit written at the end of each bar.

use plotters::prelude::*;

use crate::caption::title_px;
use crate::number::number;

const WIDTH: u32 = 640;
const ROW: u32 = 28;
const BAR: RGBColor = RGBColor(0x4c, 0x78, 0xa8);

/// A bar chart of `(label, value)` as an SVG document; `unit` follows each value (e.g.
/// `" req/s"`, `"%"`). Bars scale from zero to the largest finite value; a value that
/// is not a number draws no bar and reads `n/a`.
pub fn bar_chart(title: &str, bars: &[(String, f64)], unit: &str) -> String {
    let mut svg = String::new();
    draw(&mut svg, title, bars, unit)
        .unwrap_or_else(|e| unreachable!("drawing into a String cannot fail: {e}"));
    svg
}

fn draw(
    svg: &mut String,
    title: &str,
    bars: &[(String, f64)],
    unit: &str,
) -> Result<(), DrawingAreaErrorKind<std::io::Error>> {
    let rows = bars.len().max(1) as u32;
    let root = SVGBackend::with_string(svg, (WIDTH, 90 + ROW * rows)).into_drawing_area();
    root.fill(&WHITE)?;
    let max = bars.iter().map(|b| b.1).filter(|v| v.is_finite()).fold(0.0, f64::max);
    // Room right of the longest bar for its value.
    let x_top = if max > 0.0 { max * 1.3 } else { 1.0 };
    let n = bars.len() as i32;
    // Row 0 is drawn at the top: bar `i` sits at y = n - 1 - i.
    let name_at = |y: i32| usize::try_from(n - 1 - y).ok().and_then(|i| bars.get(i));
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", title_px(title, WIDTH)))
        .margin(12)
        .x_label_area_size(30)
        .y_label_area_size(120)
        .build_cartesian_2d(0.0..x_top, (0..(n - 1).max(1)).into_segmented())?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .max_light_lines(1)
        .x_desc(unit.trim())
        .x_label_formatter(&|x| number(*x))
        .y_labels(bars.len().max(1))
        .y_label_formatter(&|y| match y {
            SegmentValue::CenterOf(y) => name_at(*y).map(|b| b.0.clone()).unwrap_or_default(),
            _ => String::new(),
        })
        .draw()?;
    let finite = |v: f64| if v.is_finite() { v.max(0.0) } else { 0.0 };
    chart.draw_series(bars.iter().enumerate().map(|(i, (_, value))| {
        let y = n - 1 - i as i32;
        let top = (0.0, SegmentValue::Exact(y + 1));
        let bottom = (finite(*value), SegmentValue::Exact(y));
        let mut bar = Rectangle::new([top, bottom], BAR.filled());
        bar.set_margin(4, 4, 0, 0);
        bar
    }))?;
    chart.draw_series(bars.iter().enumerate().map(|(i, (_, value))| {
        let at = (finite(*value) + x_top * 0.01, SegmentValue::CenterOf(n - 1 - i as i32));
        let text =
            if value.is_finite() { format!("{}{unit}", number(*value)) } else { "n/a".into() };
        Text::new(text, at, ("sans-serif", 12))
    }))?;
    root.present()?;
    Ok(())
}

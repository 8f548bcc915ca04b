//! The charts say what they show: titles, axis titles, legend names and one mark per
//! point or bar are in the SVG, escaped, and bad data never writes `NaN`.

use chart::{bar_chart, line_chart, Series, PALETTE};

fn series<'a>(name: &'a str, points: &[(f64, f64)], i: usize) -> Series<'a> {
    Series { name, color: PALETTE[i], points: points.to_vec() }
}

#[test]
fn a_line_chart_holds_its_titles_legend_and_a_dot_per_point() {
    let lines = [
        series("p50", &[(1.0, 2.0), (2.0, 3.0), (3.0, 2.5)], 0),
        series("p99", &[(1.0, 9.0), (2.0, 12.0)], 1),
    ];
    let svg = line_chart("Latency per epoch", "seconds", "milliseconds", &lines, None);
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    for text in ["Latency per epoch", "seconds", "milliseconds", "p50", "p99"] {
        assert!(svg.contains(&format!("\n{text}\n")), "no text {text:?} in {svg}");
    }
    assert_eq!(svg.matches("<circle").count(), 5);
    assert!(svg.contains(&format!("stroke=\"#{:02X}{:02X}{:02X}\"", 0x1f, 0x77, 0xb4)));
}

#[test]
fn named_x_positions_replace_the_numbers() {
    let labels: Vec<(f64, String)> =
        ["0%", "90%", "99%"].iter().enumerate().map(|(i, l)| (i as f64, l.to_string())).collect();
    let line = [series("latency", &[(0.0, 1.0), (1.0, 2.0), (2.0, 8.0)], 0)];
    let svg = line_chart("Latency by percentile", "percentile", "ms", &line, Some(&labels));
    for label in ["0%", "90%", "99%"] {
        assert!(svg.contains(&format!("\n{label}\n")), "no tick {label}");
    }
}

#[test]
fn text_is_escaped() {
    let line = [series("<a&b>", &[(1.0, 2.0)], 0)];
    let svg = line_chart("x < \"y\"", "x", "y", &line, None);
    assert!(svg.contains("&lt;a&amp;b&gt;") && svg.contains("x &lt; &quot;y&quot;"));
    assert!(!svg.contains("<a&b>"));
    let bars = bar_chart("a & b", &[("<node>".into(), 1.0)], "%");
    assert!(bars.contains("a &amp; b") && bars.contains("&lt;node&gt;"));
}

#[test]
fn degenerate_data_draws_an_empty_frame() {
    for svg in [
        line_chart("t", "x", "y", &[], None),
        line_chart(
            "t",
            "x",
            "y",
            &[series("s", &[(f64::NAN, 1.0), (1.0, f64::INFINITY)], 0)],
            None,
        ),
        line_chart("t", "x", "y", &[series("s", &[(3.0, 0.0)], 0)], None),
        bar_chart("t", &[], "%"),
        bar_chart("t", &[("a".into(), f64::NAN), ("b".into(), 0.0)], ""),
    ] {
        assert!(svg.trim_end().ends_with("</svg>"));
        assert!(!svg.contains("NaN") && !svg.contains("inf"), "{svg}");
    }
}

#[test]
fn a_bar_chart_has_a_bar_a_name_and_a_value_per_row() {
    let rows = [("node-1".to_string(), 60.0), ("node-2".to_string(), 30.0), ("n3".into(), 10.0)];
    let svg = bar_chart("Share of requests per node", &rows, "%");
    assert!(svg.contains("\nShare of requests per node\n"));
    for (name, value) in &rows {
        assert!(svg.contains(&format!("\n{name}\n")), "no bar name {name}");
        assert!(svg.contains(&format!("\n{value}%\n")), "no value {value}");
    }
    assert_eq!(svg.matches("fill=\"#4C78A8\"").count(), rows.len());
    // The longest bar is the first row, drawn at the top.
    let y_of = |name: &str| {
        let at = svg.find(&format!("\n{name}\n")).unwrap();
        let open = svg[..at].rfind("<text").unwrap();
        let y = &svg[open..at].split("y=\"").nth(1).unwrap();
        y[..y.find('"').unwrap()].parse::<f64>().unwrap()
    };
    assert!(y_of("node-1") < y_of("node-2") && y_of("node-2") < y_of("n3"));
}

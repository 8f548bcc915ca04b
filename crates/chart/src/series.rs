//! A named line of points and the colours lines get when the caller has no preference.

use plotters::style::RGBColor;

/// Distinct colours for lines drawn side by side (the "category10" set).
pub const PALETTE: [RGBColor; 8] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x17, 0xbe, 0xcf),
];

/// One line of a chart: its name in the legend, its colour and its `(x, y)` points in
/// drawing order. Points that are not finite are left out when drawn.
#[derive(Debug, Clone)]
pub struct Series<'a> {
    pub name: &'a str,
    pub color: RGBColor,
    pub points: Vec<(f64, f64)>,
}

impl Series<'_> {
    /// The points that can be drawn (both coordinates finite).
    pub(crate) fn finite_points(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.points.iter().copied().filter(|(x, y)| x.is_finite() && y.is_finite())
    }
}

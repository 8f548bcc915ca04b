//! `chart`: larder's pictures (line and bar charts) as self-contained SVG documents, so an
//! HTML report or a results directory needs no script, no network and no font files to
//! show them. Drawing, ticks, labels, legends and text escaping come from `plotters`.
//!
//! Map of the crate:
//! - `series.rs`: [`Series`], one named line of points, and the [`PALETTE`] of colours.
//! - `number.rs`: how a tick or a value is written (few digits, no `NaN`).
//! - `line.rs`: [`line_chart`], lines over a numeric x axis, y from zero.
//! - `ticked_axis.rs`: a numeric axis ticked where the chart says (named positions).
//! - `bar.rs`: [`bar_chart`], one horizontal bar per label, its value written beside it.
//! - `caption.rs`: how large a title is drawn so that it fits.

#![forbid(unsafe_code)]

mod bar;
mod caption;
mod line;
mod number;
mod series;
mod ticked_axis;

pub use bar::bar_chart;
pub use line::line_chart;
pub use series::{Series, PALETTE};

/// A colour (re-exported from plotters so callers need no dependency of their own).
pub use plotters::style::RGBColor;

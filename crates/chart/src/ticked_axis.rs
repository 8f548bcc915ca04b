//! A numeric axis whose ticks are given, so a chart can name chosen positions (e.g. the
//! percentiles of a log-scaled axis) or keep plotters' own round ticks.
//!
//! plotters' `with_key_points` does the same but leaves its axis without a default
//! label format, which its mesh requires; this one formats through the chart's closure.

use std::ops::Range;

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::types::RangedCoordf64;

/// `span` mapped linearly, ticked at `ticks` only.
pub(crate) struct TickedAxis {
    span: RangedCoordf64,
    ticks: Vec<f64>,
}

impl TickedAxis {
    /// Ticks where plotters would put them: round numbers, at most `count`.
    pub(crate) fn round(span: Range<f64>, count: usize) -> Self {
        let span = RangedCoordf64::from(span);
        let ticks = span.key_points(count);
        TickedAxis { span, ticks }
    }

    /// Ticks at the given positions that fall inside `span`.
    pub(crate) fn at(span: Range<f64>, ticks: impl IntoIterator<Item = f64>) -> Self {
        let ticks = ticks.into_iter().filter(|t| span.start <= *t && *t <= span.end).collect();
        TickedAxis { span: span.into(), ticks }
    }
}

impl Ranged for TickedAxis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.span.map(value, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        // Only the bold (labelled) ticks; no light grid between them.
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.span.range()
    }
}

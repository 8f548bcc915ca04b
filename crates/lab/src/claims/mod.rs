//! Every claim an experiment checks, in one place: the [`Claim`] type and its verdict
//! ([`claim`]), the claims read from the measured rows ([`rows`]: locality, classes,
//! origin, and the A/A controls beside them) and those read from the churn timelines
//! ([`churn`]). Each threshold is a named constant next to the claim that tests it, so a
//! number in a claim's line is the number the verdict used.

pub(crate) mod churn;
pub mod claim;
pub(crate) mod rows;

pub use claim::Claim;

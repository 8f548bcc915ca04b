//! Durations as people type them on a command line: `500ms`, `10s`, `2m`, `1h`, or `1.5`
//! (seconds).

use std::time::Duration;

use crate::error::BenchError;

/// Parse `text` as a non-negative duration; a bare number is seconds (the rules are
/// [`trace::parse_duration`]'s, which the workload specs use too).
pub fn parse_duration(text: &str) -> Result<Duration, BenchError> {
    trace::parse_duration(text).map_err(|_| BenchError::BadDuration { text: text.to_string() })
}

/// A per-request timeout as written: a duration, or `none` for waiting forever.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeout(pub Option<Duration>);

impl Timeout {
    /// `none`, or a duration as [`parse_duration`] reads it.
    pub fn parse(text: &str) -> Result<Timeout, BenchError> {
        if text == "none" {
            return Ok(Timeout(None));
        }
        parse_duration(text).map(|d| Timeout(Some(d)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_are_durations_or_none() {
        assert_eq!(Timeout::parse("none").unwrap(), Timeout(None));
        assert_eq!(Timeout::parse("2s").unwrap(), Timeout(Some(Duration::from_secs(2))));
        assert!(Timeout::parse("never").is_err());
    }

    #[test]
    fn units_and_bare_seconds() {
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("10s").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("1.5").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("1h").unwrap(), Duration::from_secs(3600));
    }

    #[test]
    fn rejects_garbage() {
        for text in ["", "s", "10x", "-1s", "1e999", "..s"] {
            assert!(parse_duration(text).is_err(), "{text:?} should be rejected");
        }
    }
}

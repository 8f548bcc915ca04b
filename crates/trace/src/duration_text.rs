//! Durations as people type them: `500ms`, `10s`, `2m`, `1h`, or `1.5` (seconds). Here so
//! the workload specs of this crate (a flash crowd's `at=10s`, a membership event's
//! `@20s`) and the load generator's flags read them one way.

use std::time::Duration;

/// Parse `text` as a non-negative duration; a bare number is seconds.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let bad = || format!("{text:?}: expected a duration such as 500ms, 10s, 2m or 1.5");
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: f64 = number.parse().map_err(|_| bad())?;
    let seconds = match unit.trim() {
        "ms" => value / 1000.0,
        "" | "s" => value,
        "m" | "min" => value * 60.0,
        "h" => value * 3600.0,
        _ => return Err(bad()),
    };
    Duration::try_from_secs_f64(seconds).map_err(|_| bad())
}

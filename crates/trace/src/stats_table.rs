//! A trace's statistics as a readable table, with sizes and spans in human units.

use crate::Stats;

/// `999 B`, `43.0 MB`: decimal units, one decimal.
pub fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    let mut value = b as f64;
    let mut unit = 0;
    while value >= 1000.0 && unit + 1 < UNITS.len() {
        value /= 1000.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{b} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// `1d 01h 01m 01s`.
fn human_duration(ms: u64) -> String {
    let s = ms / 1000;
    format!("{}d {:02}h {:02}m {:02}s", s / 86_400, s / 3600 % 24, s / 60 % 60, s % 60)
}

/// The statistics as `larder trace stats` prints them: one figure a line.
pub fn stats_table(s: &Stats) -> String {
    let mut t = String::new();
    let mut row = |k: &str, v: String| t.push_str(&format!("{k:<28} {v}\n"));
    row("lines read", s.lines.to_string());
    row("requests", s.requests.to_string());
    row("distinct targets", s.targets.to_string());
    row("data set", format!("{} ({} B)", human_bytes(s.dataset_bytes), s.dataset_bytes));
    row("bytes requested", format!("{} ({} B)", human_bytes(s.bytes_requested), s.bytes_requested));
    row("time span", human_duration(s.span_ms));
    row("users (client hosts)", s.users.to_string());
    row(&format!("sessions ({} min gap)", s.idle_gap_ms / 60_000), s.sessions.to_string());
    row("skipped lines", s.skipped_lines.to_string());
    for (reason, n) in &s.skipped_by_reason {
        row(&format!("  {reason}"), n.to_string());
    }
    t.push_str("ideal single cache covering:\n");
    for c in &s.coverage {
        t.push_str(&format!(
            "  {:>3}% of requests         {:>10}  ({} targets)\n",
            c.percent,
            human_bytes(c.cache_bytes),
            c.targets
        ));
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_units() {
        assert_eq!(human_bytes(999), "999 B");
        assert_eq!(human_bytes(43_000_000), "43.0 MB");
        assert_eq!(human_duration(90_061_000), "1d 01h 01m 01s");
    }
}

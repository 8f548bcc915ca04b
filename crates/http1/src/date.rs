//! HTTP dates (RFC 9110 §5.6.7): IMF-fixdate out, all three historic formats in.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Calendar time now lives with the other cross-process formats; re-exported because the
/// access logs and tests reach it through this crate.
pub use wire::civil::CivilTime;
use wire::civil::MONTHS;

const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const LONG_DAYS: [&str; 7] =
    ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

fn unix_secs(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_secs() as i64,
        Err(e) => -(e.duration().as_secs() as i64),
    }
}

/// Format as IMF-fixdate, e.g. `Sun, 06 Nov 1994 08:49:37 GMT` (always 29 bytes for years
/// 1000..=9999).
pub fn format_http_date(t: SystemTime) -> String {
    let c = CivilTime::from_unix(unix_secs(t));
    format!(
        "{}, {:02} {} {:04} {:02}:{:02}:{:02} GMT",
        DAYS[c.weekday as usize],
        c.day,
        c.month_abbrev(),
        c.year,
        c.hour,
        c.minute,
        c.second
    )
}

/// The input was not an HTTP date in any of the three formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not an HTTP date")]
pub struct DateError;

/// Parse an HTTP date: IMF-fixdate, or the obsolete RFC 850 and asctime formats that
/// RFC 9110 still requires recipients to accept.
pub fn parse_http_date(s: &str) -> Result<SystemTime, DateError> {
    let s = s.trim();
    let civil = parse_imf(s).or_else(|| parse_rfc850(s)).or_else(|| parse_asctime(s));
    let c = civil.ok_or(DateError)?;
    let secs = c.to_unix();
    if secs >= 0 {
        Ok(UNIX_EPOCH + Duration::from_secs(secs as u64))
    } else {
        Ok(UNIX_EPOCH - Duration::from_secs(secs.unsigned_abs()))
    }
}

fn month_number(s: &str) -> Option<u32> {
    MONTHS.iter().position(|m| *m == s).map(|i| i as u32 + 1)
}

fn num(s: &str, digits: usize) -> Option<u32> {
    (s.len() == digits && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.parse().ok())?
}

fn time_of_day(s: &str) -> Option<(u32, u32, u32)> {
    let mut it = s.split(':');
    let (h, m, sec) = (num(it.next()?, 2)?, num(it.next()?, 2)?, num(it.next()?, 2)?);
    (it.next().is_none() && h < 24 && m < 60 && sec <= 60).then_some((h, m, sec))
}

fn civil(year: i64, month: u32, day: u32, hms: (u32, u32, u32)) -> Option<CivilTime> {
    (1..=31).contains(&day).then_some(CivilTime {
        year,
        month,
        day,
        hour: hms.0,
        minute: hms.1,
        second: hms.2.min(59),
        weekday: 0,
    })
}

/// `Sun, 06 Nov 1994 08:49:37 GMT`
fn parse_imf(s: &str) -> Option<CivilTime> {
    let (wd, rest) = s.split_once(", ")?;
    if !DAYS.contains(&wd) {
        return None;
    }
    let p: Vec<&str> = rest.split(' ').collect();
    if p.len() != 5 || p[4] != "GMT" {
        return None;
    }
    civil(i64::from(num(p[2], 4)?), month_number(p[1])?, num(p[0], 2)?, time_of_day(p[3])?)
}

/// `Sunday, 06-Nov-94 08:49:37 GMT`
fn parse_rfc850(s: &str) -> Option<CivilTime> {
    let (wd, rest) = s.split_once(", ")?;
    if !LONG_DAYS.contains(&wd) {
        return None;
    }
    let p: Vec<&str> = rest.split(' ').collect();
    if p.len() != 3 || p[2] != "GMT" {
        return None;
    }
    let d: Vec<&str> = p[0].split('-').collect();
    if d.len() != 3 {
        return None;
    }
    let yy = i64::from(num(d[2], 2)?);
    // RFC 9110: a two-digit year more than 50 years ahead means the previous century.
    let year = if yy < 70 { 2000 + yy } else { 1900 + yy };
    civil(year, month_number(d[1])?, num(d[0], 2)?, time_of_day(p[1])?)
}

/// `Sun Nov  6 08:49:37 1994`
fn parse_asctime(s: &str) -> Option<CivilTime> {
    if s.len() != 24 || !DAYS.contains(&s.get(0..3)?) || s.get(3..4)? != " " {
        return None;
    }
    let month = month_number(s.get(4..7)?)?;
    let day = s.get(8..10)?.trim_start();
    let day = if day.len() == 1 { num(day, 1)? } else { num(day, 2)? };
    if s.get(7..8)? != " " || s.get(10..11)? != " " || s.get(19..20)? != " " {
        return None;
    }
    civil(i64::from(num(s.get(20..24)?, 4)?), month, day, time_of_day(s.get(11..19)?)?)
}

/// The formatted `Date` of the current second. Every response carries a Date; formatting it
/// once per second instead of once per response is what Flash's header cache did too.
#[derive(Debug, Default)]
pub struct DateCache {
    second: Option<i64>,
    text: String,
}

impl DateCache {
    pub fn new() -> Self {
        Self::default()
    }

    /// The IMF-fixdate of `now`, reformatted only when the second changes.
    pub fn get(&mut self, now: SystemTime) -> &str {
        let secs = unix_secs(now);
        if self.second != Some(secs) {
            self.second = Some(secs);
            self.text = format_http_date(now);
        }
        &self.text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs)
    }

    #[test]
    fn rfc_example() {
        assert_eq!(format_http_date(at(784_111_777)), "Sun, 06 Nov 1994 08:49:37 GMT");
        for s in [
            "Sun, 06 Nov 1994 08:49:37 GMT",
            "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 1994",
        ] {
            assert_eq!(parse_http_date(s), Ok(at(784_111_777)), "{s}");
        }
    }

    #[test]
    fn rejects_garbage() {
        for s in [
            "",
            "yesterday",
            "Sun, 06 Nov 1994 08:49:37 UTC",
            "Sun, 32 Nov 1994 08:49:37 GMT",
            "Sun, 06 Foo 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 25:49:37 GMT",
        ] {
            assert_eq!(parse_http_date(s), Err(DateError), "{s}");
        }
    }

    #[test]
    fn date_cache_follows_seconds() {
        let mut c = DateCache::new();
        assert_eq!(c.get(at(0)), "Thu, 01 Jan 1970 00:00:00 GMT");
        assert_eq!(c.get(at(0) + Duration::from_millis(999)), "Thu, 01 Jan 1970 00:00:00 GMT");
        assert_eq!(c.get(at(1)), "Thu, 01 Jan 1970 00:00:01 GMT");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
        #[test]
        fn round_trip(secs in 0u64..253_402_300_799) {
            let s = format_http_date(at(secs));
            proptest::prop_assert_eq!(s.len(), 29);
            proptest::prop_assert_eq!(parse_http_date(&s), Ok(at(secs)));
        }
    }
}

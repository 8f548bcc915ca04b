//! Calendar arithmetic on the proleptic Gregorian calendar, UTC, to the second.
//!
//! Hand-written (H. Hinnant's `days_from_civil` / `civil_from_days`) because a date crate
//! for two fixed formats would be the biggest dependency of the crates that need it.

/// Three-letter English month names, as HTTP dates and log timestamps spell them.
pub const MONTHS: [&str; 12] =
    ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/// Days since 1970-01-01 of year `y`, month `m` (1..=12), day `d` (1..=31).
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// (year, month 1..=12, day 1..=31) of a day count since 1970-01-01.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// Days in month `m` (1..=12) of year `y`.
pub fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// A UTC calendar time, to the second. HTTP dates and access logs format the same
/// instant differently, which is why it is public.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CivilTime {
    pub year: i64,
    /// 1..=12
    pub month: u32,
    /// 1..=31
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    /// 0 = Sunday.
    pub weekday: u32,
}

impl CivilTime {
    /// Seconds since the Unix epoch to calendar time.
    pub fn from_unix(secs: i64) -> CivilTime {
        let days = secs.div_euclid(86_400);
        let rem = secs.rem_euclid(86_400);
        let (year, month, day) = civil_from_days(days);
        CivilTime {
            year,
            month,
            day,
            hour: (rem / 3600) as u32,
            minute: (rem % 3600 / 60) as u32,
            second: (rem % 60) as u32,
            weekday: (days + 4).rem_euclid(7) as u32,
        }
    }

    /// Calendar time to seconds since the Unix epoch (the weekday is not consulted).
    pub fn to_unix(&self) -> i64 {
        days_from_civil(self.year, self.month, self.day) * 86_400
            + i64::from(self.hour) * 3600
            + i64::from(self.minute) * 60
            + i64::from(self.second)
    }

    /// Three-letter English month name.
    pub fn month_abbrev(&self) -> &'static str {
        MONTHS[(self.month as usize).clamp(1, 12) - 1]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_dates() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        let c = CivilTime::from_unix(784_111_777);
        assert_eq!((c.year, c.month, c.day, c.weekday), (1994, 11, 6, 0));
        assert_eq!((c.hour, c.minute, c.second, c.month_abbrev()), (8, 49, 37, "Nov"));
        assert_eq!(c.to_unix(), 784_111_777);
        assert_eq!(
            (days_in_month(1996, 2), days_in_month(1900, 2), days_in_month(2000, 2)),
            (29, 28, 29)
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]
        #[test]
        fn days_round_trip(days in -1_000_000i64..3_000_000) {
            let (y, m, d) = civil_from_days(days);
            proptest::prop_assert!((1..=12).contains(&m) && d >= 1 && d <= days_in_month(y, m));
            proptest::prop_assert_eq!(days_from_civil(y, m, d), days);
        }
    }
}

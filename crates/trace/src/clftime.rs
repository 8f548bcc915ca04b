//! The CLF timestamp `29/Aug/1995:23:53:25 -0400` to and from Unix epoch milliseconds.
//!
//! Hand-written (civil-from-days arithmetic, H. Hinnant) because a date crate for one
//! fixed format would be the biggest dependency of the crate.

const MONTHS: [&[u8; 3]; 12] = [
    b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec",
];

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// (year, month 1..=12, day 1..=31) of a day count since 1970-01-01.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
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

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

fn digits(b: &[u8]) -> Option<u32> {
    if b.is_empty() || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(b.iter().fold(0u32, |acc, &c| acc * 10 + u32::from(c - b'0')))
}

/// Parses the text between the brackets, e.g. `29/Aug/1995:23:53:25 -0400`, into epoch
/// milliseconds (UTC, the zone honoured). `None` for anything malformed or out of range;
/// years are limited to 1000..=9999 so the arithmetic can never overflow.
pub fn parse(s: &[u8]) -> Option<i64> {
    // dd/Mon/yyyy:HH:MM:SS +zzzz  (26 bytes exactly)
    if s.len() != 26 || s[2] != b'/' || s[6] != b'/' || s[11] != b':' || s[14] != b':' {
        return None;
    }
    if s[17] != b':' || s[20] != b' ' {
        return None;
    }
    let day = digits(&s[0..2])?;
    let month = MONTHS.iter().position(|m| m.eq_ignore_ascii_case(&s[3..6]))? as u32 + 1;
    let year = i64::from(digits(&s[7..11])?);
    let (hour, min, sec) = (digits(&s[12..14])?, digits(&s[15..17])?, digits(&s[18..20])?);
    let sign = match s[21] {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let (zh, zm) = (digits(&s[22..24])?, digits(&s[24..26])?);
    if !(1000..=9999).contains(&year) || day == 0 || day > days_in_month(year, month) {
        return None;
    }
    if hour > 23 || min > 59 || sec > 60 || zh > 23 || zm > 59 {
        return None;
    }
    let local =
        days_from_civil(year, month, day) * 86_400 + i64::from(hour * 3600 + min * 60 + sec);
    let offset = sign * i64::from(zh * 3600 + zm * 60);
    Some((local - offset) * 1000)
}

/// Formats epoch milliseconds as a CLF timestamp in UTC (`+0000`), whole seconds.
pub fn format(epoch_ms: i64) -> String {
    let secs = epoch_ms.div_euclid(1000);
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    let t = secs.rem_euclid(86_400);
    let month = std::str::from_utf8(MONTHS[(m - 1) as usize]).unwrap_or("Jan");
    format!("{d:02}/{month}/{y:04}:{:02}:{:02}:{:02} +0000", t / 3600, t / 60 % 60, t % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_with_zone() {
        // 1995-08-30T03:53:25Z
        assert_eq!(parse(b"29/Aug/1995:23:53:25 -0400"), Some(809_754_805_000));
        assert_eq!(parse(b"30/Aug/1995:03:53:25 +0000"), Some(809_754_805_000));
        assert_eq!(parse(b"17/May/2015:10:05:03 +0000"), Some(1_431_857_103_000));
        assert_eq!(parse(b"01/Jan/1970:01:00:00 +0100"), Some(0));
    }

    #[test]
    fn rejects_malformed() {
        for bad in [
            &b"29/Aug/1995:23:53:25"[..],
            b"29/Aug/1995:23:53:25 0400x",
            b"31/Feb/1995:23:53:25 -0400",
            b"29/Feb/1995:00:00:00 +0000",
            b"29/Foo/1995:23:53:25 -0400",
            b"29/Aug/1995:24:53:25 -0400",
            b"2a/Aug/1995:23:53:25 -0400",
            b"29/Aug/0999:23:53:25 -0400",
            b"",
        ] {
            assert_eq!(parse(bad), None, "{}", String::from_utf8_lossy(bad));
        }
        assert!(parse(b"29/Feb/1996:00:00:00 +0000").is_some());
    }

    #[test]
    fn format_round_trips() {
        for ms in [0i64, 809_754_805_000, 1_431_857_103_000, 951_782_400_000, 4_102_444_799_000] {
            assert_eq!(parse(format(ms).as_bytes()), Some(ms), "{}", format(ms));
        }
        assert_eq!(format(809_754_805_000), "30/Aug/1995:03:53:25 +0000");
    }
}

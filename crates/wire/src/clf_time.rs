//! The CLF timestamp `29/Aug/1995:23:53:25 -0400`: written in UTC (`+0000`) by every
//! access log and the synthetic log writer, parsed (any zone) by the trace loader.

use crate::civil::{civil_from_days, days_from_civil, days_in_month, MONTHS};
use std::io::Write as _;

/// Length of a timestamp between the brackets.
pub const LEN: usize = 26;

fn push_two(out: &mut Vec<u8>, n: u32) {
    out.push(b'0' + (n / 10 % 10) as u8);
    out.push(b'0' + (n % 10) as u8);
}

/// Append `dd/Mon/yyyy:HH:MM:SS +0000` for `unix_secs` (UTC, whole seconds).
pub fn write(unix_secs: i64, out: &mut Vec<u8>) {
    let (y, m, d) = civil_from_days(unix_secs.div_euclid(86_400));
    let t = unix_secs.rem_euclid(86_400) as u32;
    push_two(out, d);
    out.push(b'/');
    out.extend_from_slice(MONTHS[(m - 1) as usize].as_bytes());
    out.push(b'/');
    if (0..=9999).contains(&y) {
        push_two(out, (y / 100) as u32);
        push_two(out, (y % 100) as u32);
    } else {
        // Writing into a Vec cannot fail.
        let _ = write!(out, "{y:04}");
    }
    for (sep, n) in [(b':', t / 3600), (b':', t / 60 % 60), (b':', t % 60)] {
        out.push(sep);
        push_two(out, n);
    }
    out.extend_from_slice(b" +0000");
}

/// [`write()`] for epoch milliseconds, as a `String` (sub-second parts are dropped).
pub fn format_ms(epoch_ms: i64) -> String {
    let mut out = Vec::with_capacity(LEN);
    write(epoch_ms.div_euclid(1000), &mut out);
    String::from_utf8(out).unwrap_or_default()
}

fn digits(b: &[u8]) -> Option<u32> {
    if b.is_empty() || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(b.iter().fold(0u32, |acc, &c| acc * 10 + u32::from(c - b'0')))
}

/// Parses the text between the brackets, e.g. `29/Aug/1995:23:53:25 -0400`, into epoch
/// milliseconds (UTC, the zone honoured; month names in any case). `None` for anything
/// malformed or out of range; years are limited to 1000..=9999 so the arithmetic can
/// never overflow.
pub fn parse(s: &[u8]) -> Option<i64> {
    // dd/Mon/yyyy:HH:MM:SS +zzzz  (26 bytes exactly)
    if s.len() != LEN || s[2] != b'/' || s[6] != b'/' || s[11] != b':' || s[14] != b':' {
        return None;
    }
    if s[17] != b':' || s[20] != b' ' {
        return None;
    }
    let day = digits(&s[0..2])?;
    let month = MONTHS.iter().position(|m| m.as_bytes().eq_ignore_ascii_case(&s[3..6]))? as u32 + 1;
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
        assert_eq!(parse(b"30/AUG/1995:03:53:25 +0000"), Some(809_754_805_000));
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
            assert_eq!(parse(format_ms(ms).as_bytes()), Some(ms), "{}", format_ms(ms));
        }
        assert_eq!(format_ms(809_754_805_000), "30/Aug/1995:03:53:25 +0000");
        assert_eq!(format_ms(784_111_777_999), "06/Nov/1994:08:49:37 +0000");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
        /// The hand-rolled digits match what `format!` writes.
        #[test]
        fn matches_format(secs in -100_000_000_000i64..300_000_000_000) {
            let c = crate::CivilTime::from_unix(secs);
            let want = format!(
                "{:02}/{}/{:04}:{:02}:{:02}:{:02} +0000",
                c.day, c.month_abbrev(), c.year, c.hour, c.minute, c.second
            );
            let mut got = Vec::new();
            write(secs, &mut got);
            proptest::prop_assert_eq!(String::from_utf8(got).unwrap(), want);
        }
    }
}

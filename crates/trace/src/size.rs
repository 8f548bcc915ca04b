//! Byte sizes written by people: `8KB`, `1.4MiB`, `64MB`, `512`.

/// Parses a size: a number (decimals allowed) and an optional unit. `K`/`KB`, `M`/`MB`,
/// `G`/`GB` are decimal (1000ⁿ, as disks and networks count); `KiB`, `MiB`, `GiB` are
/// binary (1024ⁿ); `B` or no unit is bytes. Case-insensitive. The result is rounded to
/// whole bytes.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    let (number, unit) = (&s[..split], s[split..].trim());
    let value: f64 = number.parse().map_err(|_| format!("{s:?}: expected a number and a unit"))?;
    let scale = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" => 1e3,
        "m" | "mb" => 1e6,
        "g" | "gb" => 1e9,
        "t" | "tb" => 1e12,
        "kib" => 1024.0,
        "mib" => 1024.0 * 1024.0,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        "tib" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => {
            return Err(format!("{s:?}: unknown unit {unit:?} (use B, KB, MB, GB, KiB, MiB, GiB)"))
        }
    };
    let bytes = (value * scale).round();
    if !bytes.is_finite() || bytes >= u64::MAX as f64 {
        return Err(format!("{s:?}: too large"));
    }
    Ok(bytes as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(parse_size("512"), Ok(512));
        assert_eq!(parse_size("8KB"), Ok(8000));
        assert_eq!(parse_size("8 KiB"), Ok(8192));
        assert_eq!(parse_size("64mb"), Ok(64_000_000));
        assert_eq!(parse_size("1.4MiB"), Ok(1_468_006));
        assert_eq!(parse_size("2G"), Ok(2_000_000_000));
        for bad in ["", "MB", "1.2.3KB", "5 parsecs", "-1", "1e400", "99999999999TB"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
    }
}

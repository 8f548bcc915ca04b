//! Status ranges as people write them (`304`, `200-299`), for choosing which log lines
//! become requests ([`crate::LoadOptions::statuses`]); refused with the reason, so a typo
//! in a filter never silently drops every line.

/// Why a status range was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{text:?}: {reason}")]
pub struct StatusRangeError {
    pub text: String,
    pub reason: &'static str,
}

/// `304` → (304, 304), `200-299` → (200, 299); every status in 100..=599.
pub fn parse_status_range(s: &str) -> Result<(u16, u16), StatusRangeError> {
    let code = |c: &str| -> Result<u16, StatusRangeError> {
        c.trim().parse::<u16>().ok().filter(|c| (100..=599).contains(c)).ok_or_else(|| {
            StatusRangeError { text: c.to_string(), reason: "a status is a number in 100..=599" }
        })
    };
    let (lo, hi) = match s.split_once('-') {
        Some((lo, hi)) => (code(lo)?, code(hi)?),
        None => (code(s)?, code(s)?),
    };
    if lo > hi {
        return Err(StatusRangeError { text: s.to_string(), reason: "empty range" });
    }
    Ok((lo, hi))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_ranges() {
        assert_eq!(parse_status_range("304"), Ok((304, 304)));
        assert_eq!(parse_status_range("200-299"), Ok((200, 299)));
        for bad in ["299-200", "abc", "99", "200-", "600"] {
            assert!(parse_status_range(bad).is_err(), "{bad}");
        }
    }
}

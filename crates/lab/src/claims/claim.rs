//! One claim of an experiment: the line it prints ("dynamic-uniform, keep-alive: lard-r/wrr
//! throughput 2.31x (>= 2: holds)") kept apart from whether it held, so a reporter or a
//! test reads the verdict without parsing the words.

use std::fmt;

/// One line of an experiment's claims: `group` is what it is about (a workload and
/// connection mode, a churn scenario), `text` the figures with their verdicts.
#[derive(Clone, Debug, PartialEq)]
pub struct Claim {
    pub group: String,
    pub text: String,
    /// Whether every threshold in `text` held; None for a figure reported without one
    /// (an A/A control's noise).
    pub holds: Option<bool>,
}

impl Claim {
    /// A claim tested by `checks` (each one's verdict is already written into `text`
    /// with `verdict`): it holds when all of them do.
    pub fn checked(group: impl Into<String>, text: String, checks: &[bool]) -> Claim {
        Claim { group: group.into(), text, holds: Some(checks.iter().all(|&ok| ok)) }
    }

    /// A figure beside the claims that tests no threshold.
    pub fn observed(group: impl Into<String>, text: String) -> Claim {
        Claim { group: group.into(), text, holds: None }
    }
}

impl fmt::Display for Claim {
    /// The line as printed and written to `table.md`: "group: text".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.group, self.text)
    }
}

/// The one word every claim's line gives a threshold's outcome in.
pub fn verdict(ok: bool) -> &'static str {
    if ok {
        "holds"
    } else {
        "FAILS"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_holds_when_every_check_does() {
        let c = Claim::checked("g", format!("x ({})", verdict(true)), &[true, false]);
        assert_eq!(c.to_string(), "g: x (holds)");
        assert_eq!(c.holds, Some(false));
        assert_eq!(Claim::observed("g", "noise".into()).holds, None);
    }
}

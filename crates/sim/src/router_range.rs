//! How many front-ends (routers) a simulated cluster may have, and the counts a sweep runs.
//! Its own type (not a [`crate::NodeRange`]) so that errors name routers and the bound
//! is the routers' own.

use std::str::FromStr;

use crate::node_range::parse_counts;
use crate::SimError;

/// Most front-ends accepted: each keeps a policy and a load view of every node, so the
/// memory of a run grows as routers × nodes.
pub const MAX_ROUTERS: usize = 1024;

/// Front-end counts to run, in `--nodes`' syntax: `4`, `1..16`, `1..64:4`, `1,2,4,16,64`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RouterRange(pub Vec<usize>);

impl FromStr for RouterRange {
    type Err = SimError;
    fn from_str(s: &str) -> Result<Self, SimError> {
        parse_counts(s, "router", MAX_ROUTERS).map(RouterRange)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn router_ranges() {
        let p = |s: &str| s.parse::<RouterRange>().map(|r| r.0);
        assert_eq!(p("1").unwrap(), vec![1]);
        assert_eq!(p("1,2,4,16,64").unwrap(), vec![1, 2, 4, 16, 64]);
        assert_eq!(p("1..3").unwrap(), vec![1, 2, 3]);
        let err = p("2000").unwrap_err().to_string();
        assert!(err.contains("router counts must be in 1..=1024"), "{err}");
        for bad in ["", "0", "3..1", "x"] {
            assert!(p(bad).is_err(), "{bad:?} should be refused");
        }
    }
}

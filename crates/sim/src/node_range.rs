//! How many nodes a simulated cluster may have, and the cluster sizes a sweep runs.

use std::str::FromStr;

use crate::SimError;

/// Highest cluster size accepted, so a typo cannot ask for a billion nodes.
pub const MAX_NODES: usize = 100_000;

/// Cluster sizes to run: `8`, `1..16` (inclusive, as the paper's x axis), `1..=16`,
/// `1..64:4` (every 4th), or a list `1,2,4,8`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeRange(pub Vec<usize>);

impl FromStr for NodeRange {
    type Err = SimError;
    fn from_str(s: &str) -> Result<Self, SimError> {
        parse_counts(s, "node", MAX_NODES).map(NodeRange)
    }
}

/// Counts of `what` (e.g. "node") in `1..=max`, written as `8`, `1..16`, `1..=16`, `1..64:4`
/// or `1,2,4,8`: the one syntax of every swept count.
pub(crate) fn parse_counts(s: &str, what: &str, max: usize) -> Result<Vec<usize>, SimError> {
    let bad = || {
        SimError::Config(format!(
            "{s:?}: expected a {what} count, a range like 1..16 or 1..64:4, or a list like 1,2,4"
        ))
    };
    let num = |t: &str| -> Result<usize, SimError> {
        let n: usize = t.trim().parse().map_err(|_| bad())?;
        if n == 0 || n > max {
            return Err(SimError::Config(format!("{what} counts must be in 1..={max}")));
        }
        Ok(n)
    };
    let counts: Vec<usize> = if let Some((from, rest)) = s.split_once("..") {
        let rest = rest.strip_prefix('=').unwrap_or(rest);
        let (to, step) = match rest.split_once(':') {
            Some((to, step)) => (to, num(step)?),
            None => (rest, 1),
        };
        let (from, to) = (num(from)?, num(to)?);
        if from > to {
            return Err(bad());
        }
        (from..=to).step_by(step).collect()
    } else {
        s.split(',').map(num).collect::<Result<_, _>>()?
    };
    if counts.is_empty() {
        return Err(bad());
    }
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_ranges() {
        let p = |s: &str| s.parse::<NodeRange>().map(|r| r.0);
        assert_eq!(p("8").unwrap(), vec![8]);
        assert_eq!(p("1..4").unwrap(), vec![1, 2, 3, 4]);
        assert_eq!(p("1..=3").unwrap(), vec![1, 2, 3]);
        assert_eq!(p("1..9:4").unwrap(), vec![1, 5, 9]);
        assert_eq!(p("1, 2,16").unwrap(), vec![1, 2, 16]);
        for bad in ["", "0", "4..2", "a..3", "1..3:0", "1,,2", "999999999"] {
            assert!(p(bad).is_err(), "{bad:?} should be refused");
        }
    }
}

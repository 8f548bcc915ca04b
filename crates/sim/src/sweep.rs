//! Runs over several cluster sizes and policies, as the LARD paper's figures do.

use std::str::FromStr;
use std::time::{Duration, Instant};

use policy::PolicySpec;

use crate::{RunResult, SimConfig, SimError, Simulator, MAX_NODES};

/// Cluster sizes to run: `8`, `1..16` (inclusive, as the paper's x axis), `1..=16`,
/// `1..64:4` (every 4th), or a list `1,2,4,8`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeRange(pub Vec<usize>);

impl FromStr for NodeRange {
    type Err = SimError;
    fn from_str(s: &str) -> Result<Self, SimError> {
        let bad = || {
            SimError::Config(format!(
                "{s:?}: expected a node count, a range like 1..16 or 1..64:4, or a list like 1,2,4"
            ))
        };
        let num = |t: &str| -> Result<usize, SimError> {
            let n: usize = t.trim().parse().map_err(|_| bad())?;
            if n == 0 || n > MAX_NODES {
                return Err(SimError::Config(format!("node counts must be in 1..={MAX_NODES}")));
            }
            Ok(n)
        };
        let nodes: Vec<usize> = if let Some((from, rest)) = s.split_once("..") {
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
        if nodes.is_empty() {
            return Err(bad());
        }
        Ok(NodeRange(nodes))
    }
}

/// Runs every policy at every cluster size (sizes outer, policies inner), each from
/// `base` with `nodes` and `policy` replaced; `each` hears every result and its wall
/// time as it comes. A per-node cache list in `base` fits only its own cluster size:
/// any other size is refused.
pub fn sweep(
    sim: &mut Simulator<'_>,
    base: &SimConfig,
    nodes: &[usize],
    policies: &[PolicySpec],
    mut each: impl FnMut(&RunResult, Duration),
) -> Result<Vec<RunResult>, SimError> {
    let mut results = Vec::with_capacity(nodes.len() * policies.len());
    for &n in nodes {
        for spec in policies {
            let config = SimConfig { nodes: n, policy: spec.clone(), ..base.clone() };
            let started = Instant::now();
            let result = sim.run(&config)?;
            each(&result, started.elapsed());
            results.push(result);
        }
    }
    Ok(results)
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

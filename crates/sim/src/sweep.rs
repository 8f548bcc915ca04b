//! Runs over several cluster sizes and policies, as the LARD paper's figures do.

use std::time::{Duration, Instant};

use policy::PolicySpec;

use crate::{RunResult, SimConfig, SimError, Simulator};

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

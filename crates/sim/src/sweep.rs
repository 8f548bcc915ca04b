//! Runs over several cluster sizes, front-end counts and policies, as the LARD paper's
//! figures do.

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
    each: impl FnMut(&RunResult, Duration),
) -> Result<Vec<RunResult>, SimError> {
    sweep_routers(sim, base, nodes, &[base.routers], policies, each)
}

/// [`sweep`] with the number of front-ends swept too: sizes outer, then front-end
/// counts, then policies.
pub fn sweep_routers(
    sim: &mut Simulator<'_>,
    base: &SimConfig,
    nodes: &[usize],
    routers: &[usize],
    policies: &[PolicySpec],
    mut each: impl FnMut(&RunResult, Duration),
) -> Result<Vec<RunResult>, SimError> {
    let mut results = Vec::with_capacity(nodes.len() * routers.len() * policies.len());
    for &n in nodes {
        for &r in routers {
            for spec in policies {
                let config =
                    SimConfig { nodes: n, routers: r, policy: spec.clone(), ..base.clone() };
                let started = Instant::now();
                let result = sim.run(&config)?;
                each(&result, started.elapsed());
                results.push(result);
            }
        }
    }
    Ok(results)
}

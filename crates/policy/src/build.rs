//! The one place that turns a [`PolicySpec`] into a running [`Policy`]: it knows every
//! policy, so no policy needs to know it (`class` is handed this function to build its
//! pools' inner policies).

use crate::spec::{PolicyKind, PolicySpec, SpecError};
use crate::Policy;

/// Make the policy a spec describes. Call [`Policy::membership`] before the first pick.
pub fn build(spec: &PolicySpec) -> Result<Box<dyn Policy>, SpecError> {
    spec.validate()?;
    Ok(match spec.kind {
        PolicyKind::Rr => Box::new(crate::rr::RoundRobin::from_spec(spec)),
        PolicyKind::Wrr => Box::new(crate::wrr::WeightedRoundRobin::from_spec(spec)),
        PolicyKind::Least => Box::new(crate::least::LeastLoaded::from_spec(spec)),
        PolicyKind::Hash => Box::new(crate::hash::ConsistentHash::from_spec(spec)),
        PolicyKind::Bounded => Box::new(crate::bounded::BoundedLoadHash::from_spec(spec)),
        PolicyKind::Lard => Box::new(crate::lard::Lard::from_spec(spec)),
        PolicyKind::LardR => Box::new(crate::lard_r::LardR::from_spec(spec)),
        PolicyKind::Hacc => Box::new(crate::hacc::Hacc::from_spec(spec)),
        PolicyKind::Class => Box::new(crate::class::Class::from_spec(spec, build)?),
    })
}

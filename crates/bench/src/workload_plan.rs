//! A replayed or generated workload (`trace`) turned into what the users send: per-user
//! sessions with their think times, or one flat stream, at the workload's paths or at the
//! URLs where a static server rooted at a `larder trace docroot` directory serves them.
//! Here rather than in the binary so `bench` and `bench compare` build plans one way.

use trace::{sessions, Workload};

use crate::{BaseUrl, BenchError, Plan};

/// How a workload's requests become users.
#[derive(Clone, Debug)]
pub struct PlanShape {
    /// One stream shared by all users, without sessions or think times.
    pub flat: bool,
    /// Factor on recorded think times (0: sessions without thinking).
    pub think_scale: f64,
    /// Idle minutes after which a user's next request starts a new session.
    pub idle_gap_min: u64,
    /// Send each target at the URL a static server gives its docroot file.
    pub docroot_urls: bool,
}

impl PlanShape {
    /// The plan for `workload`, every path sent under `base`.
    pub fn plan(&self, workload: &Workload, base: &BaseUrl) -> Result<Plan, BenchError> {
        let paths = workload
            .targets
            .iter()
            .map(|t| {
                let path = if self.docroot_urls {
                    trace::served_url(&t.path).map_err(|e| BenchError::Target {
                        target: t.path.clone(),
                        reason: format!("{e:?}"),
                    })?
                } else {
                    t.path.clone()
                };
                Ok(base.join(&path))
            })
            .collect::<Result<Vec<_>, BenchError>>()?;
        if self.flat {
            return Plan::flat(paths, workload.requests.iter().map(|r| r.target));
        }
        let users = sessions(workload, self.idle_gap_min.saturating_mul(60_000));
        let scripts = users.iter().map(|s| s.requests.iter().map(|r| (r.target, r.think_ms)));
        Plan::sessions(paths, scripts, self.think_scale)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trace::{generate, SynthConfig};

    #[test]
    fn flat_and_session_plans_send_every_request() {
        let config = SynthConfig { docs: 20, requests: 200, users: 5, ..SynthConfig::default() };
        let workload = generate(&config).unwrap();
        let base = BaseUrl::parse("http://127.0.0.1:1/").unwrap();
        let shape =
            PlanShape { flat: true, think_scale: 1.0, idle_gap_min: 30, docroot_urls: false };
        let targets = workload.targets.len();
        assert_eq!(shape.plan(&workload, &base).unwrap().paths.len(), targets);
        let sessions = PlanShape { flat: false, docroot_urls: true, ..shape };
        let plan = sessions.plan(&workload, &base).unwrap();
        assert!(plan.paths.iter().all(|p| p.starts_with('/')), "{:?}", plan.paths);
    }
}

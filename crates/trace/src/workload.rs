//! A workload in compact form: distinct targets once, requests as indices into them.
//!
//! This is what the simulator replays and the load generator sends: parsing a log or
//! generating a synthetic stream both end here.

/// One distinct target of a workload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TargetInfo {
    /// The request path as logged or generated (with its query string, if any).
    pub path: String,
    /// Response size in bytes (the largest seen for this target in a log).
    pub size: u64,
}

/// One request of a workload.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct WorkRequest {
    /// Index into [`Workload::targets`].
    pub target: u32,
    /// Dense id of the client (user) that sent it.
    pub client: u32,
    /// Milliseconds since the first request of the workload.
    pub time_ms: u64,
}

/// Targets and the requests for them, in log order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Workload {
    pub targets: Vec<TargetInfo>,
    pub requests: Vec<WorkRequest>,
}

impl Workload {
    /// Sum of all target sizes: the data set a cluster's memory must hold.
    pub fn dataset_bytes(&self) -> u64 {
        self.targets.iter().map(|t| t.size).sum()
    }
}

impl Workload {
    /// The form a log of this workload loads back as: only requested targets, targets and
    /// clients numbered in order of first request, times relative to the earliest.
    /// Two workloads that would write the same log have the same canonical form.
    pub fn canonical(&self) -> Workload {
        let mut target_ids = vec![u32::MAX; self.targets.len()];
        let mut client_ids = std::collections::HashMap::new();
        let mut out = Workload::default();
        let earliest = self.requests.iter().map(|r| r.time_ms).min().unwrap_or(0);
        for r in &self.requests {
            let slot = &mut target_ids[r.target as usize];
            if *slot == u32::MAX {
                *slot = out.targets.len() as u32;
                out.targets.push(self.targets[r.target as usize].clone());
            }
            let next = client_ids.len() as u32;
            let client = *client_ids.entry(r.client).or_insert(next);
            out.requests.push(WorkRequest { target: *slot, client, time_ms: r.time_ms - earliest });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_renumbers_and_drops_unrequested() {
        let w = Workload {
            targets: vec![
                TargetInfo { path: "/a".into(), size: 1 },
                TargetInfo { path: "/b".into(), size: 2 },
                TargetInfo { path: "/c".into(), size: 3 },
            ],
            requests: vec![
                WorkRequest { target: 2, client: 7, time_ms: 10 },
                WorkRequest { target: 0, client: 3, time_ms: 12 },
                WorkRequest { target: 2, client: 7, time_ms: 15 },
            ],
        };
        let c = w.canonical();
        assert_eq!(c.targets.iter().map(|t| t.size).collect::<Vec<_>>(), vec![3, 1]);
        let reqs: Vec<_> = c.requests.iter().map(|r| (r.target, r.client, r.time_ms)).collect();
        assert_eq!(reqs, vec![(0, 0, 0), (1, 1, 2), (0, 0, 5)]);
        assert_eq!(c.canonical(), c);
        assert_eq!(w.dataset_bytes(), 6);
    }
}

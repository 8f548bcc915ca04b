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

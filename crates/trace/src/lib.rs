//! Access logs and synthetic workloads for larder.

pub mod workload;

pub use workload::{TargetInfo, WorkRequest, Workload};

//! What a node's load report (`GET /.larder/load`, JSON) says about its cache and disk:
//! the one place the lab reads it.

use std::net::SocketAddr;

use crate::error::{Context, LabError, Result};
use crate::probe;

/// Cumulative counters of one node's load report.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NodeCounters {
    /// Requests the node answered.
    pub requests: u64,
    pub hits: u64,
    pub misses: u64,
    pub disk_read_bytes: u64,
    /// Requests sent to origins, and the response bytes received from them.
    pub origin_fetches: u64,
    pub origin_bytes: u64,
}

impl NodeCounters {
    /// What happened between `earlier` and `self`.
    pub fn since(&self, earlier: &NodeCounters) -> NodeCounters {
        NodeCounters {
            requests: self.requests.saturating_sub(earlier.requests),
            hits: self.hits.saturating_sub(earlier.hits),
            misses: self.misses.saturating_sub(earlier.misses),
            disk_read_bytes: self.disk_read_bytes.saturating_sub(earlier.disk_read_bytes),
            origin_fetches: self.origin_fetches.saturating_sub(earlier.origin_fetches),
            origin_bytes: self.origin_bytes.saturating_sub(earlier.origin_bytes),
        }
    }
}

/// Fetches and reads the load report of the node at `addr`.
pub fn read(addr: SocketAddr) -> Result<NodeCounters> {
    let (code, body) = probe::fetch(addr, wire::LOAD_REPORT_PATH)?;
    if code != 200 {
        return Err(LabError::Child(format!("load report answered {code}")));
    }
    let report = wire::LoadReport::parse(&body).context("load report")?;
    Ok(NodeCounters {
        requests: report.requests,
        hits: report.hits,
        misses: report.misses,
        disk_read_bytes: report.disk_read_bytes,
        origin_fetches: report.origin_fetches,
        origin_bytes: report.origin_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_subtract() {
        let a = NodeCounters {
            requests: 15,
            hits: 10,
            misses: 5,
            disk_read_bytes: 100,
            origin_fetches: 5,
            origin_bytes: 80,
        };
        let b = NodeCounters {
            requests: 31,
            hits: 25,
            misses: 6,
            disk_read_bytes: 100,
            origin_fetches: 6,
            origin_bytes: 96,
        };
        let d = NodeCounters {
            requests: 16,
            hits: 15,
            misses: 1,
            disk_read_bytes: 0,
            origin_fetches: 1,
            origin_bytes: 16,
        };
        assert_eq!(b.since(&a), d);
        assert_eq!(a.since(&b), NodeCounters::default());
    }
}

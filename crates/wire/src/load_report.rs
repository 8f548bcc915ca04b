//! The load report: the JSON a node serves at its load path (`/.larder/load`), polled by
//! the router's load monitor (HACC's 200 ms poll) and read by the experiment runner.
//!
//! Flat, numbers only. Every field defaults when missing, so reports from other servers
//! carrying only `cpu_pct` and `disk_pct` (percent of a saturated disk) read too; larder's
//! node reports its disk as `disk_read_bytes_per_sec` instead, which
//! [`LoadReport::disk_pct`] turns into a percentage.

use serde::{Deserialize, Serialize, Serializer};

/// Where a larder node serves its load report unless told otherwise, and where the
/// router and the experiments look for it.
pub const LOAD_REPORT_PATH: &str = "/.larder/load";

/// One snapshot of a node's load.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LoadReport {
    /// Requests being answered, the report request itself included.
    pub in_flight: u64,
    pub open_connections: u64,
    /// Process CPU in percent of one core (may exceed 100 with helper threads).
    #[serde(serialize_with = "two_decimals")]
    pub cpu_pct: f64,
    #[serde(serialize_with = "whole")]
    pub disk_read_bytes_per_sec: f64,
    /// Bytes read from storage so far (page-cache hits do not count).
    pub disk_read_bytes: u64,
    pub cache_bytes: u64,
    pub cache_capacity_bytes: u64,
    /// Objects the cache holds (0: not said): with `cache_bytes`, the mean object's size,
    /// which tells a peer how many copies of hot objects a share of its cache fits.
    #[serde(default)]
    pub cache_objects: u64,
    pub hits: u64,
    pub misses: u64,
    pub requests: u64,
    /// Jobs queued or running on helper threads.
    pub helper_queue: u64,
    /// Bytes of misses being read from storage now (file bodies being read in or
    /// streamed): a node stalled behind one long read answers few requests yet is busy,
    /// and shared placement counts these bytes as load.
    #[serde(default)]
    pub miss_bytes_reading: u64,
    /// Disk utilisation in percent, as other servers may report it (larder's node does not).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disk_pct: Option<f64>,
    /// What the node's cache holds, by the targets routers named
    /// ([`crate::TargetHint`]); absent from servers that do not say.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub holdings: Option<crate::TargetDigest>,
    /// Requests a caching node sent to its origins (revalidations included): what its
    /// misses cost.
    #[serde(default)]
    pub origin_fetches: u64,
    /// Response bytes received from origins.
    #[serde(default)]
    pub origin_bytes: u64,
    /// Origin fetches that failed (unreachable, timed out, broken, or a 5xx a stale copy
    /// stood in for).
    #[serde(default)]
    pub origin_errors: u64,
    /// Misses a caching node filled from a peer node instead of from an origin.
    #[serde(default)]
    pub peer_fills: u64,
    /// Misses whose peer failed, refused or was too slow, filled from an origin instead.
    #[serde(default)]
    pub peer_fill_failures: u64,
    /// Slices of large objects a caching node served from its own store.
    #[serde(default)]
    pub slices_from_cache: u64,
    /// Slices of large objects fetched from an origin.
    #[serde(default)]
    pub slices_from_origin: u64,
    /// Slices of large objects fetched from the node that owns them.
    #[serde(default)]
    pub slices_from_peers: u64,
    /// Milliseconds since the node started (0: not said). Routers see a restart when it
    /// goes back, and let a node that joined or restarted warm up.
    #[serde(default)]
    pub uptime_ms: u64,
    /// The Unix socket on which the node adopts client connections a router on the same
    /// host hands it ([`crate::Handoff`]); absent when it takes none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub handoff_socket: Option<String>,
    /// Later requests on adopted connections answered with the response of the node they
    /// belong to (back-end forwarding).
    #[serde(default)]
    pub forwarded: u64,
    /// Forwards that failed (the other node unreachable, too slow, a server error or a
    /// response cut short): served by the node that held the connection.
    #[serde(default)]
    pub forward_failures: u64,
    /// Routers (and distributors) that polled this report lately, each counted once by
    /// the id it names ([`crate::PollerId`]); 0: not said (other servers). A router that
    /// reads 1 from its nodes is alone, and has no placement to agree with.
    #[serde(default)]
    pub routers: u64,
}

/// Rates are estimates: two decimals are all the precision they have. A non-finite
/// value (never expected) is written as 0 so the report stays valid JSON for every reader.
fn rounded<S: Serializer>(v: f64, scale: f64, s: S) -> Result<S::Ok, S::Error> {
    let v = if v.is_finite() { (v * scale).round() / scale } else { 0.0 };
    s.serialize_f64(v)
}

fn two_decimals<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    rounded(*v, 100.0, s)
}

fn whole<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    rounded(*v, 1.0, s)
}

impl LoadReport {
    /// The report as served: one JSON object and a newline.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string(self).unwrap_or_else(|_| "{}".to_string());
        s.push('\n');
        s
    }

    /// Read a report body; fields it lacks are 0.
    pub fn parse(body: &[u8]) -> Result<LoadReport, serde_json::Error> {
        serde_json::from_slice(body)
    }

    /// Disk utilisation in percent: `disk_pct` when the server reports it, otherwise the
    /// read rate as a share of `disk_full_bytes_per_sec` (the rate that counts as a
    /// saturated disk; 0 when that is not positive).
    pub fn disk_pct(&self, disk_full_bytes_per_sec: f64) -> f64 {
        match self.disk_pct {
            Some(pct) => pct,
            None if disk_full_bytes_per_sec > 0.0 => {
                100.0 * self.disk_read_bytes_per_sec / disk_full_bytes_per_sec
            }
            None => 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_with_sensible_numbers() {
        let r = LoadReport {
            requests: 7,
            cpu_pct: 12.5,
            disk_read_bytes_per_sec: 1234.6,
            ..Default::default()
        };
        let j = r.to_json();
        assert!(j.ends_with("}\n") && !j.contains("disk_pct"), "{j}");
        let v: serde_json::Value = serde_json::from_str(&j).unwrap();
        assert_eq!((v["requests"].as_u64(), v["cpu_pct"].as_f64()), (Some(7), Some(12.5)));
        assert_eq!(v["disk_read_bytes_per_sec"].as_f64(), Some(1235.0));
        let third = LoadReport { cpu_pct: 100.0 / 3.0, ..Default::default() }.to_json();
        assert!(third.contains("\"cpu_pct\":33.33,"), "{third}");
        assert_eq!(LoadReport::parse(j.as_bytes()).unwrap().requests, 7);
        let polled = LoadReport { routers: 2, ..Default::default() }.to_json();
        assert_eq!(LoadReport::parse(polled.as_bytes()).unwrap().routers, 2);
    }

    #[test]
    fn foreign_reports_read_with_defaults() {
        let r = LoadReport::parse(br#"{"cpu_pct": 40, "disk_pct": 2.5, "other": "x"}"#).unwrap();
        assert_eq!((r.cpu_pct, r.disk_pct(1e8), r.requests, r.routers), (40.0, 2.5, 0, 0));
        let node =
            LoadReport::parse(br#"{"cpu_pct":10.00,"disk_read_bytes_per_sec":5e7}"#).unwrap();
        assert_eq!((node.disk_pct(1e8), node.disk_pct(0.0)), (50.0, 0.0));
        assert!(LoadReport::parse(b"not json").is_err());
    }
}

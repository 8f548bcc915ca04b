//! Reading a node's load report: the JSON the load monitor (in `background`) polls from
//! each node, holding its CPU and disk utilisation in percent and, from larder's own
//! node, a digest of the targets it holds.

use policy::warmup::WarmupSample;
use wire::TargetDigest;

/// What the router keeps of one load report.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct NodeReport {
    pub cpu_pct: f64,
    pub disk_pct: f64,
    /// The node's holdings, when it reports them and the digest is well formed.
    pub holdings: Option<TargetDigest>,
    /// The node's cache capacity in bytes (0: it does not say).
    pub cache_capacity_bytes: u64,
    /// Its uptime and cache counters, for warm-up.
    pub warmup: WarmupSample,
    /// The rest of the report (cache hits and fill, origin fetches), for `/stats`.
    pub figures: wire::LoadReport,
}

/// A node's load report ([`wire::LoadReport`]: `{"cpu_pct": 12.5, "disk_pct": 3.0, …}`,
/// other fields ignored). Without `disk_pct`, larder node's `disk_read_bytes_per_sec` is
/// turned into a percentage of `disk_full_bytes_per_sec` (the rate that counts as a
/// saturated disk). A malformed digest is dropped: the node then counts as one that
/// reports no holdings.
pub(crate) fn parse_report(body: &[u8], disk_full_bytes_per_sec: f64) -> Option<NodeReport> {
    let mut report = wire::LoadReport::parse(body).ok()?;
    let (cpu, disk) = (report.cpu_pct, report.disk_pct(disk_full_bytes_per_sec));
    let holdings = report.holdings.take().filter(|d| d.validate().is_ok());
    (cpu.is_finite() && disk.is_finite()).then_some(NodeReport {
        cpu_pct: cpu.max(0.0),
        disk_pct: disk.max(0.0),
        holdings,
        cache_capacity_bytes: report.cache_capacity_bytes,
        warmup: WarmupSample {
            uptime: report.uptime_ms.saturating_mul(1_000_000),
            hits: report.hits,
            misses: report.misses,
        },
        figures: report,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loads(body: &[u8]) -> Option<(f64, f64)> {
        parse_report(body, 1e8).map(|r| (r.cpu_pct, r.disk_pct))
    }

    #[test]
    fn reads_cpu_and_disk() {
        assert_eq!(loads(br#"{"cpu_pct": 40, "disk_pct": 2.5}"#), Some((40.0, 2.5)));
        let node = br#"{"in_flight":3,"cpu_pct":10.00,"disk_read_bytes_per_sec":50000000}"#;
        assert_eq!(loads(node), Some((10.0, 50.0)));
        assert_eq!(loads(b"not json"), None);
    }

    #[test]
    fn reads_holdings_and_drops_malformed_ones() {
        let mut digest = TargetDigest::with_capacity(4, 9);
        digest.insert(42);
        let report = wire::LoadReport { holdings: Some(digest.clone()), ..Default::default() };
        let got = parse_report(report.to_json().as_bytes(), 1e8).unwrap();
        assert_eq!(got.holdings, Some(digest.clone()));
        let bad = TargetDigest { words: vec![0; 3], ..digest };
        let report = wire::LoadReport { holdings: Some(bad), ..Default::default() };
        assert_eq!(parse_report(report.to_json().as_bytes(), 1e8).unwrap().holdings, None);
    }
}

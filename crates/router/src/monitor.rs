//! Reading a node's load report: the JSON the load monitor (in `background`) polls from
//! each node, holding its CPU and disk utilisation in percent.

/// CPU and disk utilisation, in percent, of a node's load report ([`wire::LoadReport`]:
/// `{"cpu_pct": 12.5, "disk_pct": 3.0, …}`, other fields ignored). Without `disk_pct`,
/// larder node's `disk_read_bytes_per_sec` is turned into a percentage of
/// `disk_full_bytes_per_sec` (the rate that counts as a saturated disk).
pub(crate) fn parse_report(body: &[u8], disk_full_bytes_per_sec: f64) -> Option<(f64, f64)> {
    let report = wire::LoadReport::parse(body).ok()?;
    let (cpu, disk) = (report.cpu_pct, report.disk_pct(disk_full_bytes_per_sec));
    (cpu.is_finite() && disk.is_finite()).then_some((cpu.max(0.0), disk.max(0.0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_cpu_and_disk() {
        let full = 1e8;
        assert_eq!(parse_report(br#"{"cpu_pct": 40, "disk_pct": 2.5}"#, full), Some((40.0, 2.5)));
        let node = br#"{"in_flight":3,"cpu_pct":10.00,"disk_read_bytes_per_sec":50000000}"#;
        assert_eq!(parse_report(node, full), Some((10.0, 50.0)));
        assert_eq!(parse_report(b"not json", full), None);
    }
}

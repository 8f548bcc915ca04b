//! The load monitor: HACC's 200 ms poll of each node's own load report.
//!
//! Nodes that offer `/.larder/load` (larder's own node does; nginx does not) answer with
//! JSON holding their CPU and disk utilisation in percent; the monitor folds them into the
//! load view, where the configured weights turn them, with the requests in flight the
//! router counts itself, into the one load number a policy sees.

use std::sync::Arc;

use policy::NodeId;

use crate::cluster::Cluster;
use crate::config::ms;
use crate::probe;

/// Poll every node marked `load_report`, every `load.poll_ms`, forever.
pub(crate) async fn run(cluster: Arc<Cluster>) {
    loop {
        let settings = cluster.settings();
        let load = &settings.config.load;
        let interval = ms(load.poll_ms);
        let targets: Vec<(NodeId, std::net::SocketAddr)> = {
            let p = cluster.placement();
            (0..p.nodes.len())
                .filter(|&i| p.nodes[i].configured && p.nodes[i].load_report)
                .map(|i| (NodeId(i as u32), p.nodes[i].addr))
                .collect()
        };
        let polls = targets.into_iter().map(|(node, addr)| {
            let cluster = cluster.clone();
            let path = load.path.clone();
            let full = load.disk_full_mb_per_sec * 1e6;
            async move {
                if let Ok((200, body)) = probe::get(addr, &path, interval).await {
                    if let Some((cpu, disk)) = parse_report(&body, full) {
                        cluster.report_load(node, cpu, disk);
                    }
                }
            }
        });
        let started = tokio::time::Instant::now();
        for poll in polls {
            tokio::spawn(poll);
        }
        tokio::time::sleep_until(started + interval).await;
    }
}

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

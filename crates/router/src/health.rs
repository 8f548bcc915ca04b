//! Background health work: active checks of every node, and the ticker that lets ejected
//! nodes back (without active checks) and ramps slow-starting nodes' weights.

use std::sync::Arc;
use std::time::Duration;

use policy::NodeId;

use crate::cluster::Cluster;
use crate::config::ms;
use crate::probe;

/// How often the ticker runs: fine enough for slow start to look smooth.
const TICK: Duration = Duration::from_millis(100);

/// Run forever: checks every `health.interval_ms` (when a path is set), ticks every 100 ms.
pub(crate) async fn run(cluster: Arc<Cluster>) {
    let mut next_check = tokio::time::Instant::now();
    let mut ticker = tokio::time::interval(TICK);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticker.tick().await;
        cluster.tick();
        let settings = cluster.settings();
        let health = &settings.config.health;
        if health.path.is_empty() || tokio::time::Instant::now() < next_check {
            continue;
        }
        next_check = tokio::time::Instant::now() + ms(health.interval_ms);
        let targets: Vec<(NodeId, std::net::SocketAddr)> = {
            let p = cluster.placement();
            (0..p.nodes.len())
                .filter(|&i| p.nodes[i].configured)
                .map(|i| (NodeId(i as u32), p.nodes[i].addr))
                .collect()
        };
        for (node, addr) in targets {
            let cluster = cluster.clone();
            let path = health.path.clone();
            let timeout = ms(health.timeout_ms);
            tokio::spawn(async move {
                let ok = matches!(probe::get(addr, &path, timeout).await, Ok((200..=399, _)));
                cluster.check_result(node, ok);
            });
        }
    }
}

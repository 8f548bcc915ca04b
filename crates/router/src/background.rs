//! The router's background loops, off the request path: active health checks with the
//! health ticker, the load monitor, DNS discovery of nodes (`discovery`), and the access
//! log's flush. [`spawn`] starts them all beside the accept loop; they run until the
//! router's [`JoinSet`] is shut down.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use policy::NodeId;
use tokio::sync::oneshot;
use tokio::task::JoinSet;

use crate::access_log::AccessLog;
use crate::cluster::Cluster;
use crate::discovery;
use crate::monitor::parse_report;
use crate::poison::Recover;
use crate::probe;
use crate::upstream::Upstream;

/// How often the health ticker runs: fine enough for slow start to look smooth.
const HEALTH_TICK: Duration = Duration::from_millis(100);
/// How often the buffered access log is written out.
const LOG_FLUSH: Duration = Duration::from_secs(1);

/// Start every background loop on `set`. The receiver hears when discovery's first round
/// is in the membership.
pub(crate) fn spawn(
    set: &mut JoinSet<()>,
    cluster: &Arc<Cluster>,
    log: Option<Arc<AccessLog>>,
) -> oneshot::Receiver<()> {
    let (first_round, discovered) = oneshot::channel();
    set.spawn(discovery::run(cluster.clone(), first_round));
    set.spawn(health_checks(cluster.clone()));
    set.spawn(load_monitor(cluster.clone()));
    if let Some(log) = log {
        set.spawn(flush_access_log(log));
    }
    discovered
}

/// Tick health every 100 ms (ejections ending, slow start ramping); check every node
/// every `health.interval_ms` when a check path is set.
async fn health_checks(cluster: Arc<Cluster>) {
    let mut next_check = tokio::time::Instant::now();
    let mut ticker = tokio::time::interval(HEALTH_TICK);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticker.tick().await;
        cluster.tick(Instant::now());
        let settings = cluster.settings();
        let health = &settings.config.health;
        let Some(path) = &health.path else { continue };
        if tokio::time::Instant::now() < next_check {
            continue;
        }
        next_check = tokio::time::Instant::now() + health.interval;
        for (node, upstream) in cluster.probe_targets(|_| true) {
            let cluster = cluster.clone();
            let path = path.clone();
            let timeout = health.timeout;
            let node_tls = settings.node_tls.clone();
            tokio::spawn(async move {
                let got = probe::get(&upstream, node_tls.as_ref(), &path, None, timeout).await;
                let ok = matches!(got, Ok((200..=399, _)));
                cluster.check_result(node, ok, Instant::now());
            });
        }
    }
}

/// Holdings of a node whose reports stopped this many poll intervals ago are forgotten,
/// and never before a report could have timed out (`load.timeout_ms` and one poll more):
/// a node whose report is slow on a busy host has not lost its cache, and forgetting its
/// holdings would send its targets elsewhere on one router and not on another.
const STALE_REPORTS: u32 = 5;

/// HACC's poll of each node's own load report: every node marked `load_report`, every
/// `load.poll_ms`, each poll naming this router ([`Cluster::poller`]). Nodes that offer
/// `/.larder/load` (larder's own node does; nginx does not) answer with their CPU and disk
/// utilisation; the load view folds them, with the requests in flight the router counts
/// itself, into the one load number a policy sees. Larder's nodes also say how many
/// routers poll them: a router alone in front of a few equal nodes places as LARD does.
async fn load_monitor(cluster: Arc<Cluster>) {
    let in_flight: Arc<std::sync::Mutex<HashSet<NodeId>>> = Arc::default();
    loop {
        let settings = cluster.settings();
        let load = &settings.config.load;
        let interval = load.poll;
        // With handoff on every node is asked: its report is where it names its socket.
        let every = settings.config.handoff.enabled;
        let targets: Vec<(NodeId, Arc<Upstream>)> =
            cluster.probe_targets(|n| n.load_report || every);
        let started = tokio::time::Instant::now();
        let max_age = (STALE_REPORTS * interval).max(load.timeout + interval);
        cluster.forget_stale_reports(Instant::now(), max_age);
        for (node, upstream) in targets {
            if !in_flight.lock().recover().insert(node) {
                continue;
            }
            let cluster = cluster.clone();
            let path = load.path.clone();
            let full = load.disk_full_mb_per_sec * 1e6;
            let timeout = load.timeout;
            let node_tls = settings.node_tls.clone();
            let in_flight = in_flight.clone();
            let poller = cluster.poller();
            tokio::spawn(async move {
                let got =
                    probe::get(&upstream, node_tls.as_ref(), &path, Some(poller), timeout).await;
                in_flight.lock().recover().remove(&node);
                if let Ok((200, body)) = got {
                    if let Some(report) = parse_report(&body, full) {
                        upstream.handoff.set(report.figures.handoff_socket.as_deref());
                        cluster.report_load(node, report, Instant::now());
                    }
                }
            });
        }
        tokio::time::sleep_until(started + interval).await;
    }
}

/// Write the buffered access log out every second, so it is never far behind.
async fn flush_access_log(log: Arc<AccessLog>) {
    let mut every = tokio::time::interval(LOG_FLUSH);
    loop {
        every.tick().await;
        log.flush();
    }
}

//! Purge: an operator's request to drop (or mark stale) what the nodes store for a target
//! or a prefix, as `PURGE <target>` on the traffic listener (from `purge_from` networks
//! only) or `POST /purge?target=…` on the admin listener ([`wire::PurgeRequest`]).
//!
//! Sent as a [`wire::Invalidation`] to every configured node, not only the holders the
//! load reports' digests name: a digest is as old as the last poll, lists only named
//! targets, and cannot answer a prefix. All at once, each bounded by the health-check
//! timeout; the client hears, as a [`wire::PurgeReport`], on how many nodes something was
//! held, once every node answered or timed out. Unlike the invalidation after an unsafe
//! request, this is asked for explicitly, so `invalidate_nodes = false` does not stop it.

use std::net::IpAddr;

use http1::Status;
use tokio::task::JoinSet;
use wire::{Invalidation, InvalidationOutcome, PurgeReport, PurgeRequest, PURGE_HEADER};

use crate::cluster::Cluster;
use crate::head::Request;
use crate::probe;

/// Answer the `PURGE` request `req` on the traffic listener from `peer` (its
/// `X-Larder-Purge` options, its `Host` the site): the status and a plain-text body.
pub(crate) async fn answer(cluster: &Cluster, peer: IpAddr, req: &Request) -> (Status, String) {
    let allowed = cluster.settings().config.purge_from.iter().any(|net| net.contains(peer));
    if !allowed {
        return (Status::FORBIDDEN, format!("{peer} may not purge (purge_from)\n"));
    }
    match PurgeRequest::parse(&req.target, req.field(PURGE_HEADER)) {
        Ok(PurgeRequest(inv)) => report(cluster, inv.on_site(req.host())).await,
        Err(e) => (Status::BAD_REQUEST, format!("{e}; a purge is PURGE /path or /prefix*\n")),
    }
}

/// Send `inv` to every configured node and say on how many it was held: 200, or 502 when
/// none could be reached.
pub(crate) async fn report(cluster: &Cluster, inv: Invalidation) -> (Status, String) {
    let settings = cluster.settings();
    let timeout = settings.config.health.timeout;
    let inv = std::sync::Arc::new(inv);
    let mut asks = JoinSet::new();
    for (_, upstream) in cluster.probe_targets(|_| true) {
        let (node_tls, inv) = (settings.node_tls.clone(), inv.clone());
        asks.spawn(async move {
            let request = |host: &str| inv.request(host);
            let answer = probe::send(&upstream, node_tls.as_ref(), &request, timeout).await;
            answer.ok().and_then(|(status, body)| InvalidationOutcome::parse(status, &body))
        });
    }
    let mut report = PurgeReport { purged: 0, nodes: asks.len(), unreachable: 0 };
    while let Some(outcome) = asks.join_next().await {
        match outcome.ok().flatten() {
            Some(InvalidationOutcome::Dropped) => report.purged += 1,
            Some(InvalidationOutcome::NotHeld) => {}
            None => report.unreachable += 1,
        }
    }
    let status = Status::new(report.status()).unwrap_or(Status::BAD_GATEWAY);
    (status, report.body())
}

//! Invalidation across the cluster (RFC 9111 §4.4 for a tier of caches): once an unsafe
//! request (any method but GET, HEAD, OPTIONS, TRACE) for a target got a non-error answer
//! (2xx, 3xx) through one node, that node has dropped its own stored copy; every other
//! node may hold one too (a replicated hot target, a copy from before a move), so the
//! router tells each of them with a [`wire::Invalidation`] (`POST
//! /.larder/invalidate?target=…`).
//!
//! Sent to every other configured node, not only the holders the load reports' digests
//! name: a digest is as old as the last poll, and a copy stored since would be missed.
//! Each in a task of its own, so the client's answer never waits, each bounded by the
//! health-check timeout; a node that cannot be told (down, slow) is not retried. Off with
//! `invalidate_nodes = false` (back-ends that cache nothing). The
//! `Location` and `Content-Location` a response names are dropped by the answering node
//! only.

use std::sync::Arc;

use policy::NodeId;

use crate::cluster::Cluster;
use crate::head::Request;
use crate::probe;

/// Whether `method` may change its target (RFC 9110 §9.2.1).
#[inline]
pub(crate) fn is_unsafe(method: &str) -> bool {
    !matches!(method, "GET" | "HEAD" | "OPTIONS" | "TRACE")
}

/// After `req` was answered `status` by `answered_by`: tell every other node to drop its
/// target (on its site), when the request was unsafe and the answer not an error.
#[inline]
pub(crate) fn after_response(
    cluster: &Arc<Cluster>,
    answered_by: NodeId,
    req: &Request,
    status: u16,
) {
    // Checked inline on every relayed response; the rare unsafe one goes on below.
    if is_unsafe(&req.method) && (200..400).contains(&status) && req.target.starts_with('/') {
        tell_the_others(cluster, answered_by, req);
    }
}

/// Tell every node but `answered_by` to drop the target of `req`, each in a task of its
/// own.
fn tell_the_others(cluster: &Arc<Cluster>, answered_by: NodeId, req: &Request) {
    let settings = cluster.settings();
    if !settings.config.invalidate_nodes {
        return;
    }
    let timeout = settings.config.health.timeout;
    let invalidation = wire::Invalidation::exact(req.target.as_str()).on_site(req.host());
    let invalidation = Arc::new(invalidation);
    for (node, upstream) in cluster.probe_targets(|_| true) {
        if node == answered_by {
            continue;
        }
        let node_tls = settings.node_tls.clone();
        let invalidation = Arc::clone(&invalidation);
        tokio::spawn(async move {
            let request = |host: &str| invalidation.request(host);
            // Best effort: a node that cannot be told keeps its copy until it expires.
            let _ = probe::send(&upstream, node_tls.as_ref(), &request, timeout).await;
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_unsafe_methods_invalidate() {
        for m in ["POST", "PUT", "DELETE", "PATCH", "PURGE"] {
            assert!(is_unsafe(m), "{m}");
        }
        for m in ["GET", "HEAD", "OPTIONS", "TRACE"] {
            assert!(!is_unsafe(m), "{m}");
        }
    }
}

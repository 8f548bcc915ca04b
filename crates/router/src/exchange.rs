//! The phases of one request that do not depend on the protocol the client speaks: map
//! the URL to a target, take or open a connection to the picked node, write the head the
//! node gets, tell the cluster how the attempt ended (in-flight count, latency, stats, the
//! policy's `done`, health), decide whether to try another node, and choose the status of
//! an attempt that failed. An HTTP/1.1 connection (`conn`) and an HTTP/2 stream
//! (`http2::stream`) both drive these; only reading the client's request and writing its
//! answer differ between them.

use std::io::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use http1::Status;
use policy::{Outcome, Target};

use crate::cluster::{Cluster, Dispatch, Finished, Settings};
use crate::head::{Rejection, Request};
use crate::health::Failure;
use crate::invalidate;
use crate::stats::Answered;
use crate::upstream::Pooled;

/// Why one attempt at a node did not complete.
#[derive(Debug)]
pub(crate) enum Fault {
    /// Could not connect: the node is ejected at once.
    Connect,
    /// A pooled connection turned out closed before any response byte.
    Stale,
    /// The node broke the exchange (reset, early close, garbage).
    Upstream,
    /// The node did not answer in time.
    UpstreamTimeout,
    /// Health checks took the node down while the request waited for its answer.
    NodeDown,
    /// The client broke the exchange; answer with the rejection if there is one.
    Client(Option<Rejection>),
}

impl Fault {
    /// The status the router answers with when an attempt failed this way and no other
    /// node takes the request; none for the client's own faults.
    pub(crate) fn status(&self) -> Option<Status> {
        match self {
            Fault::Client(_) => None,
            Fault::UpstreamTimeout => Some(Status::GATEWAY_TIMEOUT),
            Fault::Connect | Fault::Stale | Fault::Upstream | Fault::NodeDown => {
                Some(Status::BAD_GATEWAY)
            }
        }
    }
}

pub(crate) struct AttemptError {
    pub fault: Fault,
    /// The status of the response whose bytes already went to the client (an interim
    /// one's, or the final one's): nothing can be retried or sent, only logged.
    pub response_started: Option<u16>,
}

impl AttemptError {
    pub(crate) fn before(fault: Fault) -> Self {
        AttemptError { fault, response_started: None }
    }

    pub(crate) fn node_failure(&self) -> Option<Failure> {
        match self.fault {
            Fault::Connect => Some(Failure::Connect),
            Fault::Upstream | Fault::UpstreamTimeout => Some(Failure::Exchange),
            // Already down: nothing more to count.
            Fault::Stale | Fault::NodeDown | Fault::Client(_) => None,
        }
    }
}

/// The request's target, its normalised path written into `path`. `OPTIONS *` has no
/// path: it is one target of its own. The nodes' own paths (`/.larder/…`: load report,
/// metrics, invalidation) are the router's to use, never a client's
/// ([`wire::internal_path`]).
pub(crate) fn map_target(
    settings: &Settings,
    req: &Request,
    path: &mut String,
) -> Result<Target, Rejection> {
    if wire::is_internal_target(&req.target) {
        return Err(Rejection::Internal);
    }
    if req.target == "*" {
        path.clear();
        path.push('*');
        return Ok(Target::from_key(0));
    }
    let mapped = settings.mapper.map_into(req.target.as_bytes(), path).map_err(Rejection::Target);
    match mapped {
        Ok(target) if settings.config.mapping.host_in_key => Ok(on_site(target, req)),
        mapped => mapped,
    }
}

/// `target` on the site of `req` (`mapping.host_in_key`): out of line, so a router that
/// keys by path alone pays one test for it.
#[cold]
#[inline(never)]
fn on_site(target: Target, req: &Request) -> Target {
    target.on_site(req.host().unwrap_or_default())
}

/// A connection to the picked node: an idle pooled one (unless `fresh`), else a new one.
/// With when the request goes out on it (`start` for a pooled one) and whether it was
/// pooled (a pooled connection may turn out stale).
pub(crate) async fn upstream_connection<N: Pooled>(
    settings: &Settings,
    dispatch: &Dispatch,
    fresh: bool,
    start: Instant,
) -> Result<(N, Instant, bool), AttemptError> {
    let t = &settings.config.timeouts;
    let pooled = if fresh { None } else { dispatch.upstream.take(t.pool_idle, start) };
    match pooled {
        Some(s) => Ok((s, start, true)),
        None => {
            let node_tls = settings.node_tls.as_ref();
            let s = N::connect(dispatch.upstream.at(), node_tls, t.upstream_connect)
                .await
                .map_err(|_| AttemptError::before(Fault::Connect))?;
            Ok((s, Instant::now(), false))
        }
    }
}

/// On a peer, the node a request must go to whatever the policy says: the peer's own,
/// when another peer's distributor already forwarded it (one hop at most).
#[inline]
pub(crate) fn pinned_node(settings: &Settings, req: &Request) -> Option<std::net::SocketAddr> {
    settings.config.local_node.filter(|_| req.passed(&settings.config.via))
}

/// The head the node gets into `out`: the rewritten request head, a `Host` for an
/// HTTP/1.0 request that had none, and the target hint (and the peer to fill from) last.
pub(crate) fn write_upstream_head(req: &Request, dispatch: &Dispatch, out: &mut Vec<u8>) {
    out.clear();
    match req.host_missing_at {
        // An HTTP/1.0 request without Host: HTTP/1.1 upstream needs one.
        Some(at) => {
            out.extend_from_slice(&req.upstream_head[..at]);
            let _ = match &dispatch.upstream.server_name {
                Some(name) => write!(out, "Host: {}\r\n", name.to_str()),
                None => write!(out, "Host: {}\r\n", dispatch.upstream.addr),
            };
            out.extend_from_slice(&req.upstream_head[at..]);
        }
        None => out.extend_from_slice(&req.upstream_head),
    }
    if let Some(hint) = dispatch.hint {
        // The target, last before the blank line, so the node's holdings name it.
        out.truncate(out.len() - 2);
        hint.write_field(out);
        if let Some(peer) = &dispatch.peer {
            wire::PeerHint(peer.addr).write_field(out);
        }
        out.extend_from_slice(b"\r\n");
    }
}

/// A response from `dispatch`'s node was relayed whole: tell the cluster, and the other
/// nodes when the request changed its target.
#[allow(clippy::too_many_arguments)]
#[inline]
pub(crate) fn completed(
    cluster: &Arc<Cluster>,
    dispatch: &Dispatch,
    target: &Target,
    req: &Request,
    status: u16,
    upstream_time: Duration,
    began: Instant,
    at: Instant,
) {
    let duration = at.saturating_duration_since(began);
    let answered = Some(Answered { status, duration });
    let how = Finished { outcome: Outcome::Ok, upstream_time: Some(upstream_time), answered, at };
    cluster.finish(dispatch.node, target, &how);
    invalidate::after_response(cluster, dispatch.node, req, status);
}

/// An attempt at `dispatch`'s node failed with `e` (about `at`): tell the cluster, the
/// node's health included. True when the node was at fault (another may be tried).
pub(crate) fn attempt_failed(
    cluster: &Cluster,
    dispatch: &Dispatch,
    target: &Target,
    e: &AttemptError,
    began: Instant,
    at: Instant,
) -> bool {
    let failure = e.node_failure();
    let node_at_fault = failure.is_some() || matches!(e.fault, Fault::NodeDown);
    let outcome = if node_at_fault { Outcome::Failed } else { Outcome::Ok };
    let answered = e
        .response_started
        .map(|status| Answered { status, duration: at.saturating_duration_since(began) });
    let how = Finished { outcome, upstream_time: None, answered, at };
    cluster.finish(dispatch.node, target, &how);
    if let Some(f) = failure {
        cluster.failed(dispatch.node, f, at);
    }
    node_at_fault
}

/// Whether a request whose attempt failed with `e` goes to another node: when the node
/// was at fault, no response byte went out, it is the first failure, and the request can
/// be sent again (a failed connect sent nothing, so any request can; after that, only a
/// GET or HEAD without a body is sent twice).
pub(crate) fn retry(req: &Request, e: &AttemptError, node_at_fault: bool, retried: bool) -> bool {
    let replayable = req.retryable() || matches!(e.fault, Fault::Connect);
    node_at_fault && e.response_started.is_none() && replayable && !retried
}

//! A peer's node serving a handed-off connection asks its distributor where each later
//! request on it belongs ([`node::HandOn`]): the distributor places the request as it
//! would its own client's, and when that is another node, the node forwards the request
//! to it, or hands the connection on to it when it takes connections on this host
//! (`handoff.rs`'s offer, from the request's first byte), as the node's
//! [`node::LaterRequests`] says. A request that stays, or whose forward or offer fails,
//! is served by the node that holds the connection.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use node::hand_on::{Elsewhere, HandOn, Offer};
use policy::{NodeId, Outcome, Target};
use tokio::net::TcpStream;

use crate::cluster::{Cluster, Finished};
use crate::handoff;

/// The placement a peer's node asks, once its distributor is built
/// ([`crate::RouterHandle::place_hand_ons`]); before that, every request stays where it is.
#[derive(Clone, Default)]
pub struct PeerHandOn(Arc<OnceLock<Arc<Cluster>>>);

impl PeerHandOn {
    pub fn new() -> PeerHandOn {
        PeerHandOn::default()
    }

    /// Place from now on as `cluster` does (the first one attached stays).
    pub(crate) fn attach(&self, cluster: Arc<Cluster>) {
        let _ = self.0.set(cluster);
    }
}

impl HandOn for PeerHandOn {
    fn elsewhere(&self, target: &str, host: Option<&[u8]>) -> Option<Box<dyn Elsewhere>> {
        let cluster = Arc::clone(self.0.get()?);
        let settings = cluster.settings();
        let mut path = String::new();
        let mut key = settings.mapper.map_into(target.as_bytes(), &mut path).ok()?;
        if settings.config.mapping.host_in_key {
            key = key.on_site(host.unwrap_or_default());
        }
        let dispatch = cluster.pick(&key, &path, None, Instant::now(), None)?;
        let addr = dispatch.upstream.addr;
        let to = HandOnTo {
            cluster: Arc::clone(&cluster),
            node: dispatch.node,
            target: key,
            wait: settings.config.handoff.answer,
        };
        if settings.config.local_node == Some(addr) {
            return None;
        }
        let socket = dispatch.upstream.handoff.get();
        Some(Box::new(Ready { to, addr, hint: dispatch.hint, socket }))
    }
}

/// A pick made for a hand-on; finished in the placement however the offer goes, so the
/// node's count of requests in flight stays right.
struct HandOnTo {
    cluster: Arc<Cluster>,
    node: NodeId,
    target: Target,
    wait: Duration,
}

impl Drop for HandOnTo {
    fn drop(&mut self) {
        let how = Finished {
            outcome: Outcome::Ok,
            upstream_time: None,
            answered: None,
            at: Instant::now(),
        };
        self.cluster.finish(self.node, &self.target, &how);
    }
}

/// Another node: its address, to forward to, and its socket, if it takes connections,
/// to offer the connection to.
struct Ready {
    to: HandOnTo,
    addr: SocketAddr,
    hint: Option<wire::TargetHint>,
    socket: Option<Arc<Path>>,
}

impl Elsewhere for Ready {
    fn node(&self) -> SocketAddr {
        self.addr
    }

    fn hint(&self) -> Option<wire::TargetHint> {
        self.hint
    }

    fn offer<'a>(
        self: Box<Self>,
        client: &'a TcpStream,
        peer: SocketAddr,
        bytes: &'a [u8],
    ) -> Offer<'a> {
        Box::pin(async move {
            let Some(socket) = &self.socket else { return false };
            let counts = self.to.cluster.handoff_counts();
            handoff::offer(socket, client, peer, bytes, self.to.wait, counts).await
        })
    }
}

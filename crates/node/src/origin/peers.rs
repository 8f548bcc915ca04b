//! Peer fill: a miss on a target that a router says another node holds or is filling
//! (`wire::PeerHint`) is fetched from that node before the origin, so a target a policy
//! replicates costs the origin one fetch cluster-wide (extended LARD's back-end
//! forwarding; Traffic Server's and Varnish's cache peering).
//!
//! Only nodes this node was configured with are asked, never an address a request alone
//! names. The request to a peer carries the peer-fill mark (`wire::PEER_FILL_FIELD`): a
//! marked request is never filled from a peer again, and never waits for a fetch of this
//! node that is itself waiting on a peer, so two nodes naming each other cannot loop. A
//! peer that cannot be reached, answers a server error or is slower than the peer
//! timeout is passed over for the origin.

use super::body::OriginBody;
use super::client::{OriginClient, OriginHead};
use super::config::OriginConfig;
use super::conn::OriginCounters;
use http1::RequestHead;
use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;

/// The configured peers, each with a client of its own, and the fetches waiting on one.
pub struct Peers {
    clients: HashMap<SocketAddr, OriginClient>,
    /// Targets whose fetch on this node waits for a peer's response head.
    waiting: RefCell<HashSet<String>>,
    /// Misses filled from a peer.
    pub fills: Cell<u64>,
    /// Peer fills that failed (unreachable, refused, too slow): filled from the origin.
    pub failures: Cell<u64>,
}

impl Peers {
    /// A client for every peer of `cfg`, each bounded by the peer timeout.
    pub fn new(cfg: &OriginConfig) -> Peers {
        let clients = cfg
            .peers
            .iter()
            .filter_map(|&addr| {
                let peer = OriginConfig { timeout: cfg.peer_timeout, ..cfg.clone() };
                Some((addr, OriginClient::for_node(addr, &peer)?))
            })
            .collect();
        Peers { clients, waiting: RefCell::default(), fills: Cell::new(0), failures: Cell::new(0) }
    }

    /// Whether `req` was sent by another node filling from this one.
    pub fn is_peer_fill(req: &RequestHead) -> bool {
        wire::peer_fill::is_peer_fill(req.header(wire::PEER_FILL_HEADER))
    }

    /// The configured peer `req` names to fill from, unless `req` is itself a peer fill;
    /// `None` for a peer this node was not configured with.
    pub fn named(&self, req: &RequestHead) -> Option<&OriginClient> {
        if Self::is_peer_fill(req) {
            return None;
        }
        let hint = wire::PeerHint::parse(req.header(wire::PEER_HEADER)?)?;
        self.clients.get(&hint.0)
    }

    /// The client of the configured peer `addr`.
    pub fn client(&self, addr: &SocketAddr) -> Option<&OriginClient> {
        self.clients.get(addr)
    }

    /// Whether a fetch of `target` on this node waits for a peer right now.
    pub fn is_waiting(&self, target: &str) -> bool {
        self.waiting.borrow().contains(target)
    }

    /// GET `target` from `peer` with `fields` and the peer-fill mark: its response head
    /// and body, or `None` (counted) when the miss is to go to the origin instead.
    pub async fn get(
        &self,
        peer: &OriginClient,
        key: &str,
        (target, host): (&str, Option<&[u8]>),
        fields: &[(&str, &[u8])],
    ) -> Option<(OriginHead, OriginBody)> {
        let mut marked = fields.to_vec();
        marked.push(wire::PEER_FILL_FIELD);
        let waiting = Waiting::start(&self.waiting, key);
        let got = peer.get(target, host, &marked).await;
        drop(waiting);
        match got {
            // A server error may be the peer's own (its origin failed, it is shutting
            // down): the origin is asked instead.
            Ok((head, body)) if head.status < 500 => {
                OriginCounters::add(&self.fills, 1);
                Some((head, body))
            }
            _ => {
                OriginCounters::add(&self.failures, 1);
                None
            }
        }
    }
}

/// A target marked as waiting on a peer for as long as this lives (dropped with the
/// fetch, however it ends).
struct Waiting<'a> {
    set: &'a RefCell<HashSet<String>>,
    key: String,
    first: bool,
}

impl<'a> Waiting<'a> {
    fn start(set: &'a RefCell<HashSet<String>>, key: &str) -> Waiting<'a> {
        let first = set.borrow_mut().insert(key.to_string());
        Waiting { set, key: key.to_string(), first }
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if self.first {
            self.set.borrow_mut().remove(&self.key);
        }
    }
}

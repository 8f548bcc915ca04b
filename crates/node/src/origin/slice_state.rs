//! What a caching node keeps about the slices of large objects beside the store: the
//! slice fetches under way (one per slice, coalesced), the cluster's nodes that own them,
//! the origins seen to ignore ranges, and the counters. The fetching itself is
//! `slices.rs`.

use super::slice_owner::owner;
use super::slice_spec::{Slice, SliceError, SliceSpec};
use crate::single_flight::SingleFlight;
use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::Arc;

/// Most targets remembered as served by an origin that ignores ranges; the set starts
/// over beyond it (forgetting costs one more attempt at slicing).
const NO_RANGES_MAX: usize = 4096;

/// How many slices came from where, for the load report.
#[derive(Debug, Default)]
pub struct SliceCounters {
    pub from_cache: Cell<u64>,
    pub from_origin: Cell<u64>,
    pub from_peers: Cell<u64>,
}

pub(super) type Flight = SingleFlight<Result<Arc<Slice>, SliceError>>;

/// The slice fetches under way, the cluster's nodes, and what the origin does with ranges.
pub struct Slices {
    pub(super) fetching: Flight,
    /// Fetches for other nodes' requests of slices whose own fetch here waits on a node.
    pub(super) for_peers: Flight,
    /// The nodes slices are owned by: the configured peers and this node.
    nodes: Vec<SocketAddr>,
    own: Option<SocketAddr>,
    no_ranges: RefCell<HashSet<String>>,
    pub counters: SliceCounters,
}

impl Slices {
    pub fn new(peers: &[SocketAddr], own: Option<SocketAddr>) -> Slices {
        let mut nodes = peers.to_vec();
        nodes.extend(own.filter(|o| !peers.contains(o)));
        Slices {
            fetching: Flight::default(),
            for_peers: Flight::default(),
            nodes,
            own,
            no_ranges: RefCell::default(),
            counters: SliceCounters::default(),
        }
    }

    /// Whether the origin of the object stored under `key` was seen to ignore ranges.
    pub fn ignores_ranges(&self, key: &str) -> bool {
        self.no_ranges.borrow().contains(key)
    }

    pub(super) fn mark_no_ranges(&self, key: &str) {
        let mut set = self.no_ranges.borrow_mut();
        if set.len() >= NO_RANGES_MAX {
            set.clear();
        }
        set.insert(key.to_string());
    }

    /// The node that owns slice `index` of `spec`'s object, when that is another node.
    pub(super) fn other_owner(&self, spec: &SliceSpec, index: u64) -> Option<SocketAddr> {
        owner(&spec.key, index, &self.nodes).filter(|o| Some(*o) != self.own)
    }
}

//! What a caching node keeps for its origins (loop-local): the [`Upstream`] fetches work
//! with, and the fetches under way, so concurrent misses for one target cause one origin
//! request.

use super::client::OriginClient;
use super::config::OriginConfig;
use super::conn::OriginCounters;
use super::fetch::Outcome;
use super::hit_for_miss::HitForMiss;
use super::peers::Peers;
use super::slice_state::Slices;
use super::store::ObjectStore;
use super::upstream::Upstream;
use crate::single_flight::SingleFlight;
use std::rc::Rc;

pub struct OriginState {
    pub upstream: Upstream,
    /// Fetches under way by target.
    pub(super) fetching: SingleFlight<Outcome>,
    /// Fetches under way for other nodes' peer fills of targets whose own fetch here
    /// waits on a peer (which such a fill must not wait for: it could be waiting on it).
    pub(super) fetching_for_peers: SingleFlight<Outcome>,
}

impl OriginState {
    pub fn new(config: OriginConfig, cache_bytes: u64) -> OriginState {
        let upstream = Upstream {
            client: Rc::new(OriginClient::new(&config)),
            peers: Peers::new(&config),
            slices: Slices::new(&config.peers, config.own_addr),
            store: Rc::new(ObjectStore::new(cache_bytes)),
            fills: Rc::default(),
            // Marks are small: a sixty-fourth of the cache holds tens of thousands.
            hit_for_miss: HitForMiss::new(config.uncacheable_for, cache_bytes / 64 + (64 << 10)),
            config,
        };
        OriginState {
            upstream,
            fetching: SingleFlight::default(),
            fetching_for_peers: SingleFlight::default(),
        }
    }

    /// Bytes held and capacity of the object store.
    pub fn cache_bytes(&self) -> (u64, u64) {
        (self.upstream.store.used_bytes(), self.upstream.store.capacity_bytes())
    }

    pub fn counters(&self) -> &OriginCounters {
        self.upstream.client.counters()
    }

    /// Slices of large objects served from the store, fetched from the origin, fetched
    /// from the nodes that own them.
    pub fn slices(&self) -> (u64, u64, u64) {
        let c = &self.upstream.slices.counters;
        (c.from_cache.get(), c.from_origin.get(), c.from_peers.get())
    }

    /// Misses filled from peers, and peer fills that failed (filled from the origin).
    pub fn peer_fills(&self) -> (u64, u64) {
        let p = &self.upstream.peers;
        (p.fills.get(), p.failures.get())
    }
}

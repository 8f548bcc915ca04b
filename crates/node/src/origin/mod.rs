//! The node as a cache in front of origin servers (`larder node --origin`): misses are
//! fetched over pooled keep-alive connections and kept in a byte-bounded store under the
//! HTTP caching rules of a shared cache.
//!
//! Map of the module:
//! - `config.rs`: origin URLs and limits ([`OriginConfig`]); `error.rs`: [`OriginError`]
//!   (502 or 504).
//! - `client.rs`: the pooled HTTP/1.1 client, origins tried in order; `body.rs`: the
//!   response body read in pieces, the connection handed back at its end.
//! - `fields.rs`, `cache_control.rs`, `freshness.rs`, `vary.rs`: the RFC 9111 rules,
//!   pure (time passed in).
//! - `store.rs`: stored responses, keyed by target and `Vary` values.
//! - `fetch.rs`: one fetch (conditional when revalidating) and what it yields;
//!   `filling.rs`: a cacheable body arriving, relayed to every request that wants it;
//!   `serve.rs`: one request (hit, coalesced miss, stale-if-error, 502/504);
//!   `relay.rs`: large or uncacheable bodies relayed to one client as they arrive.

mod body;
pub mod cache_control;
mod client;
pub mod config;
pub mod error;
mod fetch;
pub mod fields;
mod filling;
pub mod freshness;
mod relay;
mod serve;
mod store;
pub mod vary;

pub use client::{OriginClient, OriginCounters};
pub use config::{OriginConfig, OriginUrl, OriginUrlError};
pub use error::OriginError;
pub(crate) use relay::Relay;
pub(crate) use serve::serve;

use crate::single_flight::SingleFlight;
use filling::Filling;
use http1::RequestHead;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use store::ObjectStore;

/// What a caching node keeps for its origins (loop-local).
pub struct OriginState {
    pub config: OriginConfig,
    pub client: OriginClient,
    store: ObjectStore,
    /// Fetches under way by target, so concurrent misses cause one origin request.
    fetching: SingleFlight<fetch::Outcome>,
    /// Responses whose bodies are arriving, by target: requests that find one relay it
    /// instead of fetching again.
    filling: RefCell<HashMap<String, Rc<Filling>>>,
}

impl OriginState {
    pub fn new(config: OriginConfig, cache_bytes: u64) -> OriginState {
        OriginState {
            client: OriginClient::new(&config),
            store: ObjectStore::new(cache_bytes),
            fetching: SingleFlight::default(),
            filling: RefCell::new(HashMap::new()),
            config,
        }
    }

    /// The response being filled for `target` that may answer `req`.
    fn filling_for(&self, target: &str, req: &RequestHead) -> Option<Rc<Filling>> {
        self.filling.borrow().get(target).filter(|f| f.meta.matches(req)).cloned()
    }

    /// Forget `fill` as the one under way for `target` (unless another replaced it).
    fn end_filling(&self, target: &str, fill: &Rc<Filling>) {
        let mut map = self.filling.borrow_mut();
        if map.get(target).is_some_and(|f| Rc::ptr_eq(f, fill)) {
            map.remove(target);
        }
    }

    /// Bytes held and capacity of the object store.
    pub fn cache_bytes(&self) -> (u64, u64) {
        (self.store.used_bytes(), self.store.capacity_bytes())
    }
}

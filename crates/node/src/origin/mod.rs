//! The node as a cache in front of origin servers (`larder node --origin`): misses are
//! fetched over pooled keep-alive connections and kept in a byte-bounded store under the
//! HTTP caching rules of a shared cache.
//!
//! Map of the module:
//! - `config.rs`: origin URLs and limits ([`OriginConfig`]); `error.rs`: [`OriginError`]
//!   (502 or 504, or the client's error when its request body failed on the way).
//! - `client.rs`: the HTTP/1.1 client, origins tried in order; `conn.rs`: connections,
//!   the idle pool and the counters; `body.rs`: the response body read in pieces, the
//!   connection handed back at its end.
//! - `fields.rs`, `cache_control.rs`, `freshness.rs`, `vary.rs`: the RFC 9111 rules,
//!   pure (time passed in); `cookies.rs`: `Set-Cookie`, never handed to another client.
//! - `store.rs`: stored responses, keyed by target and `Vary` values; `site.rs`: the
//!   site a request is for (the origin's own, or the client's `Host`: virtual hosts).
//! - `hit_for_miss.rs`: targets whose requests skip coalescing for a while, their last
//!   response not being shareable.
//! - `upstream.rs`: what a fetch works with; `state.rs`: that and the fetches under way.
//! - `fetch.rs`: one fetch (conditional when revalidating) and what it yields;
//!   `filling.rs`: a cacheable body arriving, relayed to every request that wants it;
//!   `serve.rs`: one request (hit, coalesced miss, stale-if-error, 502/504);
//!   `relay.rs`: large or uncacheable bodies relayed to one client as they arrive;
//!   `relayed.rs`: the head of a response made upstream (this request's own from the
//!   origin, or a forwarded one from another node) and its body, framed anew;
//!   `grace.rs`: a stale copy served within its `stale-while-revalidate` window while one
//!   background fetch refreshes it;
//!   `partial.rs`: which byte range of a stored response a request gets (206, 416).
//! - `peers.rs`: a miss filled from another node of the cluster that a router names
//!   (only configured nodes, never again from a peer when the request is itself a peer
//!   fill); `resume.rs`: the rest of a body whose peer failed mid-way, from the origin,
//!   only when the origin's copy is the same.
//! - Large objects as slices: `slicing.rs` decides that a response too large to store
//!   whole is stored as fixed-size slices (its first slice read from the response that
//!   showed it); `slice_spec.rs` is what the object and one slice are (the copy every
//!   slice must be of); `slices.rs` gets one slice (store, coalesced fetch from the node
//!   that owns it, else the origin with `Range`/`If-Range`), `slice_state.rs` the fetches
//!   under way, the nodes and the counters beside it; `slice_owner.rs` is which node
//!   owns a slice (rendezvous hashing over the cluster's nodes); `slice_reader.rs` streams
//!   a byte range slice by slice to one client; `slice_peer.rs` answers another node's
//!   request for a slice this node owns.
//! - `pass.rs`: a request of any other method (POST, PUT, DELETE, …) passed to the origin
//!   with its body streamed, the response relayed to that client alone and never stored;
//!   `invalidate.rs`: what a successful unsafe request drops (RFC 9111 §4.4), and the
//!   endpoint through which a router tells this node of one that went to another node,
//!   or of a purge (soft: marked stale; by prefix), answered with a typed outcome.

mod body;
pub mod cache_control;
mod client;
pub mod config;
mod conn;
mod cookies;
pub mod error;
mod fetch;
pub mod fields;
mod filling;
pub mod freshness;
mod grace;
mod hit_for_miss;
mod invalidate;
mod partial;
mod pass;
mod peers;
mod relay;
mod relayed;
mod resume;
mod serve;
mod site;
mod slice_owner;
mod slice_peer;
mod slice_reader;
mod slice_spec;
mod slice_state;
mod slices;
mod slicing;
mod state;
mod store;
mod upstream;
pub mod vary;

pub(crate) use body::OriginBody;
pub use client::OriginClient;
pub(crate) use client::OriginHead;
pub use config::{OriginConfig, OriginHost, OriginUrl, OriginUrlError, SetCookie};
pub use conn::OriginCounters;
pub use error::OriginError;
pub(crate) use invalidate::answer as answer_invalidation;
pub(crate) use pass::pass;
pub(crate) use relay::Relay;
pub(crate) use relayed::{write_relayed, OwnFields, UpstreamBody};
pub(crate) use serve::serve;
pub use slice_owner::owner as slice_owner;
pub use state::OriginState;

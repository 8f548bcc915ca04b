//! `larder node`: the back-end web server, built the way Flash was (AMPED: one event loop
//! that never waits for the disk, helper threads for anything that may block, and caches
//! for path translation, response headers and file data).
//!
//! Map of the crate:
//! - [`serve`] (`server.rs`): the accept loop, connection slots, graceful shutdown. It
//!   takes a bound listener and a shutdown future: the process around it (open-file
//!   limit, signals) is the caller's.
//! - `connection.rs`: one connection: pipelined requests in order, bodies skipped within
//!   limits (or handed on as a [`request_body`]), header/idle/send timeouts, large bodies streamed (sendfile or helpers).
//! - `respond.rs`: one request → one response: methods, report paths, dynamic route,
//!   static files; `static_file.rs` and `dynamic_route.rs` do the last two.
//! - [`request_body`]: the body of a request a caching node passes to its origin, read
//!   from the connection in pieces as it is sent on.
//! - `reply.rs`: what every answer is made of (`Reply`, `ReplyCtx`, bodies sent after the
//!   head) and the head, small-response and error-page writers; a leaf the above share.
//! - [`state`]: what the loop owns: caches (`cache::Lru`), helper pools, counters.
//! - [`translate`]: path translation (canonicalize, stay in the root, stat, open) and the
//!   pre-rendered header lines; [`path`]: URL path → safe relative path.
//! - [`disk`]: preadv2 RWF_NOWAIT, mincore residency, O_DIRECT reads, the cache-miss
//!   read, sendfile.
//! - `socket.rs`: reads that leave a drained socket not-ready, head + cached body in one
//!   `writev` with a timer only when the client is slow.
//! - [`pool`]: the helper threads; [`buffers`]: recycled I/O buffers;
//!   [`single_flight`]: one computation per key when many requests miss at once.
//! - [`conditional`], [`range`], [`content_type`]: HTTP semantics of static files.
//! - [`dynamic`]: the Domino-like synthetic dynamic content (pure functions).
//! - [`stats`]: counters, CPU/disk sampling from /proc (and the gap between samples), the
//!   JSON load report (`wire::LoadReport`) and the Prometheus rendering; [`pollers`]: the
//!   routers that polled the load report lately, by the ids they name.
//! - [`access_log`]: Combined Log Format entries (`wire::clf`), buffered and written by its
//!   own thread.
//! - [`origin`]: the node as a cache in front of origin servers (`--origin`): the pooled
//!   client, the HTTP caching rules, the object store, coalesced misses, 502/504.
//! - `handoff.rs`: adopting client connections a router on this host passes over a Unix
//!   socket (SCM_RIGHTS, [`wire::Handoff`]), served from the bytes the router read;
//!   [`handoff_config`]: its socket and limits ([`HandoffConfig`]); [`hand_on`]: passing
//!   such a connection on when a later request on it belongs to another node (peers),
//!   or [`forward`]ing the request to that node ([`ForwardConfig`], [`LaterRequests`]).
//! - [`config`]: every limit and switch, with safe defaults; [`error`]: [`NodeError`].

// `unsafe` only in the modules marked `allow(unsafe_code)` below (libc calls the standard
// library does not wrap: preadv2, sendfile, recv into spare capacity, thread CPU time).
#![deny(unsafe_code)]

pub mod access_log;
pub mod buffers;
pub mod conditional;
pub mod config;
mod connection;
pub mod content_type;
#[allow(unsafe_code)]
pub mod disk;
#[allow(unsafe_code)]
pub mod dynamic;
mod dynamic_route;
pub mod error;
#[cfg(feature = "clap")]
pub mod flags;
pub mod forward;
pub mod forward_config;
pub mod forwarder;
pub mod hand_on;
mod handoff;
pub mod handoff_config;
pub mod holdings;
pub mod later_requests;
pub mod origin;
#[cfg(feature = "clap")]
pub mod origin_flags;
pub mod path;
pub mod pollers;
pub mod pool;
pub mod range;
mod reply;
pub mod request_body;
mod respond;
#[allow(unsafe_code)]
mod server;
pub mod single_flight;
#[allow(unsafe_code)]
mod socket;
pub mod state;
mod static_file;
#[allow(unsafe_code)]
pub mod stats;
pub mod translate;

pub use config::{Config, ConfigError};
pub use dynamic::DynamicConfig;
pub use error::NodeError;
#[cfg(feature = "clap")]
pub use flags::{Flags, FlagsError};
pub use forward_config::ForwardConfig;
pub use hand_on::{Elsewhere, HandOn, SharedHandOn};
pub use handoff_config::HandoffConfig;
pub use http1::Limits;
pub use later_requests::LaterRequests;
#[cfg(feature = "clap")]
pub use origin_flags::OriginFlags;
pub use server::serve;

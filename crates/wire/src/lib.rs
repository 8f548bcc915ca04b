//! The contracts between larder's processes, written in one place and parsed in the same
//! place, so a writer and its readers cannot drift apart.
//!
//! Pure: no I/O, no clock, no async. Every function takes what it needs (times as Unix
//! seconds or milliseconds) and writes into buffers the caller owns and reuses.
//!
//! Map of the crate:
//! - [`load_report`]: [`LoadReport`], the JSON a node serves at its load path and the
//!   router's load monitor and the experiment runner read.
//! - [`ready`]: the "ready, listening on …" lines a node ([`NodeReady`]) and a router
//!   ([`RouterReady`]) print once bound, formatted and parsed by the same type.
//! - [`event`]: the one-JSON-object-per-line event format of the router's log.
//! - [`clf`]: one Common/Combined Log Format entry ([`clf::Entry`]), written by node,
//!   router and the synthetic log writer.
//! - [`clf_time`]: the CLF timestamp `29/Aug/1995:23:53:25 -0400`, written and parsed.
//! - [`percent`]: hex digits and `%XX` escapes, decoded and written.
//! - [`target_hint`]: [`TargetHint`], the `X-Larder-Target` field a router adds to each
//!   request it sends, so a node knows which target (and subtree) a body belongs to.
//! - [`peer_fill`]: [`PeerHint`], the `X-Larder-Peer` field naming the node a replica
//!   fills a target from, and the mark of a node's request to a peer.
//! - [`poller`]: [`PollerId`], the `X-Larder-Poller` field by which a router names
//!   itself on each poll of a node's load report, so the node can say how many poll it.
//! - [`slice_request`]: [`SliceRequest`], the `X-Larder-Slice` field by which a node asks
//!   another for one slice of a large object it owns.
//! - [`internal_field`]: [`INTERNAL_FIELDS`], the fields above, which only the cluster's
//!   own processes may send a node: dropped from what clients send.
//! - [`internal_path`]: [`INTERNAL_PATH_PREFIX`], `/.larder/`, the paths only the cluster's
//!   own processes use (load report, metrics, invalidation): refused from clients.
//! - [`target_digest`]: [`TargetDigest`], the Bloom filter of those targets a node's load
//!   report carries, so every router sees the same holders of a target.
//! - [`latency`]: [`LatencyHistogram`], request times in fixed buckets, counted by router
//!   and node, exported to Prometheus and carried in the router's `/stats`.
//! - [`exposition`]: [`Exposition`], the Prometheus text both processes serve, written by
//!   the `prometheus-client` encoder.
//! - [`router_stats`]: [`RouterStats`], the router's `/stats` JSON (its dashboard reads it).
//! - [`invalidation`]: [`Invalidation`], the request a router sends to the other nodes
//!   after an unsafe request for a target succeeded, so every node drops its copy (or, for
//!   a purge, marks it stale, or drops every target under a prefix).
//! - [`purge`]: [`PurgeRequest`], the `PURGE` an operator sends a router, and
//!   [`PurgeReport`], its answer (on how many nodes the target was held).
//! - [`handoff`]: [`Handoff`], the message a router sends a node on the same host beside
//!   a client's socket (SCM_RIGHTS), and the [`HandoffStep`]s that follow it.
//! - [`civil`]: calendar arithmetic (days ⇄ year, month, day), shared by HTTP dates and
//!   log timestamps.

#![forbid(unsafe_code)]

pub mod civil;
pub mod clf;
pub mod clf_time;
pub mod event;
pub mod exposition;
mod field_line;
pub mod handoff;
pub mod internal_field;
pub mod internal_path;
pub mod invalidation;
pub mod latency;
pub mod load_report;
pub mod peer_fill;
pub mod percent;
pub mod poller;
pub mod purge;
pub mod ready;
pub mod router_stats;
pub mod slice_request;
pub mod target_digest;
pub mod target_hint;

pub use civil::CivilTime;
pub use exposition::{Exposition, METRICS_CONTENT_TYPE};
pub use handoff::{Handoff, HandoffError, HandoffStep, HANDOFF_VERSION};
pub use internal_field::{is_internal_field, INTERNAL_FIELDS};
pub use internal_path::{is_internal_target, INTERNAL_PATH_PREFIX};
pub use invalidation::{
    Invalidation, InvalidationError, InvalidationOutcome, Mode as InvalidationMode,
    Scope as InvalidationScope, INVALIDATE_PATH,
};
pub use latency::{LatencyHistogram, LATENCY_BOUNDS_SECONDS};
pub use load_report::{LoadReport, LOAD_REPORT_PATH};
pub use peer_fill::{PeerHint, PEER_FILL_FIELD, PEER_FILL_HEADER, PEER_HEADER};
pub use poller::{PollerId, POLLER_HEADER};
pub use purge::{PurgeReport, PurgeRequest, PURGE_HEADER, PURGE_METHOD};
pub use ready::{NodeReady, RouterReady};
pub use router_stats::RouterStats;
pub use slice_request::{SliceRequest, SLICE_HEADER};
pub use target_digest::TargetDigest;
pub use target_hint::{TargetHint, TARGET_HINT_HEADER};

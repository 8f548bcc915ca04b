//! Trace-driven cluster simulator in the spirit of the LARD paper's, running larder's
//! own `policy` code at the front-end.
//!
//! Map of the crate:
//! - `model.rs`: [`Model`], what a request costs a node's CPU and disk (paper defaults).
//! - `config.rs`: [`SimConfig`], one run's settings (nodes, caches, policy, warm-up, S).
//! - `cache_sizes.rs`: [`CacheSizes`], one cache size for every node or one per node.
//! - `engine.rs`: [`Simulator`], the discrete-event simulation itself.
//! - `front_ends.rs`: the front-ends (routers), each with its own policy instance and a
//!   delayed view of the nodes' load ([`SimConfig::routers`]).
//! - `spread.rs`: [`Spread`], how requests reach the front-ends (per client or request).
//! - `cpu_pool.rs`: cores shared by every node's threads, the front-end and the clients
//!   (a cluster on one machine, [`SimConfig::shared_cpus`]).
//! - `event_queue.rs`: future events: a FIFO per server, their heads in a 4-ary heap.
//! - `membership.rs`: nodes added, removed or restarted during a run ([`SimConfig::events`]).
//! - `ideal.rs`: [`ideal_hit_ratio`], the one-big-cache reference.
//! - `result.rs`: [`RunResult`] and [`NodeResult`], what a run measured.
//! - `sweep.rs`: [`sweep`] over cluster sizes and policies ([`sweep_routers`]: and front-ends).
//! - `node_range.rs`: [`NodeRange`], the cluster sizes to run, and [`MAX_NODES`].
//! - `router_range.rs`: [`RouterRange`], the front-end counts to run, and [`MAX_ROUTERS`].
//! - `report.rs`: the readable table.
//! - `prefetch.rs`: memory read soon, loaded ahead without stalling.
//! - `timing.rs`: replay speed per run ([`TimedResult`], [`RunClock`]).
//! - `route_keys.rs`: targets keyed as larder route keys their URLs.
//! - `settings.rs`: settings in the user's units ([`ModelUnits`], [`PolicyOverrides`],
//!   [`GeneratedWorkload`]) turned into configs.
//! - `svg.rs`: throughput vs cluster size, one line per policy, as an SVG (`chart`).
//! - `error.rs`: [`SimError`].

// One `unsafe` block, in `prefetch.rs` (a CPU hint that reads nothing).
#![deny(unsafe_code)]

mod cache_sizes;
mod config;
mod cpu_pool;
mod engine;
mod error;
mod event_queue;
mod front_ends;
mod holdings;
mod ideal;
mod membership;
mod model;
mod node_range;
mod policy_targets;
mod prefetch;
mod report;
mod result;
mod route_keys;
mod router_range;
mod settings;
mod spread;
mod svg;
mod sweep;
mod timing;

pub use cache_sizes::CacheSizes;
pub use config::{SimConfig, DEFAULT_REPORT_DELAY_NS, MAX_SHARED_CPUS};
pub use engine::{Completion, Simulator};
pub use error::SimError;
pub use ideal::ideal_hit_ratio;
pub use model::Model;
pub use node_range::{NodeRange, MAX_NODES};
pub use report::table;
pub use result::{NodeResult, RunResult};
pub use route_keys::{route_targets, served_urls, target_urls};
pub use router_range::{RouterRange, MAX_ROUTERS};
pub use settings::{
    replayed_workload, report_delay_ns, GeneratedWorkload, ModelUnits, PolicyOverrides,
};
pub use spread::Spread;
pub use svg::throughput_svg;
pub use sweep::{sweep, sweep_routers};
pub use timing::{per_second, thread_cpu_seconds, RunClock, TimedResult};

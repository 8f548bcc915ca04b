//! Access logs and synthetic workloads for larder.
//!
//! Everything ends in a [`Workload`]: distinct targets (path, size) and compact requests
//! (target, client, time). The simulator replays it, the load generator sends it, the
//! docroot writer turns it into files a real server can serve.
//!
//! Map of the crate:
//! - `workload.rs`: [`Workload`], [`TargetInfo`], [`WorkRequest`].
//! - `clf.rs`: one Common/Combined Log Format line parsed from bytes ([`parse_line`]);
//!   a workload written as a log ([`write_log`]). The entry format and its timestamp
//!   belong to `wire` (`wire::clf`, `wire::clf_time`), shared with the access logs.
//! - `reader.rs`: open plain or gzip logs (by magic bytes), bounded line reading.
//! - `skip.rs`: [`SkipReason`], why a line did not become a request.
//! - `load.rs`: [`load_workload`] / [`load_reader`] with [`LoadOptions`] → [`LoadReport`].
//! - `session.rs`: per-user [`sessions`] with think times.
//! - `rng.rs`: the in-crate PRNG ([`Rng`]), so synthetic output never drifts.
//! - `synth.rs`: synthetic document stores and request streams ([`generate`]).
//! - `store_size.rs`: [`SynthConfig::sized`], a store sized by files, documents or MiB.
//! - `docroot.rs`: target → file mapping and the docroot writer.
//! - `stats.rs`: [`Stats`], including the ideal-cache working-set curve.
//! - `stats_table.rs`: [`stats_table`](fn@stats_table), the statistics in human units.
//! - `flash_crowd.rs`: [`FlashCrowd`], a target (or a few) jumping to a share of requests.
//! - `membership.rs`: [`MembershipEvent`], a node added, removed or restarted during a run.
//! - `duration_text.rs`: [`parse_duration`] for durations people write (`10s`, `500ms`).
//! - `size.rs`: [`parse_size`] for sizes people write (`64MB`, `1.4MiB`).
//! - `status_range.rs`: [`parse_status_range`] for status filters people write (`200-299`).
//! - `error.rs`: [`TraceError`].

#![forbid(unsafe_code)]

pub mod clf;
pub mod docroot;
mod duration_text;
mod error;
pub mod flash_crowd;
pub mod load;
pub mod membership;
pub mod reader;
pub mod rng;
pub mod session;
mod size;
mod skip;
pub mod stats;
pub mod stats_table;
mod status_range;
mod store_size;
pub mod synth;
pub mod workload;

pub use clf::{parse_line, write as write_log, write_file as write_log_file, LogLine};
pub use docroot::{served_url, write_docroot, write_docroot_watched, DocrootReport, MapError};
pub use duration_text::parse_duration;
pub use error::TraceError;
pub use flash_crowd::FlashCrowd;
pub use load::{load_reader, load_workload, LoadOptions, LoadReport};
pub use membership::{initial_members, Change, MembershipEvent};
pub use rng::Rng;
pub use session::{session_count, sessions, Session, SessionRequest, DEFAULT_IDLE_GAP_MS};
pub use size::parse_size;
pub use skip::SkipReason;
pub use stats::{Coverage, Stats};
pub use stats_table::{human_bytes, stats_table};
pub use status_range::{parse_status_range, StatusRangeError};
pub use synth::{docs_for_dataset, generate, Popularity, SizeMix, SynthConfig};
pub use workload::{TargetInfo, WorkRequest, Workload};

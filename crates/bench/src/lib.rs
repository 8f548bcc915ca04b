//! `bench`: larder's load generator (DBench, httperf and wrk2 in one) and its reports.
//!
//! Map of the crate:
//! - [`config`]: a run's settings ([`Config`], [`Mode`]); [`plan`]: what users send
//!   (single URL, per-user sessions with think times, a flat stream);
//!   [`crowd`]: a flash crowd played by the wall clock;
//!   [`load_shape`]: users, rate or ramp and limits as a config; [`workload_plan`]: a replayed or generated workload as a plan; [`base_url`]: where; [`duration_text`]: `10s`-style durations.
//! - [`http_client`]: a lean HTTP/1.1 client on raw TCP that counts bytes exactly.
//! - [`client`]: one user's connection and statistics; [`closed_loop`]: users that wait
//!   for each response; [`open_loop`]: a fixed rate, latency from the intended send time;
//!   [`ramp`]: DBench's user ramp and its stop conditions; [`run`](mod@run): epochs and the end.
//! - [`stats`], [`latency`]: counters and HDR latency histograms.
//! - [`report`]: the result; [`table`], [`html`] (charts from the `chart` crate): how it
//!   is shown;
//!   [`compare`]: the same workload against several targets, A B A B.
//! - [`progress`]: the live epoch line on a terminal.
//! - [`error`]: why a run could not start or its output not be written.

#![forbid(unsafe_code)]

pub mod base_url;
pub mod client;
pub mod closed_loop;
pub mod compare;
pub mod config;
pub mod crowd;
pub mod duration_text;
pub mod error;
pub mod html;
pub mod http_client;
pub mod latency;
pub mod load_shape;
pub mod open_loop;
pub mod plan;
pub mod progress;
pub mod ramp;
pub mod report;
pub mod run;
pub mod stats;
pub mod table;
pub mod workload_plan;

pub use base_url::BaseUrl;
pub use config::{Config, Mode};
pub use duration_text::parse_duration;
pub use error::BenchError;
pub use plan::Plan;
pub use ramp::{RampLimits, RampSpec, StopReason};
pub use report::Report;
pub use run::run;

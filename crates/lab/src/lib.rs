//! `lab`: larder's laboratory — local clusters of real processes (larder nodes, larder
//! route, HAProxy, nginx) started, watched and stopped, and the headline experiments run
//! on them. The `larder` binary's `up`, `up --bench` and `bench experiment` are thin
//! adapters over it.
//!
//! Processes:
//! - `signals`: SIGINT, SIGTERM and SIGCHLD, blocked and taken synchronously.
//! - `child`: one child process (its logs, its ready line, its last stderr lines) and
//!   `child::Group`s of them that stop when dropped.
//! - `probe`: "does it answer?" — one HTTP GET retried until a deadline.
//! - `load_report`: what a node's load report says.
//! - `cpu_time`: CPU seconds of a process, from /proc.
//! - `cpu_cap`: each node's CPU time capped at a share of a core, with a cgroup per node.
//! - `run_dir`: a temporary directory for one run's files.
//! - `launcher`: what every started process shares; free ports.
//! - `hosts`: hosts of their own (a network namespace each, shaped links on a bridge).
//!
//! Clusters:
//! - `store`: synthetic document stores, written once and reused.
//! - `nodes`: starting larder nodes.
//! - `route`: starting larder route on a [`router::RouterConfig`].
//! - `anchors`: HAProxy, nginx and Varnish configured as operators would.
//! - `cache_tier`: the caching clusters a user would pick instead of larder's nodes
//!   (Varnish instances sharded by a front Varnish, nginx's slice cache behind an nginx).
//! - `video`: the large-object workloads (whole objects and ranges, a cold crowd).
//! - `origin`: the origin experiment's origin (nginx serving the store).
//! - `origin_link`: its link, limited with `tc` inside a private network namespace.
//! - `front`: the front-end under test ([`System`]): larder route with a policy, or an anchor.
//! - `settled`: a router that has heard every node's load report (placement settled).
//! - `up`: `larder up` ([`UpConfig`]): nodes and one or more routers on one address.
//! - `self_signed`: `larder up --tls`'s generated certificate.
//!
//! Experiments:
//! - `plan`: [`ExperimentPlan`], checked into the run's `Setup`.
//! - `workload`: what the nodes serve and the request streams.
//! - `measure`: one front-end on one workload: fresh nodes, front-end, load, figures.
//! - `results`: rows, tables, JSON and charts.
//! - `claims`: every claim an experiment checks ([`Claim`]), its verdict and thresholds.
//! - `grouping`: runs by workload or scenario, then by system, for the tables.
//! - `profile`: what differs by experiment kind ([`Kind`]'s profile): defaults, figures, claims.
//! - `experiment`: the runner ([`experiment::run`]).
//! - `scenario`: the churn experiment's scenarios (a flash crowd, a node added, …).
//! - `churn`: one run of a scenario on real processes.
//! - `timeline`: figures every second of a churn run, its checks, JSON, CSV and charts.
//! - `run_shape`: `run_shape::RunShape`, the `shape.json` an experiment leaves for the fit.
//! - `report`: [`Report`], where everything lab says goes; the binary prints it.
//! - `sim_fit`: the simulator fitted to an experiment's rows, and how close it comes.
//!
//! - `error`: [`LabError`].

// `unsafe` only in the modules marked `allow(unsafe_code)` below: process signals,
// PR_SET_PDEATHSIG for children, a child joining its cgroup or its host's network namespace
// before exec, and sysconf,
// which the standard library does not wrap.
#![deny(unsafe_code)]

// What the binary calls: the two runners, whose `run`s keep their module's name, and
// the types re-exported below. Everything else is the crate's own.
#[allow(unsafe_code)]
pub mod experiment;
pub mod sim_fit;

mod anchors;
mod cache_tier;
#[allow(unsafe_code)]
mod child;
mod churn;
mod claims;
#[allow(unsafe_code)]
mod cpu_cap;
#[allow(unsafe_code)]
mod cpu_time;
mod error;
mod front;
mod grouping;
#[allow(unsafe_code)]
mod hosts;
mod launcher;
mod load_report;
mod measure;
mod merged_latency;
mod nginx_conf;
mod nodes;
mod origin;
mod origin_link;
mod peers;
mod plan;
mod probe;
mod profile;
mod report;
mod results;
mod route;
mod run_dir;
mod run_shape;
mod scenario;
mod self_signed;
mod settled;
#[allow(unsafe_code)]
mod signals;
mod store;
mod timeline;
mod up;
mod video;
mod workload;

pub use claims::Claim;
pub use error::LabError;
pub use front::System;
pub use hosts::{HostsConfig, LinkShape, Queue, Rate, Subnet};
pub use origin_link::OriginLink;
pub use plan::{Connections, ExperimentPlan, Kind, Ramp};
pub use report::Report;
pub use scenario::ScenarioKind;
pub use up::{UpConfig, MAX_ROUTERS};
pub use video::LargeObjects;
pub use workload::{DynCost, WorkloadKind};

//! Request-distribution policy for larder, kept pure: no I/O, no async, no clock.
//!
//! The router (a real front-end) and the simulator (`sim`) both drive the very same
//! code through the [`Policy`] trait, so what the simulator predicts is what the router
//! does. Time is always passed in as [`Nanos`].
//!
//! Map of the crate:
//! - [`nanos`]: [`Nanos`], the time every method is handed (the crate reads no clock).
//! - [`node`]: node identity ([`NodeId`]) and membership ([`NodeState`]).
//! - [`target`]: [`Target`] (normalised key, tree prefix, content class).
//! - [`mapper`]: URL → [`Target`] by a strict, documented rule ([`TargetMapper`]), with
//!   [`percent`] (canonical spelling; decoding is `wire::percent`) and [`stable_hash`] (FNV-1a, mix64).
//! - [`holdings`]: [`Holdings`], what a node says it holds (the seam for one placement
//!   across many routers).
//! - [`load`]: the [`LoadView`] a policy sees, one load number per node from a weighted formula.
//! - [`policy`]: the [`Policy`] trait, the seam between mechanism and policy.
//! - [`spec`]: [`PolicySpec`], a policy's name and parameters; [`build`](mod@build): the one
//!   place that makes a policy from one (it knows every policy; none knows it).
//! - one file per policy: [`rr`], [`wrr`], [`least`], [`hash`], [`bounded`], [`lard`],
//!   [`lard_r`], [`hacc`], [`class`].
//! - [`ring`]: the consistent-hash ring on node names shared by [`hash`] and [`bounded`];
//!   [`home`]: where a target this router has not placed goes, alike on every router
//!   (d candidates on a ring of node names weighed by weights and reported cache
//!   capacities; the least loaded of them, or the one that holds the target);
//!   [`candidate_memo`]: the candidates of targets that spill, computed once per ring.
//! - shared by the placement policies: [`roster`] (eligible nodes, least-loaded selection
//!   with rotating tie-breaks, LARD's overload test) and [`table`] (the target table,
//!   bounded by `table_cap`, evicting the coldest target); [`server_set`] is `lard-r`'s
//!   per-target node set.
//! - [`least_index`]: the eligible nodes by load, for `least`'s pick in O(log nodes).
//! - [`heat`]: which targets take a large share of the requests now (flash crowds), for
//!   `lard-r`'s replicas on every router alike.
//! - [`local_copies`]: on a peer, which hot targets its own node serves from a copy of
//!   its own, saving the hop to their owner.
//! - [`warmup`]: how much of its share a node that joined or restarted takes, from its
//!   reported uptime and hit ratio.

#![forbid(unsafe_code)]

pub mod bounded;
pub mod build;
pub mod candidate_memo;
pub mod class;
pub mod decayed;
pub mod hacc;
pub mod hash;
pub mod heat;
pub mod holdings;
pub mod home;
pub mod lard;
pub mod lard_r;
pub mod least;
pub mod least_index;
pub mod load;
pub mod local_copies;
pub mod mapper;
pub mod nanos;
pub mod node;
pub mod percent;
pub mod policy;
pub mod ring;
pub mod roster;
pub mod rr;
pub mod server_set;
pub mod spec;
pub mod stable_hash;
pub mod table;
pub mod target;
pub mod warmup;
pub mod wrr;

pub use build::build;
pub use holdings::Holdings;
pub use load::{LoadView, LoadWeights, NodeLoad};
pub use mapper::{Mapped, MapperConfig, TargetError, TargetMapper};
pub use nanos::{Nanos, SECOND};
pub use node::{NodeId, NodeState};
pub use policy::{Outcome, Policy, PolicyStats};
pub use spec::{Param, PlacementMode, PolicyKind, PolicySpec, SpecError};
pub use target::{ClassId, Target, TargetKey, TreePath, TREE_LEVELS};

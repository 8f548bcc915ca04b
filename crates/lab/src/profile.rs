//! What differs between the experiment kinds, in one place: a [`Profile`] per kind (see
//! [`crate::plan::Kind::profile`]) that the plan's defaults, the runs, the figures, the
//! head of the table and the claims read, instead of each of them matching on the kind.

use policy::PolicyKind::{self, *};

use crate::anchors::Anchor;
use crate::claims::{rows, Claim};
use crate::results::Row;
use crate::workload::{Content, WorkloadKind};

/// One experiment kind's defaults and shape.
pub(crate) struct Profile {
    /// The name on the command line (`larder bench experiment locality`).
    pub name: &'static str,
    /// The system the table's ratios are to.
    pub baseline: &'static str,
    /// The front-ends run when none are given: these larder policies, then these anchors.
    pub policies: &'static [PolicyKind],
    pub anchors: &'static [Anchor],
    /// The workloads run when none are given.
    pub workloads: &'static [WorkloadKind],
    /// Without `--pin`, the nodes go on CPUs spread over the machine and the front-end
    /// (and load generator) on the first node's: response times are compared, so a node
    /// must not wait for a CPU another one holds.
    pub pins_nodes_apart: bool,
    /// Static files with CPU-heavy dynamic requests mixed in, as two open loops (the
    /// static and the dynamic requests' response times apart); static workloads only.
    pub mixes_dynamic: bool,
    /// DBench's ramp runs after the measured load, when asked for.
    pub ramps: bool,
    /// Caching nodes in front of an origin (files only): the origin's figures are
    /// measured and have columns of their own.
    pub origin: bool,
    /// What one run leaves and what the claims are read from.
    pub runs: Runs,
}

/// How an experiment's runs are measured and judged.
pub(crate) enum Runs {
    /// One [`Row`] per run (the medians over rounds in the table), judged by `claims`
    /// (and the A/A controls, whatever the kind).
    Rows { claims: fn(&[Row]) -> Vec<Claim> },
    /// Figures every second of a churn scenario ([`crate::timeline`]), judged by
    /// [`crate::claims::churn`].
    Timelines,
}

const DYNAMIC: WorkloadKind = WorkloadKind { content: Content::Dynamic, zipf: false };
const STATIC: WorkloadKind = WorkloadKind { content: Content::Static, zipf: false };
const STATIC_ZIPF: WorkloadKind = WorkloadKind { content: Content::Static, zipf: true };

/// Policies and anchors on cache-bound workloads (LARD's and HACC's headline).
pub(crate) const LOCALITY: Profile = Profile {
    name: "locality",
    baseline: "wrr",
    policies: &[Wrr, Least, Hash, Bounded, Lard, LardR, Hacc],
    anchors: &Anchor::PROXIES,
    workloads: &[DYNAMIC, STATIC],
    pins_nodes_apart: false,
    mixes_dynamic: false,
    ramps: true,
    origin: false,
    runs: Runs::Rows { claims: rows::claims },
};

/// `class` routing against `rr` on static files with a share of dynamic requests
/// (HACC's ASP case).
pub(crate) const CLASSES: Profile = Profile {
    name: "classes",
    baseline: "rr",
    policies: &[Rr, Class],
    anchors: &[],
    workloads: &[STATIC],
    pins_nodes_apart: true,
    mixes_dynamic: true,
    ramps: false,
    origin: false,
    runs: Runs::Rows { claims: rows::claims },
};

/// Caching nodes in front of an origin over a link of limited bandwidth.
pub(crate) const ORIGIN: Profile = Profile {
    name: "origin",
    baseline: "wrr",
    policies: &[Wrr, Hash, Bounded, Lard, LardR],
    anchors: &Anchor::ORIGIN,
    workloads: &[STATIC, STATIC_ZIPF],
    pins_nodes_apart: false,
    mixes_dynamic: false,
    ramps: false,
    origin: true,
    runs: Runs::Rows { claims: rows::origin_claims },
};

/// A flash crowd, a node added, restarted or removed mid-run.
pub(crate) const CHURN: Profile = Profile {
    name: "churn",
    baseline: "wrr",
    policies: &[Hash, Bounded, Lard, LardR],
    anchors: &Anchor::CHURN,
    workloads: &[DYNAMIC],
    pins_nodes_apart: false,
    mixes_dynamic: false,
    ramps: false,
    origin: false,
    runs: Runs::Timelines,
};

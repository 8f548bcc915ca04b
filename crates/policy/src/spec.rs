//! A policy's name and parameters ([`PolicySpec`]); [`crate::build`](fn@crate::build) turns one into a
//! policy.

use std::str::FromStr;

use crate::heat::HeatConfig;
use crate::{ClassId, Nanos, NodeId, SECOND};

/// Every policy larder ships. In a config file, by its [`PolicyKind::name`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Deserialize, serde::Serialize))]
#[cfg_attr(feature = "serde", serde(try_from = "String", into = "&'static str"))]
pub enum PolicyKind {
    Rr,
    Wrr,
    Least,
    Hash,
    Bounded,
    Lard,
    LardR,
    Hacc,
    Class,
}

impl PolicyKind {
    pub const ALL: [PolicyKind; 9] = [
        PolicyKind::Rr,
        PolicyKind::Wrr,
        PolicyKind::Least,
        PolicyKind::Hash,
        PolicyKind::Bounded,
        PolicyKind::Lard,
        PolicyKind::LardR,
        PolicyKind::Hacc,
        PolicyKind::Class,
    ];

    pub fn name(self) -> &'static str {
        match self {
            PolicyKind::Rr => "rr",
            PolicyKind::Wrr => "wrr",
            PolicyKind::Least => "least",
            PolicyKind::Hash => "hash",
            PolicyKind::Bounded => "bounded",
            PolicyKind::Lard => "lard",
            PolicyKind::LardR => "lard-r",
            PolicyKind::Hacc => "hacc",
            PolicyKind::Class => "class",
        }
    }
}

impl std::fmt::Display for PolicyKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for PolicyKind {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<Self, SpecError> {
        PolicyKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| SpecError::UnknownPolicy(s.to_string()))
    }
}

/// How the placement policies (`lard`, `lard-r`, `hacc`) choose a node for a target this
/// router has not placed, and where an overloaded target spills. In a config file, by its
/// [`PlacementMode::name`].
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Deserialize, serde::Serialize))]
#[cfg_attr(feature = "serde", serde(try_from = "String", into = "&'static str"))]
pub enum PlacementMode {
    /// Alike on every router: the target's candidates in hash order on the nodes' names,
    /// a node that reports holding it first, none above T_high
    /// ([`crate::home`]). Many routers in front of one set of nodes keep one placement.
    #[default]
    Shared,
    /// Each router on its own: the least loaded node now (the papers' single front-end).
    /// Several routers then place one target on different nodes.
    PerRouter,
    /// As [`PlacementMode::Shared`], but every node's cache counted alike whatever the
    /// capacity it reports (only configured weights count): for comparison.
    SharedEqual,
}

impl PlacementMode {
    pub const ALL: [PlacementMode; 3] =
        [PlacementMode::Shared, PlacementMode::PerRouter, PlacementMode::SharedEqual];

    pub fn name(self) -> &'static str {
        match self {
            PlacementMode::Shared => "shared",
            PlacementMode::PerRouter => "per-router",
            PlacementMode::SharedEqual => "shared-equal",
        }
    }

    /// Whether every router computes the same first choices ([`crate::home`]).
    pub fn is_shared(self) -> bool {
        self != PlacementMode::PerRouter
    }
}

impl std::fmt::Display for PlacementMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for PlacementMode {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<Self, SpecError> {
        PlacementMode::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| SpecError::UnknownPlacement(s.to_string()))
    }
}

/// The names as config values: serde reads a name through these, so an unknown one is
/// refused with the list of known ones, as on the command line.
macro_rules! named {
    ($t:ty) => {
        impl TryFrom<String> for $t {
            type Error = SpecError;
            fn try_from(s: String) -> Result<Self, SpecError> {
                s.parse()
            }
        }

        impl From<$t> for &'static str {
            fn from(v: $t) -> &'static str {
                v.name()
            }
        }
    };
}

named!(PolicyKind);
named!(PlacementMode);

/// A pool of nodes serving one content class (policy `class`).
#[derive(Clone, Debug, PartialEq)]
pub struct ClassPool {
    pub class: ClassId,
    pub nodes: Vec<NodeId>,
    /// The policy that spreads this class over its pool.
    pub inner: PolicyKind,
}

/// A policy and all its parameters. Defaults are the papers' values.
#[derive(Clone, Debug, PartialEq)]
pub struct PolicySpec {
    pub kind: PolicyKind,
    /// LARD T_low: a node below it is underused (load units; connections by default).
    pub t_low: f64,
    /// LARD T_high: a node above it is overloaded; at 2·T_high a target moves regardless.
    pub t_high: f64,
    /// `bounded`: no node takes more than `ceil(c · (in_flight + 1) / n)` (HAProxy's
    /// `hash-balance-factor` 125 is c = 1.25).
    pub balance_factor: f64,
    /// Most target-table entries a policy keeps; cold ones are evicted beyond it.
    pub table_cap: usize,
    /// `lard-r`: a server set unchanged for this long loses a node (the paper's K).
    pub shrink_after: Nanos,
    /// `hacc`: a subtree splits into its children when its share of the requests exceeds
    /// this times its node's fair share.
    pub hacc_split: f64,
    /// `hacc`: a split subtree merges back into one when its share falls below this times
    /// its node's fair share (below `hacc_split`, so it does not flap).
    pub hacc_merge: f64,
    /// `hacc`: a node whose share of the requests exceeds this times its fair share hands
    /// subtrees to nodes that stay within half that margin.
    pub hacc_balance: f64,
    /// `hacc`: the deepest subtree level placed on its own (0 is the root; the mapper
    /// offers at most [`crate::TREE_LEVELS`] levels, the target itself the last).
    pub hacc_max_depth: usize,
    /// `hacc`: requests are counted over a window that decays by half in this time.
    pub hacc_half_life: Nanos,
    /// `class`: one pool per class; classes without a pool use every node not in a pool.
    pub classes: Vec<ClassPool>,
    /// `lard`, `lard-r`, `hacc`: placement shared by every router, or each router's own.
    pub placement: PlacementMode,
    /// The longest warm-up of a node that joined or restarted ([`crate::warmup`]); 0: none.
    pub warmup_max: Nanos,
    /// `lard-r`: when a target is hot enough for replicas on its next candidates
    /// ([`crate::heat`]).
    pub heat: HeatConfig,
    /// `lard-r` on a peer (a distributor in a node, [`crate::LoadView::local`]): the share
    /// (0–1) of its own node's cache that copies of the hottest targets may take, served
    /// there whichever node owns them ([`crate::local_copies`]); 0 turns local copies off.
    /// A router has no node of its own and makes none.
    pub local_copies: f64,
}

impl PolicySpec {
    pub fn new(kind: PolicyKind) -> Self {
        PolicySpec {
            kind,
            t_low: 25.0,
            t_high: 65.0,
            balance_factor: 1.25,
            table_cap: 1 << 20,
            shrink_after: 20 * SECOND,
            hacc_split: 0.25,
            hacc_merge: 0.0625,
            hacc_balance: 1.1,
            hacc_max_depth: crate::TREE_LEVELS,
            hacc_half_life: SECOND,
            classes: Vec::new(),
            placement: PlacementMode::Shared,
            warmup_max: crate::warmup::WarmupConfig::default().max,
            heat: HeatConfig::default(),
            local_copies: 0.125,
        }
    }

    /// Whether the policy keeps per-target placement (`lard`, `lard-r`, `hacc`, or
    /// `class` pools of them): only then are nodes told each request's target, so their
    /// digests say what they hold (and routers can count picks on holders).
    pub fn places_targets(&self) -> bool {
        matches!(
            self.kind,
            PolicyKind::Lard | PolicyKind::LardR | PolicyKind::Hacc | PolicyKind::Class
        )
    }

    /// Whether a node that joins or comes back takes its share of the targets as its
    /// reported hit ratio rises ([`crate::warmup`]): shared first choices weighed by
    /// warmth: the same policies that read holdings, those that place targets with
    /// shared placement.
    pub fn warms_nodes_up(&self) -> bool {
        self.reads_holdings()
    }

    /// Whether the policy places targets from what nodes report they hold.
    pub fn reads_holdings(&self) -> bool {
        self.places_targets() && self.placement.is_shared()
    }

    /// Check the parameters make sense together.
    pub fn validate(&self) -> Result<(), SpecError> {
        let bad = |param, why: &str| Err(SpecError::Invalid { param, why: why.to_string() });
        if self.t_low.is_nan() || self.t_low < 0.0 || self.t_low >= self.t_high {
            return bad(Param::TLow, "must be >= 0 and below t_high");
        }
        if self.balance_factor.is_nan() || self.balance_factor < 1.0 {
            return bad(Param::BalanceFactor, "must be >= 1.0");
        }
        if self.table_cap == 0 {
            return bad(Param::TableCap, "must be at least 1");
        }
        let merge_below_split = self.hacc_merge > 0.0 && self.hacc_merge < self.hacc_split;
        if !(merge_below_split && self.hacc_split.is_finite()) {
            return bad(Param::HaccMerge, "must be above 0 and below the split threshold");
        }
        let heat = &self.heat;
        if !(0.0..=1.0).contains(&heat.share) {
            return bad(Param::HotShare, "must be between 0 and 1");
        }
        if !heat.min_rate.is_finite() || heat.min_rate < 0.0 {
            return bad(Param::HotMinRate, "must be a number >= 0");
        }
        if !(0.0..=1.0).contains(&self.local_copies) {
            return bad(Param::LocalCopies, "must be between 0 and 1");
        }
        if self.hacc_balance.is_nan() || self.hacc_balance < 1.0 {
            return bad(Param::HaccBalance, "must be >= 1.0");
        }
        if self.hacc_half_life == 0 {
            return bad(Param::HaccHalfLife, "must be above 0");
        }
        if self.classes.iter().any(|p| p.inner == PolicyKind::Class) {
            return bad(Param::Classes, "a pool's inner policy cannot itself be `class`");
        }
        for (i, pool) in self.classes.iter().enumerate() {
            if pool.nodes.is_empty() {
                return bad(Param::Classes, "a pool needs at least one node");
            }
            if self.classes[..i].iter().any(|p| p.class == pool.class) {
                return bad(Param::Classes, "two pools for the same class");
            }
        }
        Ok(())
    }
}

/// The parameter of a [`PolicySpec`] an error is about, so that a caller reading the spec
/// from its own keys (the router's config file, the simulator's flags) can name its key.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Param {
    TLow,
    BalanceFactor,
    TableCap,
    HaccMerge,
    HaccBalance,
    HaccHalfLife,
    HotShare,
    HotMinRate,
    LocalCopies,
    Classes,
}

impl Param {
    /// The parameter's name here: the [`PolicySpec`] field it checks.
    pub fn name(self) -> &'static str {
        match self {
            Param::TLow => "t_low",
            Param::BalanceFactor => "balance_factor",
            Param::TableCap => "table_cap",
            Param::HaccMerge => "hacc_merge",
            Param::HaccBalance => "hacc_balance",
            Param::HaccHalfLife => "hacc_half_life",
            Param::HotShare => "hot_share",
            Param::HotMinRate => "hot_min_rps",
            Param::LocalCopies => "local_copies",
            Param::Classes => "classes",
        }
    }
}

/// Why a [`PolicySpec`] could not become a policy.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SpecError {
    #[error(
        "unknown policy `{0}` (known: rr, wrr, least, hash, bounded, lard, lard-r, hacc, class)"
    )]
    UnknownPolicy(String),
    #[error("unknown placement `{0}` (known: shared, per-router, shared-equal)")]
    UnknownPlacement(String),
    #[error("invalid policy parameters: {}: {why}", param.name())]
    Invalid { param: Param, why: String },
}

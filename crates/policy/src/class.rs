//! `class`: HACC's content classes, each served by its own pool of nodes.
//!
//! HACC kept dynamic content (Domino views, CGI) off the nodes serving static files, so a
//! CPU-bound request never evicts static data from a memory it has no use for. Each pool
//! runs its own inner policy (built by the function it is given, [`crate::build`](fn@crate::build) in
//! practice, with the same parameters but the
//! pool's inner kind) and hears of membership filtered to its nodes; node ids stay
//! global, so the one [`LoadView`] serves every pool unchanged.
//!
//! - A class with a configured pool ([`ClassPool`]) goes to that pool and nowhere else.
//! - Every other class goes to the rest pool: the listed nodes in no configured pool. Its
//!   inner policy is `lard`.
//! - With no pools configured, class 1 (dynamic) gets the last ⌈n/4⌉ listed nodes (by
//!   id) and the others serve everything else, both with `lard`; on a one-node cluster
//!   both classes share the node. These default pools follow the node list: a node
//!   leaving (not merely going down) can shift a node between pools, so configure pools
//!   to pin them.
//! - Pools are kept strictly apart: when a pool has no eligible node its classes get
//!   `None` (the router answers 503) rather than spilling onto another class's memory.
//!   So with configured pools that cover every node, unpooled classes get `None` too.
//!
//! `spec.table_cap` is split between the pools, so the sum of their tables stays within
//! it; the cap must therefore be at least the number of pools.

use crate::spec::{ClassPool, Param, PolicyKind, PolicySpec, SpecError};
use crate::{
    ClassId, LoadView, Nanos, NodeId, NodeState, Outcome, PlacementMode, Policy, PolicyStats,
    Target,
};

/// The inner policy of the rest pool and of the default pools.
pub const DEFAULT_INNER: PolicyKind = PolicyKind::Lard;

/// The class given its own pool when none is configured.
pub const DEFAULT_DYNAMIC_CLASS: ClassId = ClassId(1);

/// Which listed nodes make up a pool.
enum Members {
    /// A configured pool.
    Fixed(Vec<NodeId>),
    /// The default dynamic pool: the last ⌈n/4⌉ listed nodes.
    LastQuarter,
    /// The listed nodes in no other pool (with default pools: all of them if that is none).
    Rest,
}

struct Pool {
    members: Members,
    /// Indexed by node id: the node is in this pool now.
    holds: Vec<bool>,
    policy: Box<dyn Policy>,
}

pub struct Class {
    /// Configured pools in order, the rest pool last.
    pools: Vec<Pool>,
    /// Class id → index into `pools`.
    route: [u16; 256],
    /// No pools were configured: an empty rest pool takes every node.
    default_pools: bool,
}

impl Class {
    /// The policy `spec` describes, its pools' inner policies made by `build` (the crate's
    /// [`crate::build`](fn@crate::build), passed in so this file and the one that builds every policy do
    /// not import each other).
    pub fn from_spec(
        spec: &PolicySpec,
        build: fn(&PolicySpec) -> Result<Box<dyn Policy>, SpecError>,
    ) -> Result<Self, SpecError> {
        let mut members: Vec<(Members, PolicyKind)> = if spec.classes.is_empty() {
            vec![(Members::LastQuarter, DEFAULT_INNER)]
        } else {
            spec.classes.iter().map(|p| (Members::Fixed(p.nodes.clone()), p.inner)).collect()
        };
        members.push((Members::Rest, DEFAULT_INNER));
        let count = members.len();
        if spec.table_cap < count {
            return Err(SpecError::Invalid {
                param: Param::TableCap,
                why: format!("must be at least the number of class pools ({count})"),
            });
        }
        let mut route = [(count - 1) as u16; 256];
        if spec.classes.is_empty() {
            route[DEFAULT_DYNAMIC_CLASS.0 as usize] = 0;
        }
        for (i, ClassPool { class, .. }) in spec.classes.iter().enumerate() {
            route[class.0 as usize] = i as u16;
        }
        let pools = members
            .into_iter()
            .enumerate()
            .map(|(i, (members, kind))| {
                let mut inner = spec.clone();
                inner.kind = kind;
                inner.classes = Vec::new();
                inner.table_cap = spec.table_cap / count + usize::from(i < spec.table_cap % count);
                Ok(Pool { members, holds: Vec::new(), policy: build(&inner)? })
            })
            .collect::<Result<_, SpecError>>()?;
        Ok(Class { pools, route, default_pools: spec.classes.is_empty() })
    }

    fn pool_of(&self, class: ClassId) -> usize {
        self.route[class.0 as usize] as usize
    }
}

impl Policy for Class {
    fn name(&self) -> &'static str {
        "class"
    }

    fn pick(&mut self, target: &Target, view: &LoadView, now: Nanos) -> Option<NodeId> {
        let own = self.pool_of(target.class);
        self.pools[own].policy.pick(target, view, now)
    }

    fn done(&mut self, node: NodeId, target: &Target, outcome: Outcome, now: Nanos) {
        // A node that left its pool meanwhile is no concern of the pool's policy any more.
        let own = self.pool_of(target.class);
        let pool = &mut self.pools[own];
        if pool.holds.get(node.index()).copied().unwrap_or(false) {
            pool.policy.done(node, target, outcome, now);
        }
    }

    fn membership(&mut self, nodes: &[NodeState], now: Nanos) {
        let len = nodes.iter().map(|n| n.id.index() + 1).max().unwrap_or(0);
        let mut ids: Vec<NodeId> = nodes.iter().map(|n| n.id).collect();
        ids.sort_unstable();
        let mut in_a_pool = vec![false; len];
        for pool in &mut self.pools {
            pool.holds = vec![false; len];
            let chosen: &[NodeId] = match &pool.members {
                Members::Fixed(fixed) => fixed,
                Members::LastQuarter => &ids[ids.len() - ids.len().div_ceil(4)..],
                Members::Rest => &[],
            };
            for id in chosen.iter().filter(|id| id.index() < len) {
                pool.holds[id.index()] = true;
                in_a_pool[id.index()] = true;
            }
        }
        let rest = self.pools.last_mut().expect("the rest pool always exists");
        let rest_nodes = ids.iter().filter(|id| !in_a_pool[id.index()]);
        let rest_nodes: Vec<NodeId> = rest_nodes.copied().collect();
        let everyone = rest_nodes.is_empty() && self.default_pools;
        for id in if everyone { &ids } else { &rest_nodes } {
            rest.holds[id.index()] = true;
        }
        for pool in &mut self.pools {
            let mine: Vec<NodeState> =
                nodes.iter().filter(|n| pool.holds[n.id.index()]).copied().collect();
            pool.policy.membership(&mine, now);
        }
    }

    fn stats(&self) -> PolicyStats {
        self.pools.iter().map(|p| p.policy.stats()).fold(PolicyStats::default(), |a, s| {
            PolicyStats {
                table_entries: a.table_entries + s.table_entries,
                reassignments: a.reassignments + s.reassignments,
                replications: a.replications + s.replications,
                evictions: a.evictions + s.evictions,
            }
        })
    }

    fn placement(&self, target: &Target) -> Vec<NodeId> {
        self.pools[self.pool_of(target.class)].policy.placement(target)
    }

    /// The rule of the first pool that keeps a placement (pools share the view, so they
    /// agree on whether this router is alone).
    fn placement_followed(&self) -> Option<PlacementMode> {
        self.pools.iter().find_map(|p| p.policy.placement_followed())
    }
}

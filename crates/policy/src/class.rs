//! `class`: HACC's content classes, each served by its own pool of nodes.
//!
//! HACC kept dynamic content (Domino views, CGI) off the nodes serving static files, so a
//! CPU-bound request never evicts static data from a memory it has no use for. Each pool
//! runs its own inner policy (built by [`crate::build`] with the same parameters but the
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

use crate::spec::ClassPool;
use crate::{
    ClassId, LoadView, Nanos, NodeId, NodeState, Outcome, Policy, PolicyKind, PolicySpec,
    PolicyStats, SpecError, Target,
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
    pub fn from_spec(spec: &PolicySpec) -> Result<Self, SpecError> {
        let mut members: Vec<(Members, PolicyKind)> = if spec.classes.is_empty() {
            vec![(Members::LastQuarter, DEFAULT_INNER)]
        } else {
            spec.classes.iter().map(|p| (Members::Fixed(p.nodes.clone()), p.inner)).collect()
        };
        members.push((Members::Rest, DEFAULT_INNER));
        let count = members.len();
        if spec.table_cap < count {
            return Err(SpecError::Invalid(format!(
                "table_cap must be at least the number of class pools ({count})"
            )));
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
                Ok(Pool { members, holds: Vec::new(), policy: crate::build(&inner)? })
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TargetKey;

    fn of_class(key: u64, class: u8) -> Target {
        Target { key: TargetKey(key), tree: TargetKey(key), class: ClassId(class) }
    }

    fn picks(p: &mut Class, class: u8, n: usize) -> Vec<u32> {
        let v = LoadView::new(n);
        let mut nodes: Vec<u32> =
            (0..40).map(|k| p.pick(&of_class(k, class), &v, 0).unwrap().0).collect();
        nodes.sort_unstable();
        nodes.dedup();
        nodes
    }

    #[test]
    fn configured_pools_keep_their_classes() {
        let mut spec = PolicySpec::new(PolicyKind::Class);
        spec.classes = vec![
            ClassPool {
                class: ClassId(2),
                nodes: vec![NodeId(0), NodeId(1)],
                inner: PolicyKind::Lard,
            },
            ClassPool { class: ClassId(3), nodes: vec![NodeId(2)], inner: PolicyKind::LardR },
        ];
        let mut p = Class::from_spec(&spec).unwrap();
        p.membership(&NodeState::uniform(5), 0);
        assert_eq!(picks(&mut p, 2, 5), vec![0, 1]);
        assert_eq!(picks(&mut p, 3, 5), vec![2]);
        assert_eq!(picks(&mut p, 0, 5), vec![3, 4], "classes without a pool use the rest");
        assert_eq!(picks(&mut p, 9, 5), vec![3, 4]);
        assert_eq!(p.stats().table_entries, 120);
        let fresh = of_class(1000, 3);
        assert_eq!(p.pick(&fresh, &LoadView::new(5), 0), Some(NodeId(2)));
        assert_eq!(p.placement(&fresh), vec![NodeId(2)]);
    }

    #[test]
    fn default_pools_give_a_quarter_to_dynamic_content() {
        let mut p = Class::from_spec(&PolicySpec::new(PolicyKind::Class)).unwrap();
        p.membership(&NodeState::uniform(6), 0);
        assert_eq!(picks(&mut p, 1, 6), vec![4, 5]);
        assert_eq!(picks(&mut p, 0, 6), vec![0, 1, 2, 3]);
        p.membership(&NodeState::uniform(1), 0);
        assert_eq!(picks(&mut p, 0, 1), vec![0], "an empty rest means every node");
        assert_eq!(picks(&mut p, 1, 1), vec![0]);
    }

    #[test]
    fn a_pool_with_no_node_up_refuses_and_a_node_coming_back_takes_work_again() {
        let mut spec = PolicySpec::new(PolicyKind::Class);
        spec.classes =
            vec![ClassPool { class: ClassId(1), nodes: vec![NodeId(0)], inner: PolicyKind::Lard }];
        let mut p = Class::from_spec(&spec).unwrap();
        let mut nodes = NodeState::uniform(3);
        p.membership(&nodes, 0);
        assert_eq!(picks(&mut p, 1, 3), vec![0]);
        nodes[0].up = false;
        p.membership(&nodes, 1);
        let v = LoadView::new(3);
        assert_eq!(p.pick(&of_class(0, 1), &v, 1), None, "no spilling onto other pools");
        assert_eq!(p.stats().table_entries, 0, "the down node's targets are dropped");
        assert_eq!(picks(&mut p, 0, 3), vec![1, 2]);
        nodes[0].up = true;
        p.membership(&nodes, 2);
        assert_eq!(picks(&mut p, 1, 3), vec![0]);
        p.membership(&nodes[..1], 3);
        assert_eq!(p.pick(&of_class(0, 0), &v, 3), None, "configured pools cover every node");
    }

    #[test]
    fn the_pools_tables_share_the_cap() {
        let mut spec = PolicySpec::new(PolicyKind::Class);
        spec.table_cap = 5;
        let mut p = Class::from_spec(&spec).unwrap();
        p.membership(&NodeState::uniform(4), 0);
        picks(&mut p, 0, 4);
        picks(&mut p, 1, 4);
        assert_eq!(p.stats().table_entries, 5);
        spec.table_cap = 1;
        assert!(matches!(Class::from_spec(&spec), Err(SpecError::Invalid(_))));
    }
}

//! The [`Policy`] contract, checked for every [`PolicyKind`] through [`policy::build`].
//!
//! Random runs mix membership changes (nodes joining, leaving, going down, coming back,
//! drained to weight 0), picks for random targets (the caller records them in the view, as
//! the router and simulator do), completions in random order and time passing. After
//! every step: a pick never lands on a node that cannot take work, `None` comes only when
//! no node could, `bounded` never puts a node over its bound, and tables stay within a
//! small cap.

use policy::bounded::load_bound;
use policy::spec::ClassPool;
use policy::{
    build, ClassId, LoadView, Nanos, NodeId, NodeState, Outcome, Policy, PolicyKind, PolicySpec,
    Target, TargetKey, SECOND,
};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;

const MAX_NODES: usize = 8;
const TABLE_CAP: usize = 6;
const BALANCE_FACTOR: f64 = 1.25;

#[derive(Clone, Debug)]
enum Op {
    /// Slot `i` is node `i`: `None` has left, else (weight, up).
    Membership(Vec<Option<(u32, bool)>>),
    Pick {
        key: u64,
        class: u8,
    },
    /// Finish the in-flight request at `index % in_flight`.
    Done {
        index: usize,
        failed: bool,
    },
    Advance(Nanos),
}

fn op() -> impl Strategy<Value = Op> {
    let slot = proptest::option::weighted(0.85, (0u32..4, proptest::bool::weighted(0.8)));
    prop_oneof![
        1 => proptest::collection::vec(slot, 0..=MAX_NODES).prop_map(Op::Membership),
        8 => (0u64..40, 0u8..3).prop_map(|(key, class)| Op::Pick { key, class }),
        5 => (any::<usize>(), any::<bool>()).prop_map(|(index, failed)| Op::Done { index, failed }),
        1 => (0..30 * SECOND).prop_map(Op::Advance),
    ]
}

/// Small thresholds and a small table cap, so reassignment, replication, shrinking,
/// offloading and eviction all happen within a short run.
fn spec(kind: PolicyKind) -> PolicySpec {
    PolicySpec {
        t_low: 2.0,
        t_high: 4.0,
        balance_factor: BALANCE_FACTOR,
        table_cap: TABLE_CAP,
        shrink_after: SECOND,
        hacc_half_life: SECOND / 10,
        classes: vec![
            ClassPool {
                class: ClassId(1),
                nodes: vec![NodeId(0), NodeId(1), NodeId(2)],
                inner: PolicyKind::Lard,
            },
            ClassPool {
                class: ClassId(2),
                nodes: vec![NodeId(3), NodeId(4)],
                inner: PolicyKind::Bounded,
            },
        ],
        ..PolicySpec::new(kind)
    }
}

/// The nodes that may take `target`: eligible ones, and for `class` only its pool (or,
/// for a class without a pool, the nodes in no pool).
fn allowed(spec: &PolicySpec, nodes: &[NodeState], target: &Target) -> Vec<NodeId> {
    let pool_of = |id: NodeId| spec.classes.iter().find(|p| p.nodes.contains(&id)).map(|p| p.class);
    let has_pool = spec.classes.iter().any(|p| p.class == target.class);
    nodes
        .iter()
        .filter(|n| n.eligible())
        .map(|n| n.id)
        .filter(|&id| {
            spec.kind != PolicyKind::Class
                || match pool_of(id) {
                    Some(class) => class == target.class,
                    None => !has_pool,
                }
        })
        .collect()
}

fn run(kind: PolicyKind, ops: &[Op]) -> Result<(), TestCaseError> {
    let spec = spec(kind);
    // Every kind must build: one that cannot fails its contract rather than skip it.
    let mut policy: Box<dyn Policy> =
        build(&spec).map_err(|e| TestCaseError::fail(format!("{kind}: {e}")))?;
    prop_assert_eq!(policy.name(), kind.name());
    let mut now: Nanos = 0;
    let mut nodes = NodeState::uniform(4);
    let mut view = LoadView::new(MAX_NODES);
    let mut in_flight: Vec<(NodeId, Target)> = Vec::new();
    policy.membership(&nodes, now);
    for op in ops {
        match op {
            Op::Membership(slots) => {
                nodes = slots
                    .iter()
                    .enumerate()
                    .filter_map(|(i, s)| {
                        s.map(|(weight, up)| NodeState {
                            id: NodeId(i as u32),
                            weight,
                            up,
                            name: NodeState::name_hash(&format!("n{}", i + 1)),
                        })
                    })
                    .collect();
                policy.membership(&nodes, now);
            }
            Op::Pick { key, class } => {
                let target =
                    Target::new(TargetKey(*key), TargetKey(key / 4 + 1000), ClassId(*class));
                let may = allowed(&spec, &nodes, &target);
                match policy.pick(&target, &view, now) {
                    Some(node) => {
                        prop_assert!(
                            may.contains(&node),
                            "{kind} picked {node:?}, allowed {may:?}"
                        );
                        if kind == PolicyKind::Bounded {
                            let eligible = nodes.iter().filter(|n| n.eligible()).count();
                            let bound =
                                load_bound(BALANCE_FACTOR, view.total_in_flight(), eligible);
                            prop_assert!(
                                u64::from(view.in_flight(node)) < bound,
                                "bounded put a request on {node:?}, already at its bound {bound}"
                            );
                        }
                        view.started(node);
                        in_flight.push((node, target));
                    }
                    None => prop_assert!(may.is_empty(), "{kind} refused; could use {may:?}"),
                }
            }
            Op::Done { index, failed } => {
                if !in_flight.is_empty() {
                    let (node, target) = in_flight.swap_remove(index % in_flight.len());
                    let outcome = if *failed { Outcome::Failed } else { Outcome::Ok };
                    policy.done(node, &target, outcome, now);
                    view.finished(node);
                }
            }
            Op::Advance(dt) => now += dt,
        }
        let entries = policy.stats().table_entries;
        prop_assert!(entries <= TABLE_CAP as u64, "{kind} holds {entries} table entries");
    }
    Ok(())
}

fn config() -> ProptestConfig {
    ProptestConfig { rng_seed: RngSeed::Fixed(0xc0de), ..ProptestConfig::with_cases(96) }
}

macro_rules! contract {
    ($($test:ident => $kind:expr),* $(,)?) => {
        proptest! {
            #![proptest_config(config())]
            $(
                #[test]
                fn $test(ops in proptest::collection::vec(op(), 1..160)) {
                    run($kind, &ops)?;
                }
            )*
        }

        /// The list above names every kind, so a new kind cannot go unchecked.
        #[test]
        fn every_kind_is_checked() {
            let listed = [$($kind),*];
            for kind in PolicyKind::ALL {
                assert!(listed.contains(&kind), "no contract test for `{kind}`");
            }
        }
    };
}

contract! {
    rr => PolicyKind::Rr,
    wrr => PolicyKind::Wrr,
    least => PolicyKind::Least,
    hash => PolicyKind::Hash,
    bounded => PolicyKind::Bounded,
    lard => PolicyKind::Lard,
    lard_r => PolicyKind::LardR,
    hacc => PolicyKind::Hacc,
    class => PolicyKind::Class,
}

/// A long run on one big cluster, where rotation and eviction paths get real traffic.
#[test]
fn every_kind_survives_a_long_busy_run() {
    let mut ops = Vec::new();
    for i in 0..4000u64 {
        ops.push(Op::Pick { key: (i * 7919) % 97, class: (i % 3) as u8 });
        if i % 3 == 0 {
            ops.push(Op::Done { index: i as usize, failed: i % 30 == 0 });
        }
        if i % 500 == 0 {
            ops.push(Op::Advance(SECOND / 2));
        }
        if i % 1000 == 999 {
            let slots =
                (0..MAX_NODES).map(|n| Some((1 + n as u32 % 3, n as u64 != i % 8))).collect();
            ops.push(Op::Membership(slots));
        }
    }
    for kind in PolicyKind::ALL {
        run(kind, &ops).unwrap_or_else(|e| panic!("{kind}: {e}"));
    }
}

//! Placement through membership changes: random sequences of nodes joining, leaving and
//! coming back, with the placement policies' own tables in between. On a cluster with
//! room (no overload), a change moves only the targets of the node that changed: a node
//! that leaves hands each of its targets to that target's next choice, a node that joins
//! or comes back takes only targets that now choose it first, and every other target
//! stays where it was.

use policy::home::{Capacity, Homes};
use policy::Target;
use policy::{build, LoadView, NodeId, NodeState, PlacementMode, Policy, PolicyKind, PolicySpec};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;

const SLOTS: usize = 10;
const TARGETS: u64 = 400;

/// One membership change: slot `i` flips between present and absent.
fn changes() -> impl Strategy<Value = (Vec<bool>, Vec<usize>, Vec<u64>)> {
    (
        proptest::collection::vec(proptest::bool::weighted(0.6), SLOTS),
        proptest::collection::vec(0..SLOTS, 1..12),
        proptest::collection::vec(prop_oneof![Just(0u64), 8u64..64], SLOTS),
    )
}

fn nodes(present: &[bool]) -> Vec<NodeState> {
    NodeState::uniform(SLOTS).into_iter().filter(|n| present[n.id.index()]).collect()
}

fn target(k: u64) -> Target {
    Target::from_key(k.wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

/// The node each target is served by now.
fn served(p: &mut dyn Policy, view: &LoadView, now: u64) -> Vec<Option<NodeId>> {
    (0..TARGETS).map(|k| p.pick(&target(k), view, now)).collect()
}

fn check(kind: PolicyKind, start: Vec<bool>, flips: Vec<usize>, mib: Vec<u64>) {
    let mut p = build(&PolicySpec::new(kind)).unwrap();
    // Unequal caches as reported (0: a node that reports none).
    let mut view = LoadView::new(SLOTS);
    for (i, m) in mib.iter().enumerate() {
        view.set_capacity(NodeId(i as u32), m << 20);
    }
    let mut present = start;
    p.membership(&nodes(&present), 0);
    let mut before = served(p.as_mut(), &view, 0);
    for (step, &slot) in flips.iter().enumerate() {
        let now = step as u64 + 1;
        let mut homes = Homes::new(Capacity::Weighed);
        homes.rebuild(&nodes(&present));
        homes.sync(&view);
        let old_candidates: Vec<Vec<NodeId>> =
            (0..TARGETS).map(|k| homes.candidates(target(k).key).as_slice().to_vec()).collect();
        present[slot] = !present[slot];
        let changed = NodeId(slot as u32);
        p.membership(&nodes(&present), now);
        let after = served(p.as_mut(), &view, now);
        for k in 0..TARGETS as usize {
            let (b, a) = (before[k], after[k]);
            if present[slot] {
                assert!(a == b || a == Some(changed), "{kind} join of {slot}: {b:?} → {a:?}");
            } else if b == Some(changed) {
                let next = old_candidates[k].iter().copied().find(|&n| n != changed);
                assert_eq!(a, next, "{kind} leave of {slot}: target {k} to its next choice");
            } else {
                assert_eq!(a, b, "{kind} leave of {slot}: target {k} on another node moved");
            }
        }
        before = after;
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 48,
        rng_seed: RngSeed::Fixed(12),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn only_the_changed_nodes_targets_move((start, flips, mib) in changes()) {
        for kind in [PolicyKind::Lard, PolicyKind::LardR] {
            check(kind, start.clone(), flips.clone(), mib.clone());
        }
    }
}

#[test]
fn placement_modes_name_themselves() {
    for mode in PlacementMode::ALL {
        assert_eq!(mode.name().parse::<PlacementMode>(), Ok(mode));
    }
}

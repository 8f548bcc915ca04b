//! Shared placement: two policy instances (two routers) with different histories agree on
//! every target when they see the same loads and the same holdings, for every policy that
//! keeps per-target state; per-router tables do not.

use std::sync::Arc;

use policy::{
    build, Holdings, LoadView, NodeId, NodeState, PlacementMode, Policy, PolicyKind, PolicySpec,
    Target, TargetKey,
};

const NODES: usize = 6;
const KINDS: [PolicyKind; 3] = [PolicyKind::Lard, PolicyKind::LardR, PolicyKind::Hacc];

fn policy(kind: PolicyKind, placement: PlacementMode) -> Box<dyn Policy> {
    let spec = PolicySpec { placement, ..PolicySpec::new(kind) };
    let mut p = build(&spec).unwrap();
    p.membership(&NodeState::uniform(NODES), 0);
    p
}

fn target(k: u64) -> Target {
    let key = k.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    Target::new(TargetKey(key), TargetKey(key ^ 1), Default::default())
}

/// Loads with two nodes above T_high (65) and one below T_low (25).
fn busy_view() -> LoadView {
    let mut v = LoadView::new(NODES);
    for (node, load) in [(0, 70), (1, 40), (2, 80), (3, 10), (4, 50), (5, 30)] {
        for _ in 0..load {
            v.started(NodeId(node));
        }
    }
    v
}

/// The same reports as [`busy_view`]'s loads (two nodes above T_high, one below T_low),
/// polled by a router that has `own[i]` requests of its own in flight on node i.
fn reported_view(own: [u32; NODES]) -> LoadView {
    let mut v = LoadView::new(NODES);
    for (node, load) in [(0, 70), (1, 40), (2, 80), (3, 10), (4, 50), (5, 30)] {
        v.report_in_flight(NodeId(node), load);
        for _ in 0..own[node as usize] {
            v.started(NodeId(node));
        }
    }
    v
}

/// Targets 0..n picked by both instances; instance `a` first placed 50 targets of its own.
fn agreement(kind: PolicyKind, placement: PlacementMode, view: &LoadView) -> usize {
    agreement_on(kind, placement, [view, view])
}

/// [`agreement`] with each instance on a view of its own.
fn agreement_on(kind: PolicyKind, placement: PlacementMode, [va, vb]: [&LoadView; 2]) -> usize {
    let (mut a, mut b) = (policy(kind, placement), policy(kind, placement));
    for k in 1000..1050 {
        a.pick(&target(k), va, 0);
    }
    (0..300).filter(|&k| a.pick(&target(k), va, 1) == b.pick(&target(k), vb, 1)).count()
}

/// Two routers that polled the same reports but each count requests of their own in
/// flight (below T_high, so LARD's overload rule leaves their placements alone): a
/// target neither has placed goes where the reports say, alike on both, for LARD's
/// policies; per router each takes its own least loaded node.
#[test]
fn shared_placement_agrees_on_the_same_reports_whatever_each_router_has_in_flight() {
    let a = reported_view([0, 9, 0, 20, 3, 0]);
    let b = reported_view([12, 0, 5, 0, 0, 17]);
    for kind in [PolicyKind::Lard, PolicyKind::LardR] {
        assert_eq!(agreement_on(kind, PlacementMode::Shared, [&a, &b]), 300, "{kind}");
        let per_router = agreement_on(kind, PlacementMode::PerRouter, [&a, &b]);
        assert!(per_router < 150, "{kind}: per-router tables agreed on {per_router} of 300");
    }
}

#[test]
fn shared_placement_agrees_whatever_each_router_saw_before() {
    for kind in KINDS {
        for view in [LoadView::new(NODES), busy_view()] {
            assert_eq!(agreement(kind, PlacementMode::Shared, &view), 300, "{kind}");
        }
        let per_router = agreement(kind, PlacementMode::PerRouter, &LoadView::new(NODES));
        assert!(per_router < 150, "{kind}: per-router tables agreed on {per_router} of 300");
    }
}

/// Holds every key it was given.
#[derive(Debug)]
struct Held(Vec<u64>);
impl Holdings for Held {
    fn holds(&self, key: TargetKey) -> bool {
        self.0.contains(&key.0)
    }
}

#[test]
fn a_new_router_follows_the_nodes_holdings_from_its_first_pick() {
    for kind in KINDS {
        // The first router placed each target by its own rule; the nodes now report it.
        let mut first = policy(kind, PlacementMode::PerRouter);
        let view = LoadView::new(NODES);
        let placed: Vec<NodeId> =
            (0..120).map(|k| first.pick(&target(k), &view, 0).unwrap()).collect();
        let mut reported = LoadView::new(NODES);
        for node in 0..NODES {
            let held = (0..120u64)
                .filter(|&k| placed[k as usize] == NodeId(node as u32))
                .flat_map(|k| [target(k).key.0, target(k).tree.0])
                .collect();
            reported.set_holdings(NodeId(node as u32), Some(Arc::new(Held(held))));
        }
        let mut late = policy(kind, PlacementMode::Shared);
        for k in 0..120u64 {
            assert_eq!(late.pick(&target(k), &reported, 1), Some(placed[k as usize]), "{kind}");
        }
        // Without the reports the late router would have hashed most targets elsewhere.
        let mut blind = policy(kind, PlacementMode::Shared);
        let same =
            (0..120u64).filter(|&k| blind.pick(&target(k), &view, 1) == Some(placed[k as usize]));
        assert!(same.count() < 60, "{kind}");
    }
}

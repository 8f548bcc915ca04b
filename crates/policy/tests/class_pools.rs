//! `class`: content classes kept to their pools, default pools, and the shared table cap.

use policy::class::Class;
use policy::spec::ClassPool;
use policy::{
    ClassId, LoadView, NodeId, NodeState, Policy, PolicyKind, PolicySpec, SpecError, Target,
    TargetKey,
};

fn of_class(key: u64, class: u8) -> Target {
    Target::new(TargetKey(key), TargetKey(key), ClassId(class))
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
        ClassPool { class: ClassId(2), nodes: vec![NodeId(0), NodeId(1)], inner: PolicyKind::Lard },
        ClassPool { class: ClassId(3), nodes: vec![NodeId(2)], inner: PolicyKind::LardR },
    ];
    let mut p = Class::from_spec(&spec, policy::build).unwrap();
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
    let mut p = Class::from_spec(&PolicySpec::new(PolicyKind::Class), policy::build).unwrap();
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
    let mut p = Class::from_spec(&spec, policy::build).unwrap();
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
    let mut p = Class::from_spec(&spec, policy::build).unwrap();
    p.membership(&NodeState::uniform(4), 0);
    picks(&mut p, 0, 4);
    picks(&mut p, 1, 4);
    assert_eq!(p.stats().table_entries, 5);
    spec.table_cap = 1;
    assert!(matches!(Class::from_spec(&spec, policy::build), Err(SpecError::Invalid { .. })));
}

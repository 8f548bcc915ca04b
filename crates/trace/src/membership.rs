//! Membership events of a run: a node added, removed or restarted at a given time.
//!
//! Written `add:n4@20s`, `remove:n3@20s`, `restart:n2@20s` (nodes are named n1, n2, … in
//! the order of their caches; `4` is `n4`). A node whose first event is `add` is not in
//! the cluster when the run starts. The lab plays them on real processes (start a node
//! and reload the routers; stop one; kill one and start it again on its address), the
//! simulator in its engine.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use crate::duration_text::parse_duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// The node joins (cold).
    Add,
    /// The node leaves: no new requests; those in flight finish.
    Remove,
    /// The node stops and starts again on its address, its cache empty.
    Restart,
}

impl Change {
    pub fn name(self) -> &'static str {
        match self {
            Change::Add => "add",
            Change::Remove => "remove",
            Change::Restart => "restart",
        }
    }
}

/// One membership event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MembershipEvent {
    pub change: Change,
    /// The node, 0-based (`n1` is 0).
    pub node: usize,
    /// When, since the start of the run.
    pub at: Duration,
}

impl FromStr for MembershipEvent {
    type Err = String;

    /// `CHANGE:NODE@TIME`, e.g. `add:n4@20s`.
    fn from_str(s: &str) -> Result<Self, String> {
        let usage = || format!("{s:?}: expected add|remove|restart:nN@TIME, e.g. add:n4@20s");
        let (change, rest) = s.trim().split_once(':').ok_or_else(usage)?;
        let (node, at) = rest.split_once('@').ok_or_else(usage)?;
        let change = match change {
            "add" => Change::Add,
            "remove" => Change::Remove,
            "restart" => Change::Restart,
            _ => return Err(usage()),
        };
        let number = node.strip_prefix('n').unwrap_or(node);
        let node = match number.parse::<usize>() {
            Ok(n) if n >= 1 => n - 1,
            _ => return Err(format!("{s:?}: nodes are named n1, n2, …")),
        };
        Ok(MembershipEvent { change, node, at: parse_duration(at)? })
    }
}

impl fmt::Display for MembershipEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:n{}@{}s", self.change.name(), self.node + 1, self.at.as_secs_f64())
    }
}

/// Which of `nodes` nodes are in the cluster when the run starts (all but those whose
/// first event is `add`), after checking that the events make sense in time order: a
/// node is added only while out, removed or restarted only while in, every node exists,
/// and at least one node is in at every moment.
pub fn initial_members(events: &[MembershipEvent], nodes: usize) -> Result<Vec<bool>, String> {
    let mut sorted = events.to_vec();
    sorted.sort_by_key(|e| e.at);
    let mut members = vec![true; nodes];
    for e in &sorted {
        if e.node >= nodes {
            return Err(format!("{e}: the cluster has {nodes} nodes"));
        }
    }
    for (i, m) in members.iter_mut().enumerate() {
        if sorted.iter().find(|e| e.node == i).is_some_and(|e| e.change == Change::Add) {
            *m = false;
        }
    }
    let mut now = members.clone();
    for e in &sorted {
        match (e.change, now[e.node]) {
            (Change::Add, false) => now[e.node] = true,
            (Change::Remove, true) => now[e.node] = false,
            (Change::Restart, true) => {}
            (Change::Add, true) => return Err(format!("{e}: n{} is in already", e.node + 1)),
            (_, false) => return Err(format!("{e}: n{} is not in the cluster then", e.node + 1)),
        }
        if !now.contains(&true) {
            return Err(format!("{e}: no node would be left"));
        }
    }
    if !members.contains(&true) {
        return Err("no node is in the cluster at the start".into());
    }
    Ok(members)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_parse_and_round_trip() {
        let e: MembershipEvent = "add:n4@20s".parse().unwrap();
        assert_eq!(
            e,
            MembershipEvent { change: Change::Add, node: 3, at: Duration::from_secs(20) }
        );
        assert_eq!(e.to_string(), "add:n4@20s");
        let e: MembershipEvent = "restart:2@1500ms".parse().unwrap();
        assert_eq!((e.change, e.node, e.at), (Change::Restart, 1, Duration::from_millis(1500)));
        assert_eq!(e.to_string().parse::<MembershipEvent>().unwrap(), e);
        for bad in ["", "add", "add:n4", "grow:n4@1s", "add:n0@1s", "add:x@1s", "add:n4@later"] {
            assert!(bad.parse::<MembershipEvent>().is_err(), "{bad:?} should be rejected");
        }
    }

    #[test]
    fn initial_members_follow_the_first_events() {
        let ev = |s: &str| s.parse::<MembershipEvent>().unwrap();
        let events = [ev("remove:n4@30s"), ev("add:n4@10s"), ev("restart:n1@5s")];
        assert_eq!(initial_members(&events, 4).unwrap(), [true, true, true, false]);
        assert_eq!(initial_members(&[ev("add:n1@1s")], 2).unwrap(), [false, true]);
        assert!(initial_members(&[ev("add:n1@1s"), ev("add:n1@2s")], 2)
            .unwrap_err()
            .contains("in already"));
        assert!(initial_members(&[ev("remove:n5@1s")], 4).unwrap_err().contains("4 nodes"));
        assert!(initial_members(&[ev("remove:n1@1s"), ev("remove:n1@2s")], 2)
            .unwrap_err()
            .contains("not in the cluster"));
        assert!(initial_members(&[ev("remove:n1@1s")], 1).unwrap_err().contains("no node"));
        assert!(initial_members(&[ev("add:n1@1s")], 1).unwrap_err().contains("at the start"));
    }
}

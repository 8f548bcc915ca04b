//! Membership events in the simulator ([`SimConfig::events`]): a node added, removed or
//! restarted when the replay reaches the event's time in the workload (the time of the
//! requests, as a flash crowd is applied to a stream by its times).
//!
//! Every front-end hears the new membership at once (as routers reloaded together
//! would); a node out of the cluster is not eligible, and a restarted node keeps its
//! place but comes back with an empty cache.

use policy::NodeState;
use trace::{initial_members, Change, MembershipEvent};

use crate::SimError;

/// The events of one run and how far the replay has got.
pub(crate) struct Churn {
    events: Vec<MembershipEvent>,
    next: usize,
    members: Vec<bool>,
}

impl Churn {
    /// `events` on `nodes` nodes, checked (see [`trace::initial_members`]).
    pub(crate) fn new(events: &[MembershipEvent], nodes: usize) -> Result<Churn, SimError> {
        let members = initial_members(events, nodes).map_err(SimError::Config)?;
        let mut events = events.to_vec();
        events.sort_by_key(|e| e.at);
        Ok(Churn { events, next: 0, members })
    }

    /// Whether any event is still to come.
    pub(crate) fn pending(&self) -> bool {
        self.next < self.events.len()
    }

    /// The membership now: every node, up while it is in the cluster.
    pub(crate) fn states(&self) -> Vec<NodeState> {
        let mut nodes = NodeState::uniform(self.members.len());
        for (n, &member) in nodes.iter_mut().zip(&self.members) {
            n.up = member;
        }
        nodes
    }

    /// Plays the events due by workload time `time_ms`: `None` if there were none, else
    /// the nodes that restarted (their caches are to be emptied).
    pub(crate) fn due(&mut self, time_ms: u64) -> Option<Vec<usize>> {
        let mut restarted = Vec::new();
        let start = self.next;
        while let Some(e) =
            self.events.get(self.next).filter(|e| e.at.as_millis() <= u128::from(time_ms))
        {
            match e.change {
                Change::Add => self.members[e.node] = true,
                Change::Remove => self.members[e.node] = false,
                Change::Restart => restarted.push(e.node),
            }
            self.next += 1;
        }
        (self.next > start).then_some(restarted)
    }
}

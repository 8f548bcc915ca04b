//! The churn experiment's scenarios: a flash crowd, or a node added, restarted or
//! removed, each at a given time of a run ([`crate::churn`] plays them).

use std::time::Duration;

use trace::{Change, FlashCrowd, MembershipEvent};

use crate::anchors::Anchor;
use crate::front::System;

/// The scenarios `--scenarios` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum ScenarioKind {
    /// 30% of the requests on one target from the end of the warm-up on.
    Flash,
    /// The last node joins at the end of the warm-up.
    Add,
    /// The last node is killed and started again on its address.
    Restart,
    /// The last node leaves.
    Remove,
}

impl ScenarioKind {
    pub const ALL: [ScenarioKind; 4] =
        [ScenarioKind::Flash, ScenarioKind::Add, ScenarioKind::Restart, ScenarioKind::Remove];

    pub fn name(self) -> &'static str {
        match self {
            ScenarioKind::Flash => "flash",
            ScenarioKind::Add => "add",
            ScenarioKind::Restart => "restart",
            ScenarioKind::Remove => "remove",
        }
    }
}

/// One scenario as it runs: a crowd, membership events, or both.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    pub name: String,
    pub crowd: Option<FlashCrowd>,
    pub events: Vec<MembershipEvent>,
}

impl Scenario {
    /// `kind` on `nodes` nodes with its event at `at`, or the plan's own crowd.
    pub fn new(kind: ScenarioKind, nodes: usize, at: Duration, crowd: Option<FlashCrowd>) -> Self {
        let last = nodes.saturating_sub(1);
        let event = |change| vec![MembershipEvent { change, node: last, at }];
        let (crowd, events) = match kind {
            ScenarioKind::Flash => {
                (Some(crowd.unwrap_or(FlashCrowd { share: 0.3, at, targets: 1 })), Vec::new())
            }
            ScenarioKind::Add => (None, event(Change::Add)),
            ScenarioKind::Restart => (None, event(Change::Restart)),
            ScenarioKind::Remove => (None, event(Change::Remove)),
        };
        Scenario { name: kind.name().into(), crowd, events }
    }

    /// Why `system` cannot play this scenario, if it cannot.
    pub fn unsupported(&self, system: System) -> Option<String> {
        let moves = self.events.iter().any(|e| e.change != Change::Restart);
        match system {
            System::Anchor(a @ (Anchor::Nginx | Anchor::Varnish)) if moves => Some(format!(
                "{a} takes its upstreams from its configuration only: no nodes added or removed"
            )),
            System::Peers => {
                Some("the peers learn their members by a reload of their own: not run here".into())
            }
            _ => None,
        }
    }

    /// When the crowd begins or the first event happens.
    pub fn event_at(&self) -> Duration {
        let first = self.events.iter().map(|e| e.at).min();
        first.or(self.crowd.map(|c| c.at)).unwrap_or_default()
    }
}

//! The seam between mechanism (router, simulator) and policy.

use crate::{LoadView, Nanos, NodeId, NodeState, PlacementMode, Target};

/// How a dispatched request ended, as the policy hears it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A response came back (any status).
    Ok,
    /// The node failed the request (connect error, reset, timeout).
    Failed,
}

/// Counters a policy keeps about its own decisions, for the admin `/stats`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct PolicyStats {
    /// Entries in the target table (0 for stateless policies).
    pub table_entries: u64,
    /// Targets moved from one node to another.
    pub reassignments: u64,
    /// Nodes added to a target's server set (`lard-r`).
    pub replications: u64,
    /// Cold entries dropped to keep the table within its cap.
    pub evictions: u64,
}

/// A request-distribution policy.
///
/// Contract, shared by every implementation and checked by property tests:
/// - `pick` never returns a node that the last `membership` call marked down, left out,
///   or gave weight 0; it returns `None` only when no node can take the request.
/// - the caller records the pick in the view (`LoadView::started`) and later calls
///   `done` and `LoadView::finished`;
/// - the policy's own state stays bounded (tables have a cap and evict cold targets).
pub trait Policy: Send {
    /// The policy's name as given on the command line (`rr`, `lard-r`, …).
    fn name(&self) -> &'static str;

    /// Choose a node for this request, or `None` when no node can take it.
    fn pick(&mut self, target: &Target, view: &LoadView, now: Nanos) -> Option<NodeId>;

    /// Tell `touch` the memory, as (address, bytes), a pick of `target` reads first, for
    /// a caller that knows which requests come next (a simulator replaying a stream) and
    /// can have it loaded ahead. Only addresses are computed: nothing is read or changed.
    fn upcoming(&self, _target: &Target, _touch: &mut dyn FnMut(*const u8, usize)) {}

    /// The request finished on `node`.
    fn done(&mut self, _node: NodeId, _target: &Target, _outcome: Outcome, _now: Nanos) {}

    /// Nodes joined, left, went down or came back: `nodes` is the whole current list.
    fn membership(&mut self, nodes: &[NodeState], now: Nanos);

    /// Counters for the admin API.
    fn stats(&self) -> PolicyStats {
        PolicyStats::default()
    }

    /// The nodes this policy currently holds `target` on, if it keeps a placement
    /// (for the admin `/targets`); empty for policies that place nothing.
    fn placement(&self, _target: &Target) -> Vec<NodeId> {
        Vec::new()
    }

    /// The placement rule the last pick followed, for the admin `/stats`: the one
    /// configured, or [`PlacementMode::PerRouter`] while a shared placement's router is
    /// alone in front of a few equal nodes ([`crate::roster`]). `None` for policies that
    /// keep no placement.
    fn placement_followed(&self) -> Option<PlacementMode> {
        None
    }
}

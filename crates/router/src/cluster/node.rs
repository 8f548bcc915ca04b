//! Everything known about one node slot: its name and address, whether the membership
//! still has it, its weight, health and counters, and its last load report.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use crate::config::NodeConfig;
use crate::health::Health;
use crate::stats::NodeStats;

#[derive(Clone, Debug)]
pub(crate) struct NodeStatus {
    pub name: Arc<str>,
    pub addr: SocketAddr,
    /// False once a reload removed the node.
    pub configured: bool,
    pub weight: u32,
    pub load_report: bool,
    pub health: Health,
    pub stats: NodeStats,
    /// When the node's last load report arrived.
    pub reported_at: Option<Instant>,
    /// Version and keys of the holdings digest folded into the view, if the node sends one.
    pub holdings: Option<(u64, u64)>,
    /// The node's last load report, without its digest (for `/stats`).
    pub last_report: Option<wire::LoadReport>,
}

impl NodeStatus {
    /// A slot for `n` as configured, up, with nothing counted yet.
    pub(crate) fn new(n: &NodeConfig) -> NodeStatus {
        NodeStatus {
            name: n.display_name().into(),
            addr: n.addr,
            configured: true,
            weight: n.weight,
            load_report: n.load_report,
            health: Health::default(),
            stats: NodeStats::default(),
            reported_at: None,
            holdings: None,
            last_report: None,
        }
    }
}

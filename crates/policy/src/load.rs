//! The load view: what the policy knows of each node's load at the moment it picks.
//!
//! The caller owns the view. It counts requests in flight (it calls
//! [`LoadView::started`] after a pick and [`LoadView::finished`] on completion) and folds
//! in what nodes report (CPU and disk utilisation, as HACC's load monitor polled them, and
//! the requests each node is answering for every router). A policy reads one number per
//! node, [`LoadView::load`], so the same policy works on in-flight counts alone (LARD's
//! "active connections") or on reported metrics. It also keeps what each node says it
//! holds ([`LoadView::holds`]), so routers that read the same reports see the same holders.
//!
//! Two loads, for two kinds of decision. [`LoadView::load`] counts this router's own
//! requests in flight: current, but each router has its own, so it serves the decisions a
//! router may take alone (LARD's overload rule on a target it placed). [`LoadView::reported_load`]
//! reads only what the nodes report: every router polls the same reports (up to one poll
//! period apart), so a choice made on it (where a new target goes when placement is shared)
//! comes out alike on every router.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::holdings::Holdings;
use crate::{NodeId, TargetKey};

/// Weights of the load formula:
/// `load = in_flight·w_in_flight + cpu_pct·w_cpu + disk_pct·w_disk`.
///
/// The default (1, 0, 0) makes load the number of requests in flight, LARD's measure, so
/// LARD's thresholds (T_low = 25, T_high = 65) read as connections. HACC weighted CPU and
/// disk (static: disk 1, CPU 0; Domino: ½ and ½); then thresholds read as percent.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct LoadWeights {
    pub in_flight: f64,
    pub cpu: f64,
    pub disk: f64,
}

impl Default for LoadWeights {
    fn default() -> Self {
        LoadWeights { in_flight: 1.0, cpu: 0.0, disk: 0.0 }
    }
}

/// What is known of one node's load.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct NodeLoad {
    /// Requests dispatched to the node and not yet finished.
    pub in_flight: u32,
    /// Reported CPU utilisation in percent (0–100 per core summed is allowed).
    pub cpu_pct: f64,
    /// Reported disk utilisation in percent.
    pub disk_pct: f64,
    /// Requests the node is answering by its own last report (for every router).
    pub reported_in_flight: u32,
    /// Bytes of misses the node is reading in by its own last report: work that a new
    /// miss on that node waits behind, however few requests it counts.
    pub miss_bytes: u64,
}

/// The least share a warming node takes, so it always gets some targets to warm on.
pub const MIN_WARMTH: f64 = 0.05;

/// The steps a warming node's share grows by.
pub const WARMTH_STEP: f64 = 1.0 / 16.0;

/// What a node reports of its load: [`NodeLoad`] but this router's own count.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
struct Reported {
    cpu_pct: f64,
    disk_pct: f64,
    in_flight: u32,
    /// How many routers it says poll it (0: it does not say, as nginx does not).
    routers: u32,
    miss_bytes: u64,
}

/// Per-node load, indexed by [`NodeId`].
#[derive(Clone, Debug, Default)]
pub struct LoadView {
    /// Requests this router dispatched to each node and not yet finished, apart from the
    /// rest of a node's load: `bounded` reads the count of every node its walk of the
    /// ring passes, and 4 bytes a node keep 10,000 nodes' counts in 40 KB, in the CPU's
    /// nearest cache, where a node's whole load (32 bytes) spreads them over 320 KB.
    in_flight: Vec<u32>,
    /// What each node last reported.
    reported: Vec<Reported>,
    weights: LoadWeights,
    /// Sum of `in_flight`, kept as it changes: `bounded` reads it on every
    /// pick, and summing 1,000 nodes each time would dominate the pick.
    total_in_flight: u64,
    /// What each node last said it holds (`None`: it reports nothing, as nginx does).
    holdings: Vec<Option<Arc<dyn Holdings>>>,
    /// Each node's cache capacity in bytes by its own report (0: not reported).
    capacity: Vec<u64>,
    /// What each node's cache holds by its own report: bytes and objects (0: not said).
    cached: Vec<(u64, u64)>,
    /// The node this distributor runs in, on a peer (`None` for a router, which has none).
    local: Option<NodeId>,
    /// How much of its share of new targets each node takes, in (0, 1]: below 1 while a
    /// node that joined or restarted fills its cache ([`crate::warmup`]).
    warmth: Vec<f64>,
    /// Bumped whenever a capacity or a warmth changes, i.e. whenever shared first
    /// choices may have changed: placements made before are checked again.
    shares_epoch: u64,
    /// True for a view of the nodes themselves (the simulator's count of every request
    /// to each node): its in-flight counts are what the nodes report, always current.
    counts_reported: bool,
    /// The nodes whose [`LoadView::load`] changed lately, so an index of loads kept beside
    /// the view ([`crate::least_index`]) follows them without reading every node.
    changes: LoadChanges,
    /// The most routers any node reports polling it: how many routers place targets on
    /// these nodes, as far as any node knows ([`LoadView::routers`]).
    most_routers: u32,
}

/// How many recent changes the view remembers; an index further behind rebuilds.
pub const REMEMBERED_CHANGES: usize = 256;

/// The last [`REMEMBERED_CHANGES`] nodes whose load changed, numbered from the view's
/// making. A clone is another view (its loads go their own way): it takes a new
/// identity, so an index that followed the original rebuilds rather than miss changes.
#[derive(Debug)]
struct LoadChanges {
    identity: u64,
    count: u64,
    nodes: Box<[NodeId; REMEMBERED_CHANGES]>,
}

/// Identities of views, distinct within the process (no clock, no I/O: a counter).
static NEXT_IDENTITY: AtomicU64 = AtomicU64::new(1);

impl Default for LoadChanges {
    fn default() -> Self {
        LoadChanges {
            identity: NEXT_IDENTITY.fetch_add(1, Ordering::Relaxed),
            count: 0,
            nodes: Box::new([NodeId(0); REMEMBERED_CHANGES]),
        }
    }
}

impl Clone for LoadChanges {
    fn clone(&self) -> Self {
        LoadChanges::default()
    }
}

impl LoadChanges {
    fn push(&mut self, node: NodeId) {
        self.nodes[self.count as usize % REMEMBERED_CHANGES] = node;
        self.count += 1;
    }
}

/// Where a follower of a view's loads stands: which view, and how many of its changes
/// it has taken in.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct ChangeMark {
    identity: u64,
    count: u64,
}

impl LoadView {
    /// A view of `n` idle nodes with the default weights (load = in flight).
    pub fn new(n: usize) -> Self {
        Self::with_weights(n, LoadWeights::default())
    }

    pub fn with_weights(n: usize, weights: LoadWeights) -> Self {
        LoadView {
            in_flight: vec![0; n],
            reported: vec![Reported::default(); n],
            weights,
            total_in_flight: 0,
            holdings: vec![None; n],
            capacity: vec![0; n],
            cached: vec![(0, 0); n],
            local: None,
            warmth: vec![1.0; n],
            shares_epoch: 0,
            counts_reported: false,
            changes: LoadChanges::default(),
            most_routers: 0,
        }
    }

    /// A view that counts every request to the nodes, so its counts are the nodes' own
    /// reports as they happen (a simulator's view of the nodes; one front-end that reads
    /// it reads exact reports).
    pub fn of_nodes(n: usize) -> Self {
        LoadView { counts_reported: true, ..Self::new(n) }
    }

    /// Become what a router knows after polling every node of `nodes` (a view made with
    /// [`LoadView::of_nodes`]): their counts as reports, and as this router's own load
    /// until its own picks and completions change it. O(nodes).
    pub fn poll(&mut self, nodes: &LoadView) {
        self.clone_from(nodes);
        self.counts_reported = false;
        if nodes.counts_reported {
            for (r, &in_flight) in self.reported.iter_mut().zip(&self.in_flight) {
                r.in_flight = in_flight;
            }
        }
    }

    /// Number of node slots (ids `0..len`).
    pub fn len(&self) -> usize {
        self.in_flight.len()
    }

    pub fn is_empty(&self) -> bool {
        self.in_flight.is_empty()
    }

    /// Grow (never shrink) so ids `0..n` have slots; new slots are idle.
    pub fn resize(&mut self, n: usize) {
        if n > self.in_flight.len() {
            // New (idle) slots: followers start again.
            self.changes = LoadChanges::default();
            self.in_flight.resize(n, 0);
            self.reported.resize(n, Reported::default());
            self.holdings.resize(n, None);
            self.capacity.resize(n, 0);
            self.cached.resize(n, (0, 0));
            self.warmth.resize(n, 1.0);
        }
    }

    pub fn weights(&self) -> LoadWeights {
        self.weights
    }

    pub fn set_weights(&mut self, weights: LoadWeights) {
        self.weights = weights;
        // Every load changed: followers start again.
        self.changes = LoadChanges::default();
    }

    /// Where a follower stands once it has taken in every change so far.
    pub fn change_mark(&self) -> ChangeMark {
        ChangeMark { identity: self.changes.identity, count: self.changes.count }
    }

    /// The nodes whose load changed since `mark` (a node may repeat), or `None` when
    /// `mark` is of another view or too far behind: then the follower reads every node.
    pub fn changes_since(&self, mark: ChangeMark) -> Option<impl Iterator<Item = NodeId> + '_> {
        let behind = self.changes.count.checked_sub(mark.count)?;
        if mark.identity != self.changes.identity || behind > REMEMBERED_CHANGES as u64 {
            return None;
        }
        Some(
            (mark.count..self.changes.count)
                .map(|i| self.changes.nodes[i as usize % REMEMBERED_CHANGES]),
        )
    }

    /// The single load number a policy compares. Unknown ids read as idle.
    pub fn load(&self, node: NodeId) -> f64 {
        let (Some(&in_flight), Some(r)) =
            (self.in_flight.get(node.index()), self.reported.get(node.index()))
        else {
            return 0.0;
        };
        let w = &self.weights;
        in_flight as f64 * w.in_flight + r.cpu_pct * w.cpu + r.disk_pct * w.disk
    }

    /// The load by what `node` itself last reported (its requests in flight for every
    /// router, its CPU and disk), by the same formula as [`LoadView::load`]: the same on
    /// every router that polled the same report, so choices that routers must make alike
    /// read this. Unknown ids read as idle.
    pub fn reported_load(&self, node: NodeId) -> f64 {
        let Some(r) = self.reported.get(node.index()) else { return 0.0 };
        let w = &self.weights;
        let in_flight = if self.counts_reported { self.in_flight(node) } else { r.in_flight };
        in_flight as f64 * w.in_flight + r.cpu_pct * w.cpu + r.disk_pct * w.disk
    }

    pub fn in_flight(&self, node: NodeId) -> u32 {
        self.in_flight.get(node.index()).copied().unwrap_or(0)
    }

    /// Requests in flight over all nodes.
    pub fn total_in_flight(&self) -> u64 {
        self.total_in_flight
    }

    pub fn node(&self, node: NodeId) -> NodeLoad {
        let Some(r) = self.reported.get(node.index()) else { return NodeLoad::default() };
        NodeLoad {
            in_flight: self.in_flight(node),
            cpu_pct: r.cpu_pct,
            disk_pct: r.disk_pct,
            reported_in_flight: r.in_flight,
            miss_bytes: r.miss_bytes,
        }
    }

    /// A request was dispatched to `node`.
    pub fn started(&mut self, node: NodeId) {
        self.resize(node.index() + 1);
        self.in_flight[node.index()] += 1;
        self.total_in_flight += 1;
        self.changes.push(node);
    }

    /// A request on `node` finished (successfully or not).
    pub fn finished(&mut self, node: NodeId) {
        if let Some(in_flight) = self.in_flight.get_mut(node.index()) {
            if *in_flight > 0 {
                *in_flight -= 1;
                self.total_in_flight -= 1;
                self.changes.push(node);
            }
        }
    }

    /// Fold in a node's own report (from its `/.larder/load`).
    pub fn report(&mut self, node: NodeId, cpu_pct: f64, disk_pct: f64) {
        self.resize(node.index() + 1);
        let r = &mut self.reported[node.index()];
        r.cpu_pct = cpu_pct;
        r.disk_pct = disk_pct;
        self.changes.push(node);
    }

    /// Fold in the requests a node says it is answering (for every router).
    pub fn report_in_flight(&mut self, node: NodeId, in_flight: u64) {
        self.resize(node.index() + 1);
        self.reported[node.index()].in_flight = u32::try_from(in_flight).unwrap_or(u32::MAX);
    }

    /// Fold in the bytes of misses a node says it is reading in.
    pub fn report_miss_bytes(&mut self, node: NodeId, bytes: u64) {
        self.resize(node.index() + 1);
        self.reported[node.index()].miss_bytes = bytes;
    }

    /// `node` started reading in a miss of `bytes` (a view of the nodes themselves, as
    /// the simulator keeps it: its figure is what the node would report).
    pub fn miss_started(&mut self, node: NodeId, bytes: u64) {
        self.resize(node.index() + 1);
        let r = &mut self.reported[node.index()];
        r.miss_bytes = r.miss_bytes.saturating_add(bytes);
    }

    /// `node` finished reading in a miss of `bytes`.
    pub fn miss_finished(&mut self, node: NodeId, bytes: u64) {
        if let Some(r) = self.reported.get_mut(node.index()) {
            r.miss_bytes = r.miss_bytes.saturating_sub(bytes);
        }
    }

    /// The bytes of misses `node` reports reading in (0 when it says nothing).
    pub fn miss_bytes(&self, node: NodeId) -> u64 {
        self.reported.get(node.index()).map_or(0, |r| r.miss_bytes)
    }

    /// Fold in what a node says it holds, or that it says nothing (`None`).
    pub fn set_holdings(&mut self, node: NodeId, holdings: Option<Arc<dyn Holdings>>) {
        self.resize(node.index() + 1);
        self.holdings[node.index()] = holdings;
    }

    /// Whether `node` holds `key` by its own summary; `None` when it reports none.
    pub fn holds(&self, node: NodeId, key: TargetKey) -> Option<bool> {
        let holdings = self.holdings.get(node.index())?.as_ref()?;
        Some(holdings.holds(key))
    }

    /// Fold in a node's cache capacity in bytes by its own report (0: it says nothing).
    pub fn set_capacity(&mut self, node: NodeId, bytes: u64) {
        self.resize(node.index() + 1);
        if self.capacity[node.index()] != bytes {
            self.capacity[node.index()] = bytes;
            self.shares_epoch += 1;
        }
    }

    /// The cache capacity `node` reports in bytes, `None` when it reports none.
    pub fn capacity(&self, node: NodeId) -> Option<u64> {
        self.capacity.get(node.index()).copied().filter(|&b| b > 0)
    }

    /// Fold in what a node's cache holds by its own report: `bytes` in `objects` (both 0:
    /// it says nothing).
    pub fn set_cached(&mut self, node: NodeId, bytes: u64, objects: u64) {
        self.resize(node.index() + 1);
        self.cached[node.index()] = (bytes, objects);
    }

    /// The mean size in bytes of what `node` caches, `None` when it reports nothing cached.
    pub fn mean_object(&self, node: NodeId) -> Option<f64> {
        match self.cached.get(node.index())? {
            (bytes, objects) if *bytes > 0 && *objects > 0 => Some(*bytes as f64 / *objects as f64),
            _ => None,
        }
    }

    /// The bytes `node`'s cache has free by its own report, `None` when it reports no
    /// capacity.
    pub fn free_bytes(&self, node: NodeId) -> Option<u64> {
        let capacity = self.capacity(node)?;
        Some(capacity.saturating_sub(self.cached.get(node.index())?.0))
    }

    /// Name the node this distributor runs in (a peer's own node; `None`: a router).
    pub fn set_local(&mut self, node: Option<NodeId>) {
        self.local = node;
    }

    /// The node this distributor runs in, on a peer.
    pub fn local(&self) -> Option<NodeId> {
        self.local
    }

    /// Set how much of its share `node` takes: clamped to [[`MIN_WARMTH`], 1] and rounded
    /// down to a multiple of [`WARMTH_STEP`], so a warming node's share grows in a few
    /// steps and placements are checked again only at each step.
    pub fn set_warmth(&mut self, node: NodeId, warmth: f64) {
        self.resize(node.index() + 1);
        let w = if warmth.is_nan() { 1.0 } else { warmth.clamp(0.0, 1.0) };
        let w = ((w / WARMTH_STEP).floor() * WARMTH_STEP).max(MIN_WARMTH);
        if self.warmth[node.index()] != w {
            self.warmth[node.index()] = w;
            self.shares_epoch += 1;
        }
    }

    /// Changes so far to capacities and warmths: when it differs from what a placement
    /// was made at, the target's shared first choice may have moved.
    pub fn shares_epoch(&self) -> u64 {
        self.shares_epoch
    }

    /// How much of its share `node` takes: 1 unless it is warming up.
    pub fn warmth(&self, node: NodeId) -> f64 {
        self.warmth.get(node.index()).copied().unwrap_or(1.0)
    }

    /// Fold in how many routers `node` says polled it lately (0: it does not say). O(1)
    /// unless the node that reported the most now reports fewer (then O(nodes)).
    pub fn report_routers(&mut self, node: NodeId, routers: u32) {
        self.resize(node.index() + 1);
        let before = std::mem::replace(&mut self.reported[node.index()].routers, routers);
        if routers >= self.most_routers {
            self.most_routers = routers;
        } else if before == self.most_routers {
            self.most_routers = self.reported.iter().map(|r| r.routers).max().unwrap_or(0);
        }
    }

    /// How many routers place targets on these nodes: the most any node reports being
    /// polled by (each router polls every node it routes to, so a node polled by fewer
    /// knows fewer, never more), 0 when no node says (nodes that do not report it, or no
    /// report yet). Exactly 1 tells a router it is alone, so there is no one whose
    /// placement it must agree with ([`crate::roster::Roster::sync`]).
    pub fn routers(&self) -> u32 {
        self.most_routers
    }

    /// True when at least one node reports what it holds.
    pub fn any_holdings(&self) -> bool {
        self.holdings.iter().any(Option::is_some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Evens;
    impl Holdings for Evens {
        fn holds(&self, key: TargetKey) -> bool {
            key.0.is_multiple_of(2)
        }
    }

    #[test]
    fn holdings_are_per_node_and_optional() {
        let mut v = LoadView::new(2);
        assert!(!v.any_holdings());
        assert_eq!(v.holds(NodeId(0), TargetKey(2)), None);
        v.set_holdings(NodeId(3), Some(Arc::new(Evens)));
        assert!(v.any_holdings());
        assert_eq!(v.holds(NodeId(3), TargetKey(2)), Some(true));
        assert_eq!(v.holds(NodeId(3), TargetKey(3)), Some(false));
        assert_eq!(v.holds(NodeId(1), TargetKey(2)), None);
        v.set_holdings(NodeId(3), None);
        assert!(!v.any_holdings());
    }

    #[test]
    fn load_follows_the_formula() {
        let mut v = LoadView::with_weights(2, LoadWeights { in_flight: 1.0, cpu: 0.5, disk: 0.5 });
        v.started(NodeId(1));
        v.started(NodeId(1));
        v.report(NodeId(1), 40.0, 20.0);
        assert_eq!(v.load(NodeId(1)), 2.0 + 20.0 + 10.0);
        assert_eq!(v.load(NodeId(0)), 0.0);
        v.finished(NodeId(1));
        v.finished(NodeId(1));
        v.finished(NodeId(1));
        assert_eq!(v.in_flight(NodeId(1)), 0, "never below zero");
        assert_eq!(v.total_in_flight(), 0);
        assert_eq!(v.load(NodeId(7)), 0.0, "unknown ids read as idle");
    }

    #[test]
    fn reported_load_reads_reports_only() {
        let mut v = LoadView::with_weights(2, LoadWeights { in_flight: 1.0, cpu: 0.5, disk: 0.0 });
        v.started(NodeId(0));
        v.report(NodeId(0), 40.0, 0.0);
        assert_eq!(v.reported_load(NodeId(0)), 20.0, "own requests are not reported ones");
        v.report_in_flight(NodeId(0), 3);
        assert_eq!(v.reported_load(NodeId(0)), 23.0);
        assert_eq!(v.load(NodeId(0)), 21.0);
        // A view of the nodes themselves counts what they report; a router polling it
        // takes those counts as reports, and its own picks after as its own load.
        let mut nodes = LoadView::of_nodes(2);
        nodes.started(NodeId(1));
        assert_eq!(nodes.reported_load(NodeId(1)), 1.0);
        let mut router = LoadView::new(2);
        router.poll(&nodes);
        router.started(NodeId(1));
        assert_eq!(router.reported_load(NodeId(1)), 1.0);
        assert_eq!(router.load(NodeId(1)), 2.0);
    }

    #[test]
    fn miss_bytes_are_reported_or_counted_and_travel_with_a_poll() {
        let mut v = LoadView::new(2);
        v.report_miss_bytes(NodeId(1), 5 << 20);
        assert_eq!(v.miss_bytes(NodeId(1)), 5 << 20);
        assert_eq!(v.miss_bytes(NodeId(0)), 0);
        assert_eq!(v.miss_bytes(NodeId(9)), 0, "unknown ids read as idle");
        assert_eq!(v.load(NodeId(1)), 0.0, "a router's own load leaves them out");
        let mut nodes = LoadView::of_nodes(2);
        nodes.miss_started(NodeId(0), 300);
        nodes.miss_started(NodeId(0), 200);
        nodes.miss_finished(NodeId(0), 300);
        assert_eq!(nodes.miss_bytes(NodeId(0)), 200);
        let mut router = LoadView::new(2);
        router.poll(&nodes);
        assert_eq!(router.miss_bytes(NodeId(0)), 200);
        nodes.miss_finished(NodeId(0), 999);
        assert_eq!(nodes.miss_bytes(NodeId(0)), 0, "never below zero");
    }

    #[test]
    fn routers_are_the_most_any_node_reports_and_travel_with_a_poll() {
        let mut v = LoadView::of_nodes(3);
        assert_eq!(v.routers(), 0, "nobody says");
        v.report_routers(NodeId(0), 1);
        v.report_routers(NodeId(1), 2);
        assert_eq!(v.routers(), 2);
        v.report_routers(NodeId(2), 1);
        let mut router = LoadView::new(3);
        router.poll(&v);
        assert_eq!(router.routers(), 2);
        v.report_routers(NodeId(1), 1);
        assert_eq!(v.routers(), 1, "the node that said two now says one");
        v.report_routers(NodeId(5), 0);
        assert_eq!((v.routers(), v.len()), (1, 6));
        for i in 0..6 {
            v.report_routers(NodeId(i), 0);
        }
        assert_eq!(v.routers(), 0);
    }
}

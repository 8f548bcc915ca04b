//! The discrete-event simulation: a front-end (or several, `front_ends.rs`) and n
//! back-end nodes, each with a CPU, a
//! disk (both FIFO servers) and a byte-bounded cache; or, with
//! [`SimConfig::shared_cpus`], nodes whose threads share the cores of one machine with
//! the front-end and the clients (`cpu_pool.rs`).
//!
//! The front-end is closed-loop: it admits at most S requests at once and there are
//! always clients waiting, so as soon as a request completes the next one of the stream
//! is dispatched. Throughput then measures what the cluster can do. Arrival times in the
//! trace are ignored; only the order of requests matters.
//!
//! Speed: pending completions wait in one FIFO per server, and only the servers' heads
//! compete in a small heap (see `event_queue.rs`); a request in flight lives
//! in a slot of a fixed table (at most S slots) and its per-target costs are computed
//! once per run, so the steady state allocates nothing. A FIFO server needs no queue of
//! its own: a job arriving at `t` starts at `max(t, free_at)`, known at once.
//!
//! Measurement: the window opens when the first measured request (after the warm-up
//! share) is dispatched and closes when the last request of the stream is dispatched,
//! so the cluster is saturated throughout. Utilisation in the window comes from each
//! server's busy time up to a moment: all jobs queued so far minus the work still ahead
//! (`free_at − now`), exact because queued jobs run back to back.

use std::collections::HashMap;

use cache::{ByteCache, FxBuildHasher, Kind};
use policy::{NodeId, Target};
use trace::Workload;

use crate::cpu_pool::CpuPool;
use crate::event_queue::EventQueue;
use crate::front_ends::FrontEnds;
use crate::membership::Churn;
use crate::policy_targets::PolicyTargets;
use crate::prefetch::prefetch;
use crate::{ideal_hit_ratio, Model, NodeResult, RunResult, SimConfig, SimError, Spread};

/// How many requests ahead of the one dispatched the policy's memory is loaded: far
/// enough that the load completes before the pick, near enough that the line is still in
/// the CPU's first-level cache then.
const PICK_AHEAD: usize = 2;

/// What the caller hears of each completed request (tests count them).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Completion {
    /// Position of the request in the workload.
    pub index: u64,
    pub node: u32,
    /// Simulated nanoseconds.
    pub time: u64,
    /// Requests in flight at the front-end just before this one finished.
    pub in_flight: u64,
}

#[derive(Copy, Clone)]
enum Stage {
    /// The front-end's and clients' CPU work; the node comes next.
    Front,
    /// A miss's connection set-up on the CPU; the helper's work or the disk read next.
    Setup,
    /// A miss's CPU work on the node's helper thread; the disk read comes next.
    Compute,
    /// A miss's disk read; transmit and tear-down come next.
    Disk,
    /// The last CPU job (a hit's whole work, or a miss's transmit and tear-down).
    Send,
}

/// A request in flight: 16 bytes, so the table of flights (every event reads one, and
/// a run keeps tens of thousands in flight) takes a third less of the CPU's caches. Its
/// position in the workload, which only its completion needs, is kept beside the table.
#[derive(Copy, Clone)]
struct Flight {
    target: u32,
    node: u32,
    /// The front-end that picked the node, and hears `done`.
    router: u32,
    stage: Stage,
    /// Past the warm-up: its cache lookup counts in the hit ratio.
    measured: bool,
}

/// Per-target costs under the run's model, computed once per run, kept by when they are
/// read: a hit, most requests, reads only its CPU time, from a table of 8 bytes a target
/// that stays in the CPU's caches; a miss reads the rest. A request's last job (a hit's
/// whole work or a miss's transmit) reads none when it ends.
struct Costs {
    hit_cpu: Vec<u64>,
    miss: Vec<MissCost>,
}

/// What a miss of one target costs besides its connection set-up.
#[derive(Copy, Clone)]
struct MissCost {
    size: u64,
    send_cpu: u64,
    disk: u64,
}

/// A FIFO server (a CPU or a disk).
#[derive(Copy, Clone, Default)]
struct Server {
    free_at: u64,
    /// Total service time of every job queued so far.
    queued: u64,
    /// Busy time up to the window's opening.
    busy_at_open: u64,
    busy_in_window: u64,
}

impl Server {
    /// Queue a job of `service` arriving at `now`; returns when it finishes.
    #[inline]
    fn run(&mut self, now: u64, service: u64) -> u64 {
        self.free_at = self.free_at.max(now) + service;
        self.queued += service;
        self.free_at
    }

    /// Busy time up to `now`, valid while no job queued so far arrived after `now`.
    fn busy_until(&self, now: u64) -> u64 {
        self.queued - self.free_at.saturating_sub(now)
    }
}

/// A thread that runs CPU work.
#[derive(Copy, Clone)]
enum Worker {
    /// The front-end and the clients.
    Front,
    /// A node's event loop.
    Loop(u32),
    /// A node's helper thread.
    Helper(u32),
}

/// Where CPU work runs: each node on its own CPU (its loop and helper taking turns on
/// it) and the front-end on one more, or everything on the shared cores.
struct Cpus {
    front: Server,
    /// Event server of the front-end's own CPU.
    front_server: u32,
    shared: Option<CpuPool>,
}

impl Cpus {
    fn new(nodes: usize, shared_cpus: Option<u32>) -> Self {
        let front_server = 2 * nodes as u32;
        Cpus {
            front: Server::default(),
            front_server,
            // Threads 2·i and 2·i + 1 are node i's loop and helper.
            shared: shared_cpus.map(|k| CpuPool::new(k, 2 * nodes, front_server + 1)),
        }
    }

    /// Event servers needed besides the nodes' CPUs and disks.
    fn servers(shared_cpus: Option<u32>) -> usize {
        1 + shared_cpus.unwrap_or(0) as usize
    }

    /// Queue `slot`'s job of `service` on `worker` at `now`.
    fn run(
        &mut self,
        nodes: &mut [Node],
        worker: Worker,
        slot: u32,
        service: u64,
        now: u64,
        events: &mut EventQueue,
    ) {
        match (&mut self.shared, worker) {
            (Some(pool), Worker::Front) => pool.submit(None, slot, service, now, events),
            (Some(pool), Worker::Loop(i)) => pool.submit(Some(2 * i), slot, service, now, events),
            (Some(pool), Worker::Helper(i)) => {
                pool.submit(Some(2 * i + 1), slot, service, now, events)
            }
            (None, Worker::Front) => {
                events.push(self.front_server, self.front.run(now, service), slot)
            }
            (None, Worker::Loop(i) | Worker::Helper(i)) => {
                events.push(2 * i, nodes[i as usize].cpu.run(now, service), slot)
            }
        }
    }

    /// A job ended on event server `server` at `now`: a shared core is free again.
    fn ended(&mut self, server: u32, now: u64, events: &mut EventQueue) {
        if let Some(pool) = &mut self.shared {
            if pool.is_core(server) {
                pool.finished(server, now, events);
            }
        }
    }

    /// CPU time node `i` used up to `now`.
    fn busy_until(&self, nodes: &[Node], i: usize, now: u64) -> u64 {
        match &self.shared {
            Some(pool) => {
                let t = 2 * i as u32;
                pool.busy_until(t, now) + pool.busy_until(t + 1, now)
            }
            None => nodes[i].cpu.busy_until(now),
        }
    }
}

struct Node {
    cpu: Server,
    disk: Server,
    cache: Box<dyn ByteCache<u32, ()>>,
    /// The cache changed since its holdings were last published (a node whose cache did
    /// not keeps its digest, and publishing costs nothing for it).
    holdings_changed: bool,
    completed_in_window: u64,
    lookups: u64,
    hits: u64,
}

/// Runs simulations of one workload, remembering ideal hit ratios across runs (a sweep
/// asks for the same one once per policy).
pub struct Simulator<'w> {
    workload: &'w Workload,
    /// What the policy sees of each target; by default a target is known by its index.
    targets: PolicyTargets,
    ideal: HashMap<(u64, Kind, u64), f64>,
}

impl<'w> Simulator<'w> {
    pub fn new(workload: &'w Workload) -> Self {
        let targets = PolicyTargets::Indices(workload.targets.len());
        Simulator { workload, targets, ideal: HashMap::new() }
    }

    /// A simulator whose policy sees `targets[i]` for the workload's target i, e.g. the
    /// keys and subtrees larder route's URL mapper gives the targets' URLs, so that
    /// hashing places them as the router would and `hacc` groups them as it would.
    pub fn with_targets(workload: &'w Workload, targets: Vec<Target>) -> Result<Self, SimError> {
        if targets.len() != workload.targets.len() {
            return Err(SimError::Config(format!(
                "{} policy targets given for {} workload targets",
                targets.len(),
                workload.targets.len()
            )));
        }
        Ok(Simulator { workload, targets: PolicyTargets::given(targets), ideal: HashMap::new() })
    }

    pub fn workload(&self) -> &'w Workload {
        self.workload
    }

    /// One run.
    pub fn run(&mut self, config: &SimConfig) -> Result<RunResult, SimError> {
        self.run_observed(config, |_| {})
    }

    /// One run, telling `observe` of every completion in simulated-time order.
    pub fn run_observed(
        &mut self,
        config: &SimConfig,
        mut observe: impl FnMut(Completion),
    ) -> Result<RunResult, SimError> {
        config.validate()?;
        let w = self.workload;
        let total = w.requests.len() as u64;
        if total == 0 {
            return Err(SimError::EmptyWorkload);
        }
        if let Some((i, r)) =
            w.requests.iter().enumerate().find(|(_, r)| r.target as usize >= w.targets.len())
        {
            return Err(SimError::BadTarget {
                index: i as u64,
                target: r.target,
                targets: w.targets.len(),
            });
        }
        let warmup = ((total as f64 * config.warmup) as u64).min(total - 1);
        let ideal_capacity = config.caches.total(config.nodes);
        let ideal = *self
            .ideal
            .entry((ideal_capacity, config.cache_kind, warmup))
            .or_insert_with(|| ideal_hit_ratio(w, ideal_capacity, config.cache_kind, warmup));

        let m = &config.model;
        let costs = Costs {
            hit_cpu: w.targets.iter().map(|t| m.hit_cpu_ns(t.size)).collect(),
            miss: w
                .targets
                .iter()
                .map(|t| MissCost {
                    size: t.size,
                    send_cpu: m.send_cpu_ns(t.size),
                    disk: m.disk_ns(t.size),
                })
                .collect(),
        };
        let targets = &self.targets;

        let n = config.nodes;
        let spread = Spread::of(w);
        let mut front_ends = FrontEnds::new(config, spread)?;
        let mut churn = Churn::new(&config.events, config.nodes)?;
        if churn.pending() {
            front_ends.membership(&churn.states(), 0);
        }
        let policy_name = front_ends.policy_name();
        let mut nodes: Vec<Node> = (0..n)
            .map(|i| Node {
                cpu: Server::default(),
                disk: Server::default(),
                cache: config
                    .cache_kind
                    .build_with_hasher::<u32, (), _>(config.caches.of(i), FxBuildHasher),
                holdings_changed: true,
                completed_in_window: 0,
                lookups: 0,
                hits: 0,
            })
            .collect();

        let limit = config.in_flight_limit().min(total);
        let mut flights: Vec<Flight> = Vec::with_capacity(limit as usize);
        // Each flight's position in the workload, by slot.
        let mut indices: Vec<u64> = Vec::with_capacity(limit as usize);
        let mut free_slots: Vec<u32> = Vec::with_capacity(limit as usize);
        // Server 2·i is node i's CPU, 2·i + 1 its disk; then the CPUs of `Cpus`.
        let mut events = EventQueue::new(2 * n + Cpus::servers(config.shared_cpus));
        let mut cpus = Cpus::new(n, config.shared_cpus);

        let mut now = 0u64;
        let mut next = 0u64;
        let mut in_flight = 0u64;
        let mut max_in_flight = 0u64;
        let mut open_at: Option<u64> = None;
        let mut close_at: Option<u64> = None;
        let mut measured = 0u64;
        // Nodes report their holdings every report period, for shared placement.
        let publish_every = match config.report_delay_ns {
            0 => crate::DEFAULT_REPORT_DELAY_NS,
            d => d,
        };
        let mut next_publish = if config.policy.reads_holdings() { 0 } else { u64::MAX };
        // Where each target's last request went.
        let mut last_node: Vec<u32> = vec![u32::MAX; targets.len()];

        loop {
            while in_flight < limit && next < total {
                let index = next;
                next += 1;
                if now >= next_publish {
                    let caches = nodes.iter_mut().map(|n| {
                        let changed = std::mem::take(&mut n.holdings_changed);
                        changed.then_some(&*n.cache)
                    });
                    let version = now / publish_every;
                    front_ends.publish_holdings(crate::holdings::digests(caches, targets, version));
                    next_publish = (now / publish_every + 1) * publish_every;
                }
                let request = w.requests[index as usize];
                // The policy's entry for a request a little ahead, so that its misses
                // overlap the events in between.
                let ahead = index as usize + PICK_AHEAD;
                if let Some(r) = w.requests.get(ahead) {
                    front_ends.upcoming(ahead as u64, r.client, &targets.get(r.target));
                }
                // Likewise the next request's target, as the policy and the node read it.
                if let Some(r) = w.requests.get(index as usize + 1) {
                    targets.touch(r.target);
                    if let Some(cost) = costs.hit_cpu.get(r.target as usize) {
                        prefetch(cost);
                    }
                }
                if churn.pending() {
                    if let Some(restarted) = churn.due(request.time_ms) {
                        for i in restarted {
                            let empty = config
                                .cache_kind
                                .build_with_hasher(config.caches.of(i), FxBuildHasher);
                            nodes[i].cache = empty;
                            nodes[i].holdings_changed = true;
                        }
                        front_ends.membership(&churn.states(), now);
                    }
                }
                let target = request.target;
                let (router, node) =
                    front_ends.pick(index, request.client, &targets.get(target), now)?;
                last_node[target as usize] = node.0;
                in_flight += 1;
                max_in_flight = max_in_flight.max(in_flight);
                if index == warmup {
                    open_at = Some(now);
                    for (i, (cpu, disk)) in busy(&cpus, &nodes, now).into_iter().enumerate() {
                        nodes[i].cpu.busy_at_open = cpu;
                        nodes[i].disk.busy_at_open = disk;
                    }
                }
                let measured = index >= warmup;
                let flight = Flight { target, node: node.0, router, stage: Stage::Front, measured };
                let slot = match free_slots.pop() {
                    Some(slot) => {
                        flights[slot as usize] = flight;
                        indices[slot as usize] = index;
                        slot
                    }
                    None => {
                        flights.push(flight);
                        indices.push(index);
                        (flights.len() - 1) as u32
                    }
                };
                if m.front_ns > 0 {
                    cpus.run(&mut nodes, Worker::Front, slot, m.front_ns, now, &mut events);
                } else {
                    let f = &mut flights[slot as usize];
                    arrive(f, slot, &costs, m, &mut nodes, &mut cpus, now, &mut events);
                }
                if next == total {
                    let open = open_at.unwrap_or(0);
                    if now > open {
                        close_at = Some(now);
                        close_window(&cpus, &mut nodes, now);
                    }
                }
            }

            let Some((time, server, slot)) = events.pop() else { break };
            // Start reading the next event's flight now, so that cache miss overlaps this
            // event's work instead of stalling the next.
            if let Some(f) = events.peek_slot().and_then(|next| flights.get(next as usize)) {
                prefetch(f);
            }
            now = time;
            cpus.ended(server, now, &mut events);
            let f = &mut flights[slot as usize];
            match f.stage {
                Stage::Front => {
                    arrive(f, slot, &costs, m, &mut nodes, &mut cpus, now, &mut events);
                }
                Stage::Setup if m.miss_cpu_ns > 0 => {
                    f.stage = Stage::Compute;
                    let helper = Worker::Helper(f.node);
                    cpus.run(&mut nodes, helper, slot, m.miss_cpu_ns, now, &mut events);
                }
                Stage::Setup | Stage::Compute => {
                    let cost = costs.miss[f.target as usize];
                    f.stage = Stage::Disk;
                    front_ends.miss_started(NodeId(f.node), cost.size);
                    let nd = &mut nodes[f.node as usize];
                    events.push(2 * f.node + 1, nd.disk.run(now, cost.disk), slot);
                }
                Stage::Disk => {
                    let cost = costs.miss[f.target as usize];
                    front_ends.miss_finished(NodeId(f.node), cost.size);
                    let nd = &mut nodes[f.node as usize];
                    nd.cache.insert(f.target, (), cost.size);
                    nd.holdings_changed = true;
                    f.stage = Stage::Send;
                    let worker = Worker::Loop(f.node);
                    cpus.run(&mut nodes, worker, slot, cost.send_cpu, now, &mut events);
                }
                Stage::Send => {
                    let nd = &mut nodes[f.node as usize];
                    let in_window =
                        open_at.is_some_and(|o| now > o) && close_at.is_none_or(|c| now <= c);
                    if in_window {
                        nd.completed_in_window += 1;
                        measured += 1;
                    }
                    let node = NodeId(f.node);
                    let index = indices[slot as usize];
                    observe(Completion { index, node: f.node, time: now, in_flight });
                    front_ends.done(f.router, node, &targets.get(f.target), now);
                    in_flight -= 1;
                    free_slots.push(slot);
                }
            }
        }

        let open = open_at.unwrap_or(0);
        let saturated = close_at.is_some();
        let close = match close_at {
            Some(c) => c,
            None => {
                // Every job is done: busy time up to now is all the work queued.
                close_window(&cpus, &mut nodes, now);
                now
            }
        };
        if close <= open {
            return Err(SimError::Config(
                "the measured window has no simulated time: are all costs zero?".into(),
            ));
        }
        let window = (close - open) as f64;
        let mut placed = vec![0u64; n];
        for &node in last_node.iter().filter(|&&node| (node as usize) < n) {
            placed[node as usize] += 1;
        }
        let per_node: Vec<NodeResult> = nodes
            .iter()
            .enumerate()
            .map(|(i, nd)| NodeResult {
                cache_mb: mib(config.caches.of(i)),
                requests: nd.completed_in_window,
                cpu_util: nd.cpu.busy_in_window as f64 / window,
                disk_util: nd.disk.busy_in_window as f64 / window,
                hit_ratio: ratio(nd.hits, nd.lookups),
                targets: placed[i],
            })
            .collect();
        let mean = |f: fn(&NodeResult) -> f64| per_node.iter().map(f).sum::<f64>() / n as f64;
        let max_requests = per_node.iter().map(|r| r.requests).max().unwrap_or(0);
        let mean_requests = measured as f64 / n as f64;
        let stats = front_ends.stats();
        let seconds = window / 1e9;
        Ok(RunResult {
            policy: policy_name.to_string(),
            nodes: n,
            routers: config.routers,
            report_delay_ms: config.report_delay_ns as f64 / 1e6,
            spread: spread.name().to_string(),
            cache_mb_total: mib(ideal_capacity),
            cache: config.cache_kind.to_string(),
            requests: total,
            warmup_requests: warmup,
            measured_requests: measured,
            sim_seconds: seconds,
            throughput_rps: measured as f64 / seconds,
            hit_ratio: ratio(
                nodes.iter().map(|nd| nd.hits).sum(),
                nodes.iter().map(|nd| nd.lookups).sum(),
            ),
            ideal_hit_ratio: ideal,
            imbalance: if mean_requests > 0.0 { max_requests as f64 / mean_requests } else { 1.0 },
            mean_cpu_util: mean(|r| r.cpu_util),
            mean_disk_util: mean(|r| r.disk_util),
            in_flight_limit: limit,
            max_in_flight,
            saturated,
            reassignments: stats.reassignments,
            replications: stats.replications,
            table_entries: stats.table_entries,
            table_evictions: stats.evictions,
            per_node,
        })
    }
}

/// A request reaches its node at `now`: look its target up and queue its first job.
#[allow(clippy::too_many_arguments)]
fn arrive(
    f: &mut Flight,
    slot: u32,
    costs: &Costs,
    m: &Model,
    nodes: &mut [Node],
    cpus: &mut Cpus,
    now: u64,
    events: &mut EventQueue,
) {
    let nd = &mut nodes[f.node as usize];
    let hit = nd.cache.touch(&f.target);
    if f.measured {
        nd.lookups += 1;
        nd.hits += u64::from(hit);
    }
    let (stage, service) = match hit {
        true => (Stage::Send, costs.hit_cpu[f.target as usize]),
        false => {
            // Read when the set-up ends, many events from now.
            prefetch(&costs.miss[f.target as usize]);
            (Stage::Setup, m.setup_ns)
        }
    };
    f.stage = stage;
    cpus.run(nodes, Worker::Loop(f.node), slot, service, now, events);
}

/// Each node's CPU and disk busy time up to `now`.
fn busy(cpus: &Cpus, nodes: &[Node], now: u64) -> Vec<(u64, u64)> {
    (0..nodes.len())
        .map(|i| (cpus.busy_until(nodes, i, now), nodes[i].disk.busy_until(now)))
        .collect()
}

/// The measured window closes at `now`: each node's busy time in it.
fn close_window(cpus: &Cpus, nodes: &mut [Node], now: u64) {
    for (i, (cpu, disk)) in busy(cpus, nodes, now).into_iter().enumerate() {
        let nd = &mut nodes[i];
        nd.cpu.busy_in_window = cpu - nd.cpu.busy_at_open;
        nd.disk.busy_in_window = disk - nd.disk.busy_at_open;
    }
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

fn ratio(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

//! The discrete-event simulation: a front-end and n back-end nodes, each with a CPU, a
//! disk (both FIFO servers) and a byte-bounded cache.
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
use policy::{LoadView, NodeId, NodeState, Outcome, Target};
use trace::Workload;

use crate::event_queue::EventQueue;
use crate::{ideal_hit_ratio, NodeResult, RunResult, SimConfig, SimError};

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
    /// A miss's connection set-up on the CPU; the disk read comes next.
    Setup,
    /// A miss's disk read; transmit and tear-down come next.
    Disk,
    /// The last CPU job (a hit's whole work, or a miss's transmit and tear-down).
    Send,
}

#[derive(Copy, Clone)]
struct Flight {
    index: u64,
    target: u32,
    node: u32,
    stage: Stage,
}

/// Per-target costs under the run's model, computed once per run.
#[derive(Copy, Clone)]
struct TargetCost {
    size: u64,
    hit_cpu: u64,
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

struct Node {
    cpu: Server,
    disk: Server,
    cache: Box<dyn ByteCache<u32, ()>>,
    completed_in_window: u64,
    lookups: u64,
    hits: u64,
}

/// Runs simulations of one workload, remembering ideal hit ratios across runs (a sweep
/// asks for the same one once per policy).
pub struct Simulator<'w> {
    workload: &'w Workload,
    ideal: HashMap<(u64, Kind, u64), f64>,
}

impl<'w> Simulator<'w> {
    pub fn new(workload: &'w Workload) -> Self {
        Simulator { workload, ideal: HashMap::new() }
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
        let costs: Vec<TargetCost> = w
            .targets
            .iter()
            .map(|t| TargetCost {
                size: t.size,
                hit_cpu: m.hit_cpu_ns(t.size),
                send_cpu: m.send_cpu_ns(t.size),
                disk: m.disk_ns(t.size),
            })
            .collect();
        let targets: Vec<Target> =
            (0..w.targets.len()).map(|i| Target::from_key(i as u64)).collect();

        let n = config.nodes;
        let mut policy = policy::build(&config.policy)?;
        let policy_name = policy.name();
        policy.membership(&NodeState::uniform(n), 0);
        let mut view = LoadView::new(n);
        let mut nodes: Vec<Node> = (0..n)
            .map(|i| Node {
                cpu: Server::default(),
                disk: Server::default(),
                cache: config
                    .cache_kind
                    .build_with_hasher::<u32, (), _>(config.caches.of(i), FxBuildHasher),
                completed_in_window: 0,
                lookups: 0,
                hits: 0,
            })
            .collect();

        let limit = config.in_flight_limit().min(total);
        let mut flights: Vec<Flight> = Vec::with_capacity(limit as usize);
        let mut free_slots: Vec<u32> = Vec::with_capacity(limit as usize);
        // Server 2·i is node i's CPU, 2·i + 1 its disk.
        let mut events = EventQueue::new(2 * n);

        let mut now = 0u64;
        let mut next = 0u64;
        let mut in_flight = 0u64;
        let mut max_in_flight = 0u64;
        let mut open_at: Option<u64> = None;
        let mut close_at: Option<u64> = None;
        let mut measured = 0u64;

        loop {
            while in_flight < limit && next < total {
                let index = next;
                next += 1;
                let target = w.requests[index as usize].target;
                let node = policy
                    .pick(&targets[target as usize], &view, now)
                    .ok_or_else(|| SimError::NoNode { policy: policy_name.to_string(), index })?;
                if node.index() >= n {
                    return Err(SimError::BadNode {
                        policy: policy_name.to_string(),
                        node: node.0,
                        nodes: n,
                    });
                }
                view.started(node);
                in_flight += 1;
                max_in_flight = max_in_flight.max(in_flight);
                if index == warmup {
                    open_at = Some(now);
                    for nd in &mut nodes {
                        nd.cpu.busy_at_open = nd.cpu.busy_until(now);
                        nd.disk.busy_at_open = nd.disk.busy_until(now);
                    }
                }
                let cost = costs[target as usize];
                let nd = &mut nodes[node.index()];
                let hit = nd.cache.get(&target).is_some();
                if index >= warmup {
                    nd.lookups += 1;
                    nd.hits += u64::from(hit);
                }
                let (stage, done) = if hit {
                    (Stage::Send, nd.cpu.run(now, cost.hit_cpu))
                } else {
                    (Stage::Setup, nd.cpu.run(now, m.setup_ns))
                };
                let flight = Flight { index, target, node: node.0, stage };
                let slot = match free_slots.pop() {
                    Some(slot) => {
                        flights[slot as usize] = flight;
                        slot
                    }
                    None => {
                        flights.push(flight);
                        (flights.len() - 1) as u32
                    }
                };
                events.push(2 * node.0, done, slot);
                if next == total {
                    let open = open_at.unwrap_or(0);
                    if now > open {
                        close_at = Some(now);
                        for nd in &mut nodes {
                            nd.cpu.busy_in_window = nd.cpu.busy_until(now) - nd.cpu.busy_at_open;
                            nd.disk.busy_in_window = nd.disk.busy_until(now) - nd.disk.busy_at_open;
                        }
                    }
                }
            }

            let Some((time, slot)) = events.pop() else { break };
            now = time;
            let f = &mut flights[slot as usize];
            let cost = costs[f.target as usize];
            let nd = &mut nodes[f.node as usize];
            match f.stage {
                Stage::Setup => {
                    f.stage = Stage::Disk;
                    events.push(2 * f.node + 1, nd.disk.run(now, cost.disk), slot);
                }
                Stage::Disk => {
                    nd.cache.insert(f.target, (), cost.size);
                    f.stage = Stage::Send;
                    events.push(2 * f.node, nd.cpu.run(now, cost.send_cpu), slot);
                }
                Stage::Send => {
                    let in_window =
                        open_at.is_some_and(|o| now > o) && close_at.is_none_or(|c| now <= c);
                    if in_window {
                        nd.completed_in_window += 1;
                        measured += 1;
                    }
                    let node = NodeId(f.node);
                    observe(Completion { index: f.index, node: f.node, time: now, in_flight });
                    view.finished(node);
                    policy.done(node, &targets[f.target as usize], Outcome::Ok, now);
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
                for nd in &mut nodes {
                    nd.cpu.busy_in_window = nd.cpu.queued - nd.cpu.busy_at_open;
                    nd.disk.busy_in_window = nd.disk.queued - nd.disk.busy_at_open;
                }
                now
            }
        };
        if close <= open {
            return Err(SimError::Config(
                "the measured window has no simulated time: are all costs zero?".into(),
            ));
        }
        let window = (close - open) as f64;
        let per_node: Vec<NodeResult> = nodes
            .iter()
            .enumerate()
            .map(|(i, nd)| NodeResult {
                cache_mb: mib(config.caches.of(i)),
                requests: nd.completed_in_window,
                cpu_util: nd.cpu.busy_in_window as f64 / window,
                disk_util: nd.disk.busy_in_window as f64 / window,
                hit_ratio: ratio(nd.hits, nd.lookups),
            })
            .collect();
        let mean = |f: fn(&NodeResult) -> f64| per_node.iter().map(f).sum::<f64>() / n as f64;
        let max_requests = per_node.iter().map(|r| r.requests).max().unwrap_or(0);
        let mean_requests = measured as f64 / n as f64;
        let stats = policy.stats();
        let seconds = window / 1e9;
        Ok(RunResult {
            policy: policy_name.to_string(),
            nodes: n,
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

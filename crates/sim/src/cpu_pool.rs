//! Shared cores: every process of a one-machine cluster (nodes, front-end, clients) runs
//! its CPU work on the same few cores, as `larder bench experiment` does on one host.
//!
//! A per-node FIFO CPU (the LARD model) would give four nodes four CPUs; on one machine
//! they share two, so a node's idle CPU time goes to the others and imbalance costs
//! little, while a node's threads still each do one thing at a time: its event loop
//! cannot use two cores, and its single helper thread caps the misses it computes. So a
//! job belongs to a thread (or to no thread: the front-end's and clients' share, whose
//! threads never limit anything here) and needs a free core; ready threads wait for
//! cores in one FIFO, and a thread with more work goes to the back of it after each job,
//! as a time-sharing scheduler would share the cores among busy threads.
//!
//! A core runs one job at a time, so its completions come in time order and fit the
//! event queue's FIFO per server: the pool's cores are servers `first_server..`.

use std::collections::VecDeque;

use crate::event_queue::EventQueue;

/// Who may run next on a free core.
#[derive(Copy, Clone)]
enum Ready {
    /// A thread with queued jobs: its oldest job runs.
    Thread(u32),
    /// A job bound to no thread.
    Job { slot: u32, service: u64 },
}

#[derive(Copy, Clone, PartialEq, Eq)]
enum State {
    /// No job queued or running.
    Idle,
    /// In the ready FIFO.
    Ready,
    Running,
}

struct Thread {
    jobs: VecDeque<(u32, u64)>,
    state: State,
    /// Service of the jobs it completed.
    busy_done: u64,
    /// Start and service of the job it is running.
    running: (u64, u64),
}

pub(crate) struct CpuPool {
    first_server: u32,
    /// Free cores (their indices), used last-freed first.
    idle: Vec<u32>,
    /// The thread each core is running, if its job has one.
    on_core: Vec<Option<u32>>,
    threads: Vec<Thread>,
    ready: VecDeque<Ready>,
}

impl CpuPool {
    /// `cores` cores (event servers `first_server..first_server + cores`) shared by
    /// `threads` threads.
    pub(crate) fn new(cores: u32, threads: usize, first_server: u32) -> Self {
        CpuPool {
            first_server,
            idle: (0..cores).rev().collect(),
            on_core: vec![None; cores as usize],
            threads: (0..threads)
                .map(|_| Thread {
                    jobs: VecDeque::new(),
                    state: State::Idle,
                    busy_done: 0,
                    running: (0, 0),
                })
                .collect(),
            ready: VecDeque::new(),
        }
    }

    /// Whether `server` is one of the pool's cores.
    pub(crate) fn is_core(&self, server: u32) -> bool {
        (self.first_server..self.first_server + self.on_core.len() as u32).contains(&server)
    }

    /// Queue `slot`'s job of `service` ns on `thread` (or on none) at `now`.
    pub(crate) fn submit(
        &mut self,
        thread: Option<u32>,
        slot: u32,
        service: u64,
        now: u64,
        events: &mut EventQueue,
    ) {
        match thread {
            None => self.ready.push_back(Ready::Job { slot, service }),
            Some(t) => {
                let th = &mut self.threads[t as usize];
                th.jobs.push_back((slot, service));
                if th.state == State::Idle {
                    th.state = State::Ready;
                    self.ready.push_back(Ready::Thread(t));
                }
            }
        }
        self.dispatch(now, events);
    }

    /// The job on core `server` finished at `now`: free the core and its thread.
    pub(crate) fn finished(&mut self, server: u32, now: u64, events: &mut EventQueue) {
        let core = server - self.first_server;
        if let Some(t) = self.on_core[core as usize].take() {
            let th = &mut self.threads[t as usize];
            th.busy_done += th.running.1;
            th.running = (0, 0);
            if th.jobs.is_empty() {
                th.state = State::Idle;
            } else {
                th.state = State::Ready;
                self.ready.push_back(Ready::Thread(t));
            }
        }
        self.idle.push(core);
        self.dispatch(now, events);
    }

    /// CPU time `thread` spent up to `now` (its running job counted so far).
    pub(crate) fn busy_until(&self, thread: u32, now: u64) -> u64 {
        let th = &self.threads[thread as usize];
        let (start, service) = th.running;
        let running =
            if th.state == State::Running { now.saturating_sub(start).min(service) } else { 0 };
        th.busy_done + running
    }

    fn dispatch(&mut self, now: u64, events: &mut EventQueue) {
        while !self.idle.is_empty() {
            let Some(next) = self.ready.pop_front() else { return };
            let core = self.idle.pop().expect("a core is idle");
            let (thread, slot, service) = match next {
                Ready::Job { slot, service } => (None, slot, service),
                Ready::Thread(t) => {
                    let th = &mut self.threads[t as usize];
                    let (slot, service) = th.jobs.pop_front().expect("a ready thread has a job");
                    th.state = State::Running;
                    th.running = (now, service);
                    (Some(t), slot, service)
                }
            };
            self.on_core[core as usize] = thread;
            events.push(self.first_server + core, now + service, slot);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the pool until no event is left; returns (slot, completion time) in order.
    fn drain(pool: &mut CpuPool, events: &mut EventQueue) -> Vec<(u32, u64)> {
        let mut done = Vec::new();
        let mut guard = 0;
        while let Some((time, server, slot)) = events.pop() {
            pool.finished(server, time, events);
            done.push((slot, time));
            guard += 1;
            assert!(guard < 1000, "the pool never runs dry");
        }
        done
    }

    #[test]
    fn a_thread_runs_one_job_at_a_time_even_with_cores_free() {
        let mut events = EventQueue::new(2);
        let mut pool = CpuPool::new(2, 1, 0);
        pool.submit(Some(0), 1, 10, 0, &mut events);
        pool.submit(Some(0), 2, 10, 0, &mut events);
        assert_eq!(drain(&mut pool, &mut events), vec![(1, 10), (2, 20)]);
        assert_eq!(pool.busy_until(0, 20), 20);
    }

    #[test]
    fn threads_share_the_cores_and_free_jobs_take_any_core() {
        let mut events = EventQueue::new(3);
        let mut pool = CpuPool::new(2, 2, 1);
        assert!(!pool.is_core(0) && pool.is_core(1) && pool.is_core(2) && !pool.is_core(3));
        pool.submit(Some(0), 1, 10, 0, &mut events);
        pool.submit(Some(1), 2, 10, 0, &mut events);
        pool.submit(None, 3, 5, 0, &mut events);
        pool.submit(None, 4, 5, 0, &mut events);
        // Two cores: the two threads first, then the free jobs side by side.
        assert_eq!(drain(&mut pool, &mut events), vec![(1, 10), (2, 10), (3, 15), (4, 15)]);
        assert_eq!(pool.busy_until(0, 100), 10);
        assert_eq!(pool.busy_until(1, 100), 10);
    }

    #[test]
    fn a_busy_thread_goes_to_the_back_after_each_job() {
        let mut events = EventQueue::new(1);
        let mut pool = CpuPool::new(1, 2, 0);
        pool.submit(Some(0), 1, 10, 0, &mut events);
        pool.submit(Some(0), 2, 10, 0, &mut events);
        pool.submit(Some(1), 3, 10, 0, &mut events);
        assert_eq!(pool.busy_until(0, 5), 5, "the running job counts so far");
        assert_eq!(drain(&mut pool, &mut events), vec![(1, 10), (3, 20), (2, 30)]);
    }
}

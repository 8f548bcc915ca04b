//! The simulator's future events, exploiting that every server is FIFO.
//!
//! A job queued on a FIFO server finishes at `max(now, free_at) + service`, so the
//! completions of one server are produced in time order. Each server (a node's CPU or
//! disk) therefore keeps its pending completions in a plain FIFO, and only the servers'
//! earliest completions compete in a 4-ary min-heap: at most 2·n entries instead of one
//! per request in flight (S ≈ 65·n), and O(1) queue work per event besides.
//!
//! Order is fully determined: heap keys are `(time, server)` packed in a `u128` (unique,
//! as each server has one head), and within a server equal times keep queue order.

use std::collections::VecDeque;

/// A min-heap of `u128` keys with four children per node: half a binary heap's depth,
/// and siblings side by side in memory.
#[derive(Default)]
struct Heap4 {
    keys: Vec<u128>,
}

impl Heap4 {
    fn push(&mut self, key: u128) {
        let mut i = self.keys.len();
        self.keys.push(key);
        while i > 0 {
            let parent = (i - 1) / 4;
            if self.keys[parent] <= key {
                break;
            }
            self.keys[i] = self.keys[parent];
            i = parent;
        }
        self.keys[i] = key;
    }

    fn peek(&self) -> Option<u128> {
        self.keys.first().copied()
    }

    /// Replace the smallest key by `key` (or remove it, with `None`).
    fn replace_top(&mut self, key: Option<u128>) {
        let key = match key {
            Some(key) => key,
            None => match self.keys.pop() {
                Some(last) if !self.keys.is_empty() => last,
                _ => return,
            },
        };
        let n = self.keys.len();
        let mut i = 0;
        loop {
            let child = 4 * i + 1;
            if child >= n {
                break;
            }
            let mut best = child;
            for c in child + 1..(child + 4).min(n) {
                if self.keys[c] < self.keys[best] {
                    best = c;
                }
            }
            if key <= self.keys[best] {
                break;
            }
            self.keys[i] = self.keys[best];
            i = best;
        }
        self.keys[i] = key;
    }
}

fn key(time: u64, server: u32) -> u128 {
    (u128::from(time) << 32) | u128::from(server)
}

/// Pending completions of `servers` FIFO servers, earliest first.
pub(crate) struct EventQueue {
    fifo: Vec<VecDeque<(u64, u32)>>,
    heads: Heap4,
}

impl EventQueue {
    pub(crate) fn new(servers: usize) -> Self {
        EventQueue {
            fifo: (0..servers).map(|_| VecDeque::new()).collect(),
            heads: Heap4::default(),
        }
    }

    /// `slot`'s job on `server` completes at `time`, which is no earlier than any
    /// completion already queued on that server (FIFO service guarantees it).
    pub(crate) fn push(&mut self, server: u32, time: u64, slot: u32) {
        let q = &mut self.fifo[server as usize];
        q.push_back((time, slot));
        if q.len() == 1 {
            self.heads.push(key(time, server));
        }
    }

    /// The slot of the earliest completion, without taking it.
    pub(crate) fn peek_slot(&self) -> Option<u32> {
        let server = self.heads.peek()? as u32;
        self.fifo[server as usize].front().map(|&(_, slot)| slot)
    }

    /// The earliest completion as `(time, server, slot)`.
    pub(crate) fn pop(&mut self) -> Option<(u64, u32, u32)> {
        let server = self.heads.peek()? as u32;
        let q = &mut self.fifo[server as usize];
        let event = q.pop_front();
        self.heads.replace_top(q.front().map(|&(time, _)| key(time, server)));
        event.map(|(time, slot)| (time, server, slot))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        /// Against a sorted set of (time, server, push order): the same pops.
        #[test]
        fn pops_in_time_then_server_order(
            ops in prop::collection::vec(prop::option::of((0u32..6, 0u64..5)), 0..300)
        ) {
            let mut q = EventQueue::new(6);
            let mut model = BTreeSet::new();
            let mut last = [0u64; 6];
            for (n, op) in ops.into_iter().enumerate() {
                match op {
                    Some((server, dt)) => {
                        let time = last[server as usize] + dt;
                        last[server as usize] = time;
                        q.push(server, time, n as u32);
                        model.insert((time, server, n as u32));
                    }
                    None => {
                        let next = model.first().map(|&(_, _, slot)| slot);
                        prop_assert_eq!(q.peek_slot(), next);
                        prop_assert_eq!(q.pop(), model.pop_first());
                    }
                }
            }
            while let Some(want) = model.pop_first() {
                prop_assert_eq!(q.pop(), Some(want));
            }
            prop_assert_eq!(q.pop(), None);
        }
    }
}

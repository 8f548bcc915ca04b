//! The simulator's future events, exploiting that every server is FIFO.
//!
//! A job queued on a FIFO server finishes at `max(now, free_at) + service`, so the
//! completions of one server are produced in time order. Each server (a node's CPU or
//! disk) therefore keeps its pending completions in a plain FIFO, and only the servers'
//! earliest completions compete in a 4-ary min-heap: at most 2·n entries instead of one
//! per request in flight (S ≈ 65·n), and O(1) queue work per event besides.
//!
//! Order is fully determined: heap keys are `(time, server)` packed in one integer
//! (unique, as each server has one head), and within a server equal times keep queue
//! order. The packing is a `u64` (time above the server's bits) while times fit in it,
//! which halves the heap's memory and its comparisons; a later time switches the heap
//! to `u128` keys once, in the same order.

use std::collections::VecDeque;

/// A min-heap of keys with four children per node: half a binary heap's depth, and
/// siblings side by side in memory.
struct Heap4<K> {
    keys: Vec<K>,
}

impl<K: Copy + Ord> Heap4<K> {
    fn push(&mut self, key: K) {
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

    fn peek(&self) -> Option<K> {
        self.keys.first().copied()
    }

    /// Replace the smallest key by `key` (or remove it, with `None`).
    ///
    /// Bottom-up: the smallest children move up a level all the way to a leaf, without
    /// comparing them with `key`, and `key` then rises from there. A server's next
    /// completion ranks anywhere among the others, so it mostly belongs near the bottom
    /// (three quarters of a 4-ary heap are leaves): the rise is short, and the walk down
    /// has no hard-to-predict "stop here" test at each level. Keys are unique, so the
    /// order of pops is the same whatever the layout.
    fn replace_top(&mut self, key: Option<K>) {
        let key = match key {
            Some(key) => key,
            None => match self.keys.pop() {
                Some(last) if !self.keys.is_empty() => last,
                _ => return,
            },
        };
        let keys = &mut self.keys[..];
        let n = keys.len();
        let mut i = 0;
        loop {
            let child = 4 * i + 1;
            let best = if child + 4 <= n {
                // All four children: the smaller of each pair, then of the two.
                let c = &keys[child..child + 4];
                let a = usize::from(c[1] < c[0]);
                let b = 2 + usize::from(c[3] < c[2]);
                child + if c[b] < c[a] { b } else { a }
            } else if child < n {
                (child + 1..n).fold(child, |best, c| if keys[c] < keys[best] { c } else { best })
            } else {
                break;
            };
            keys[i] = keys[best];
            i = best;
        }
        while i > 0 {
            let parent = (i - 1) / 4;
            if keys[parent] <= key {
                break;
            }
            keys[i] = keys[parent];
            i = parent;
        }
        keys[i] = key;
    }
}

/// The servers' earliest completions, keyed by `(time, server)`.
enum Heads {
    /// `time << shift | server`, while every time is below `2^(64 − shift)`.
    Narrow { heap: Heap4<u64>, shift: u32 },
    /// `time << 32 | server`.
    Wide(Heap4<u128>),
}

impl Heads {
    fn new(servers: usize) -> Self {
        let shift = usize::BITS - servers.saturating_sub(1).leading_zeros();
        Heads::Narrow { heap: Heap4 { keys: Vec::with_capacity(servers) }, shift: shift.max(1) }
    }

    fn push(&mut self, time: u64, server: u32) {
        if let Heads::Narrow { heap, shift } = self {
            if time >> (64 - *shift) == 0 {
                heap.push((time << *shift) | u64::from(server));
                return;
            }
            self.widen();
        }
        if let Heads::Wide(heap) = self {
            heap.push(wide_key(time, server));
        }
    }

    /// The earliest completion's time and server.
    fn peek(&self) -> Option<(u64, u32)> {
        match self {
            Heads::Narrow { heap, shift } => {
                heap.peek().map(|k| (k >> *shift, (k & ((1 << *shift) - 1)) as u32))
            }
            Heads::Wide(heap) => heap.peek().map(|k| ((k >> 32) as u64, k as u32)),
        }
    }

    /// The top server's next completion is at `time` (`None`: it has no more).
    fn replace_top(&mut self, server: u32, time: Option<u64>) {
        if let (Heads::Narrow { shift, .. }, Some(time)) = (&*self, time) {
            if time >> (64 - *shift) != 0 {
                self.widen();
            }
        }
        match self {
            Heads::Narrow { heap, shift } => {
                heap.replace_top(time.map(|t| (t << *shift) | u64::from(server)))
            }
            Heads::Wide(heap) => heap.replace_top(time.map(|t| wide_key(t, server))),
        }
    }

    /// Switch to `u128` keys: the same heap order, as the packing keeps `(time, server)`
    /// order.
    fn widen(&mut self) {
        if let Heads::Narrow { heap, shift } = self {
            let mask = (1u64 << *shift) - 1;
            let keys = heap.keys.iter().map(|&k| wide_key(k >> *shift, (k & mask) as u32));
            *self = Heads::Wide(Heap4 { keys: keys.collect() });
        }
    }
}

fn wide_key(time: u64, server: u32) -> u128 {
    (u128::from(time) << 32) | u128::from(server)
}

/// Pending completions of `servers` FIFO servers, earliest first.
pub(crate) struct EventQueue {
    fifo: Vec<VecDeque<(u64, u32)>>,
    /// Per server, the slot of its earliest completion (its FIFO's front), kept in a
    /// compact array: the next event's slot is then known without reading the FIFO,
    /// whose buffers are all over memory, and the simulator loads its flight ahead.
    front_slots: Vec<u32>,
    heads: Heads,
}

impl EventQueue {
    pub(crate) fn new(servers: usize) -> Self {
        EventQueue {
            fifo: (0..servers).map(|_| VecDeque::new()).collect(),
            front_slots: vec![0; servers],
            heads: Heads::new(servers),
        }
    }

    /// `slot`'s job on `server` completes at `time`, which is no earlier than any
    /// completion already queued on that server (FIFO service guarantees it).
    pub(crate) fn push(&mut self, server: u32, time: u64, slot: u32) {
        let q = &mut self.fifo[server as usize];
        q.push_back((time, slot));
        if q.len() == 1 {
            self.front_slots[server as usize] = slot;
            self.heads.push(time, server);
        }
    }

    /// The slot of the earliest completion, without taking it. Taking it reads its
    /// server's next completion, which is loaded ahead from here.
    pub(crate) fn peek_slot(&self) -> Option<u32> {
        let (_, server) = self.heads.peek()?;
        let server = server as usize;
        if let Some(after) = self.fifo[server].get(1) {
            crate::prefetch::prefetch(after);
        }
        Some(self.front_slots[server])
    }

    /// The earliest completion as `(time, server, slot)`. Its time and slot come from
    /// the heap and [`EventQueue::front_slots`]; of the FIFO only the completion after it
    /// is read, the one [`EventQueue::peek_slot`] loaded ahead.
    pub(crate) fn pop(&mut self) -> Option<(u64, u32, u32)> {
        let (time, server) = self.heads.peek()?;
        let slot = self.front_slots[server as usize];
        let q = &mut self.fifo[server as usize];
        q.pop_front();
        let next = q.front().copied();
        if let Some((_, slot)) = next {
            self.front_slots[server as usize] = slot;
        }
        self.heads.replace_top(server, next.map(|(time, _)| time));
        Some((time, server, slot))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        /// Against a sorted set of (time, server, push order): the same pops, also once
        /// times outgrow the narrow keys (the jumps of 2^60).
        #[test]
        fn pops_in_time_then_server_order(
            ops in prop::collection::vec(
                prop::option::of((0u32..6, prop_oneof![8 => 0u64..5, 1 => Just(1u64 << 60)])),
                0..300,
            )
        ) {
            let mut q = EventQueue::new(6);
            let mut model = BTreeSet::new();
            let mut last = [0u64; 6];
            for (n, op) in ops.into_iter().enumerate() {
                match op {
                    Some((server, dt)) => {
                        let last_time = last[server as usize];
                        let time = last_time.checked_add(dt).unwrap_or(last_time);
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

//! `wrr`: smooth weighted round robin (nginx's algorithm), the weighted "IP sprayer".
//!
//! Each pick adds every node's weight to its running score, takes the highest score and
//! subtracts the total weight from it. Over a cycle of `total weight` picks each node gets
//! exactly its weight, spread out evenly (weights 5, 1, 1 give `a a b a c a a`, not
//! `a a a a a b c`), after which every score is back to zero. So the cycle is computed
//! once per membership change and a pick is an array read; with equal weights the cycle
//! is the nodes in order, however many. Only when unequal weights make the cycle longer
//! than [`WeightedRoundRobin::with_max_schedule`] allows are picks stepped live, in
//! O(nodes).

use crate::{LoadView, Nanos, NodeId, NodeState, Policy, PolicySpec, Target};

/// Longest precomputed cycle (picks). 8,192 covers 1,000 nodes of mixed small weights and
/// costs at most 32 KiB and 8,192 · nodes steps per membership change.
pub const DEFAULT_MAX_SCHEDULE: usize = 8192;

#[derive(Clone, Debug)]
pub struct WeightedRoundRobin {
    nodes: Vec<NodeId>,
    weights: Vec<i64>,
    scores: Vec<i64>,
    total: i64,
    /// One full cycle of picks, or empty when stepping live.
    schedule: Vec<NodeId>,
    next: usize,
    max_schedule: usize,
}

impl WeightedRoundRobin {
    pub fn from_spec(_spec: &PolicySpec) -> Self {
        WeightedRoundRobin::with_max_schedule(DEFAULT_MAX_SCHEDULE)
    }

    /// `max_schedule` bounds the precomputed cycle's length; 0 always steps live.
    pub fn with_max_schedule(max_schedule: usize) -> Self {
        WeightedRoundRobin {
            nodes: Vec::new(),
            weights: Vec::new(),
            scores: Vec::new(),
            total: 0,
            schedule: Vec::new(),
            next: 0,
            max_schedule,
        }
    }

    /// One step of smooth weighted round robin; ties go to the earliest node.
    fn step(&mut self) -> Option<NodeId> {
        if self.nodes.is_empty() {
            return None;
        }
        let mut best = 0;
        for i in 0..self.nodes.len() {
            self.scores[i] += self.weights[i];
            if self.scores[i] > self.scores[best] {
                best = i;
            }
        }
        self.scores[best] -= self.total;
        Some(self.nodes[best])
    }
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

impl Policy for WeightedRoundRobin {
    fn name(&self) -> &'static str {
        "wrr"
    }

    fn pick(&mut self, _target: &Target, _view: &LoadView, _now: Nanos) -> Option<NodeId> {
        if self.schedule.is_empty() {
            return self.step();
        }
        let node = self.schedule[self.next];
        self.next = (self.next + 1) % self.schedule.len();
        Some(node)
    }

    fn membership(&mut self, nodes: &[NodeState], _now: Nanos) {
        let eligible = nodes.iter().filter(|n| n.eligible());
        self.nodes = eligible.clone().map(|n| n.id).collect();
        // Dividing by the common divisor leaves every comparison, and so every pick, the
        // same while shortening the cycle (weights 100, 200 cycle in 3 picks, not 300).
        let divisor = eligible.clone().fold(0, |g, n| gcd(i64::from(n.weight), g)).max(1);
        self.weights = eligible.map(|n| i64::from(n.weight) / divisor).collect();
        self.scores = vec![0; self.nodes.len()];
        self.total = self.weights.iter().sum();
        self.schedule.clear();
        self.next = 0;
        if self.max_schedule > 0 && self.weights.iter().all(|&w| w == 1) {
            // Equal weights (1 after the divisor): the cycle is the nodes in order (each
            // step's tie goes to the earliest node not yet taken), one entry a node
            // whatever their number, built without stepping.
            self.schedule = self.nodes.clone();
        } else if usize::try_from(self.total).is_ok_and(|t| t <= self.max_schedule) {
            let cycle: Vec<NodeId> = (0..self.total).filter_map(|_| self.step()).collect();
            self.schedule = cycle;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PolicyKind;
    use proptest::prelude::*;

    fn nodes(weights: &[u32]) -> Vec<NodeState> {
        let mut n = NodeState::uniform(weights.len());
        for (node, &w) in n.iter_mut().zip(weights) {
            node.weight = w;
        }
        n
    }

    fn picks(p: &mut WeightedRoundRobin, count: usize) -> Vec<u32> {
        let (t, v) = (Target::from_key(0), LoadView::new(0));
        (0..count).map(|_| p.pick(&t, &v, 0).unwrap().0).collect()
    }

    #[test]
    fn smooth_order_matches_nginx() {
        let mut p = WeightedRoundRobin::from_spec(&PolicySpec::new(PolicyKind::Wrr));
        p.membership(&nodes(&[5, 1, 1]), 0);
        assert_eq!(picks(&mut p, 14), [0, 0, 1, 0, 2, 0, 0, 0, 0, 1, 0, 2, 0, 0]);
    }

    #[test]
    fn skips_down_and_weightless_nodes_and_empties_out() {
        let mut p = WeightedRoundRobin::from_spec(&PolicySpec::new(PolicyKind::Wrr));
        let mut n = nodes(&[2, 0, 1]);
        n[2].up = false;
        p.membership(&n, 0);
        assert_eq!(picks(&mut p, 3), [0, 0, 0]);
        p.membership(&[], 0);
        assert_eq!(p.pick(&Target::from_key(0), &LoadView::new(0), 0), None);
    }

    #[test]
    fn equal_weights_cycle_in_node_order_past_the_schedule_cap() {
        // 7 nodes of weight 3 (1 after the divisor) need a cycle of 7 > 4 picks.
        let mut capped = WeightedRoundRobin::with_max_schedule(4);
        let mut live = WeightedRoundRobin::with_max_schedule(0);
        capped.membership(&nodes(&[3; 7]), 0);
        live.membership(&nodes(&[3; 7]), 0);
        assert_eq!(capped.schedule.len(), 7);
        let got = picks(&mut capped, 21);
        assert_eq!(got, picks(&mut live, 21));
        assert_eq!(got[..7], [0, 1, 2, 3, 4, 5, 6]);
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            rng_seed: proptest::test_runner::RngSeed::Fixed(0x3422),
            ..ProptestConfig::with_cases(64)
        })]

        /// Each node gets exactly its weight per cycle, and the precomputed cycle picks
        /// exactly what live stepping picks.
        #[test]
        fn weights_are_respected_over_a_cycle(weights in proptest::collection::vec(1u32..20, 1..8)) {
            let mut cached = WeightedRoundRobin::with_max_schedule(DEFAULT_MAX_SCHEDULE);
            let mut live = WeightedRoundRobin::with_max_schedule(0);
            cached.membership(&nodes(&weights), 0);
            live.membership(&nodes(&weights), 0);
            let total: u32 = weights.iter().sum();
            let got = picks(&mut cached, 3 * total as usize);
            prop_assert_eq!(&got, &picks(&mut live, 3 * total as usize));
            for (id, &w) in weights.iter().enumerate() {
                let count = got[..total as usize].iter().filter(|&&n| n == id as u32).count();
                prop_assert_eq!(count, w as usize);
            }
        }
    }
}

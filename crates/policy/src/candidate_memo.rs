//! The candidates of targets that spill, remembered: a hot target's candidates are
//! computed once per ring, not on every request that finds its node overloaded.
//!
//! A target whose node is above T_high asks for its candidates on every request
//! ([`crate::roster::Roster::spill`], and `lard-r`'s least loaded candidate on every hot
//! request). Finding them walks the ring from the target's position, and once the ring
//! outgrows the CPU's caches (thousands of nodes) that walk waits for memory: at 10,000
//! nodes it made a pick cost several times one at 8. The targets that spill are few and
//! come back often (the hottest ones, or those on an overloaded node), so a small table
//! that keeps the last answer for each slot answers most of them from a cache line of its
//! own. It is exact: an entry counts only for the ring it was computed on
//! ([`crate::home::Homes::ring_version`]), so a membership, capacity or warmth change
//! recomputes.

use crate::home::Candidates;
use crate::TargetKey;

/// Slots in the table: 1,024 of 56 bytes (56 KiB), more than the targets that spill at
/// once on a cluster of 10,000 nodes under a Zipf stream (a few hundred), small enough to
/// stay in the CPU's second-level cache.
const SLOTS: usize = 1 << 10;

/// One remembered answer.
#[derive(Copy, Clone, Debug)]
struct Slot {
    key: TargetKey,
    /// The ring it was computed on; [`NEVER`] for an empty slot.
    ring: u64,
    candidates: Candidates,
}

/// No ring has this version: an empty slot matches nothing.
const NEVER: u64 = u64::MAX;

/// The last candidates computed for each slot's target (direct-mapped by key).
#[derive(Clone, Debug, Default)]
pub struct CandidateMemo {
    /// Empty until first used, so policies that never spill pay nothing.
    slots: Vec<Slot>,
}

impl CandidateMemo {
    /// `key`'s candidates on ring `ring`: remembered, or `compute`d and remembered.
    pub fn get(
        &mut self,
        key: TargetKey,
        ring: u64,
        compute: impl FnOnce() -> Candidates,
    ) -> Candidates {
        if self.slots.is_empty() {
            let empty = Slot { key: TargetKey(0), ring: NEVER, candidates: Candidates::default() };
            self.slots = vec![empty; SLOTS];
        }
        // Keys are hashes in the router but small integers in the simulator: mix them.
        let at =
            (key.0.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - SLOTS.trailing_zeros())) as usize;
        let slot = &mut self.slots[at];
        if slot.key != key || slot.ring != ring {
            *slot = Slot { key, ring, candidates: compute() };
        }
        slot.candidates
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::home::{Capacity, Homes};
    use crate::{LoadView, NodeState};

    #[test]
    fn remembers_per_ring_and_recomputes_when_the_ring_changes() {
        let mut homes = Homes::new(Capacity::Weighed);
        homes.rebuild(&NodeState::uniform(40));
        let mut view = LoadView::new(40);
        homes.sync(&view);
        let mut memo = CandidateMemo::default();
        // 3,000 keys over 1,024 slots: collisions recompute, never answer wrong; 300
        // keys mostly stay.
        for keys in [3_000, 300] {
            let mut computed = [0; 3];
            for (round, computed) in computed.iter_mut().enumerate() {
                for k in 0..keys {
                    let key = TargetKey(k);
                    let got = memo.get(key, homes.ring_version(), || {
                        *computed += 1;
                        homes.candidates(key)
                    });
                    assert_eq!(got.as_slice(), homes.candidates(key).as_slice(), "round {round}");
                }
            }
            if keys == 300 {
                assert!(computed[1] < 100 && computed[2] == computed[1], "{computed:?}");
            }
        }
        // A capacity reported changes the ring: the answers follow it.
        view.set_capacity(crate::NodeId(3), 1 << 30);
        homes.sync(&view);
        for k in 0..3_000 {
            let key = TargetKey(k);
            let got = memo.get(key, homes.ring_version(), || homes.candidates(key));
            assert_eq!(got.as_slice(), homes.candidates(key).as_slice());
        }
        let key = TargetKey(7);
        let mut again = 0;
        for _ in 0..10 {
            memo.get(key, homes.ring_version(), || {
                again += 1;
                homes.candidates(key)
            });
        }
        assert_eq!(again, 1, "computed once, then remembered");
    }
}

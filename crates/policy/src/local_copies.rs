//! Local copies: on a peer (a distributor that runs inside a node), the hottest targets
//! are served by the peer's own node, whichever node owns them.
//!
//! A peer that forwards a request to the target's owner relays the owner's response, so the
//! response crosses two nodes' links (owner → this peer → client) where serving it here
//! crosses one. Under skewed popularity a few hot targets take a large part of the
//! requests (under Zipf α 0.8 over 1,536 documents the hottest 128 take half), so a copy of
//! each on every peer saves most of those second crossings, as LARD/R's replicas of hot
//! targets do. A copy costs cache: a peer keeps at most as many as fit in a share of its
//! node's cache ([`crate::PolicySpec::local_copies`], counted in the node's mean cached
//! object), so what they can displace is that share of the node's coldest content, and
//! while the node's own share of the content and the copies fit its cache the origin sends
//! nothing more. The node fills a copy from the target's owner (the distributor names the
//! owner as the node to fill from), not from the origin.
//!
//! Only while the cache has room: a new copy is taken only while the node reports at
//! least [`room`] free (a 32nd of its cache, and four mean objects), so copies fill what
//! the node's own content leaves spare and never push that content out to be fetched
//! again; a node whose cache is full keeps the copies it has, and takes new ones only
//! as room comes back.
//!
//! Which targets: the hottest by a count that halves every [`HALF_LIFE`]
//! ([`crate::decayed`]), kept for every target the policy has placed. A layer-4 balancer
//! spreads clients over the peers, so every distributor sees a sample of the same stream
//! and their hottest targets are the same ones. A target is copied once it has
//! [`MIN_REQUESTS`] recent requests and there is room, or once it is [`DISPLACE`] times as
//! hot as the coldest copy, which it then replaces (so two targets of about equal heat do
//! not trade places request by request and refill each other's copies).
//!
//! Cost: a copied target's request updates its rank in a hash map; the coldest copy is
//! found again (a scan of the copies) only when the coldest copy itself is requested or
//! replaced. The coldest of K copies takes at most 1/K of the copies' requests, so the
//! scans cost at most about one step per request on average.

use std::collections::HashMap;

use crate::decayed::Decayed;
use crate::{Nanos, TargetKey, SECOND};

/// Requests count for a copy's heat over about this long: a request's weight halves in
/// it. Long against the time between two requests for a target near the edge of the
/// copies, short against how long popularity lasts.
pub const HALF_LIFE: Nanos = 30 * SECOND;

/// Recent requests (decayed) a target needs before it is copied at all: more than one, as a
/// target seen once is no reason to take cache.
pub const MIN_REQUESTS: f64 = 1.5;

/// How many times as hot as the coldest copy a target must be to replace it.
pub const DISPLACE: f64 = 1.5;

/// Most copies a peer keeps whatever its cache (bounds the map and its scans).
pub const MAX_COPIES: usize = 1 << 16;

/// The targets this peer serves from its own node, each with its rank
/// ([`Decayed::rank`]).
#[derive(Clone, Debug, Default)]
pub struct LocalCopies {
    members: HashMap<TargetKey, f64>,
    /// The member of least rank, while there are members.
    coldest: Option<(TargetKey, f64)>,
}

impl LocalCopies {
    pub fn len(&self) -> usize {
        self.members.len()
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    pub fn contains(&self, key: TargetKey) -> bool {
        self.members.contains_key(&key)
    }

    /// A request for `key` whose recent requests are `recent` (already counting this one)
    /// at `now`: whether the target is, from now, one of the at most `budget` copies; a
    /// new copy only with `room` in the cache ([`room`]).
    pub fn offer(
        &mut self,
        key: TargetKey,
        recent: &Decayed,
        now: Nanos,
        budget: usize,
        room: bool,
    ) -> bool {
        let budget = budget.min(MAX_COPIES);
        while self.members.len() > budget {
            self.drop_coldest();
        }
        let rank = recent.rank(HALF_LIFE);
        if let Some(r) = self.members.get_mut(&key) {
            *r = rank;
            if self.coldest.is_some_and(|(k, _)| k == key) {
                self.find_coldest();
            }
            return true;
        }
        if !room || budget == 0 || recent.value(now, HALF_LIFE) < MIN_REQUESTS {
            return false;
        }
        if self.members.len() >= budget {
            match self.coldest {
                Some((_, coldest)) if rank > coldest + DISPLACE.log2() => self.drop_coldest(),
                _ => return false,
            }
        }
        self.members.insert(key, rank);
        if self.coldest.is_none_or(|(_, r)| rank < r) {
            self.coldest = Some((key, rank));
        }
        true
    }

    /// Forget every copy (this peer's node left the cluster or is not known).
    pub fn clear(&mut self) {
        self.members.clear();
        self.coldest = None;
    }

    fn drop_coldest(&mut self) {
        if let Some((key, _)) = self.coldest.take() {
            self.members.remove(&key);
        }
        self.find_coldest();
    }

    fn find_coldest(&mut self) {
        self.coldest = self.members.iter().min_by(|a, b| a.1.total_cmp(b.1)).map(|(&k, &r)| (k, r));
    }
}

/// How many copies fit in `share` of a cache of `capacity` bytes holding objects of
/// `mean_object` bytes on average; 0 when either is unknown.
pub fn budget(share: f64, capacity: Option<u64>, mean_object: Option<f64>) -> usize {
    match (capacity, mean_object) {
        (Some(capacity), Some(mean)) if mean >= 1.0 && share > 0.0 => {
            let fit = (share * capacity as f64 / mean).floor();
            if fit >= MAX_COPIES as f64 {
                MAX_COPIES
            } else {
                fit as usize
            }
        }
        _ => 0,
    }
}

/// Whether a cache of `capacity` bytes with `free` of them free, holding objects of
/// `mean_object` bytes on average, has room for a new copy: at least a 32nd of the cache
/// and four mean objects free (copies taken between two reports of the cache must fit
/// too). False when any is unknown.
pub fn room(capacity: Option<u64>, free: Option<u64>, mean_object: Option<f64>) -> bool {
    match (capacity, free, mean_object) {
        (Some(capacity), Some(free), Some(mean)) => {
            free as f64 >= (capacity as f64 / 32.0).max(4.0 * mean)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` requests for a target, one every `gap` from `start`; its count after them.
    fn requests(n: u64, start: Nanos, gap: Nanos) -> Decayed {
        let mut d = Decayed::default();
        for i in 0..n {
            d.add(1.0, start + i * gap, HALF_LIFE);
        }
        d
    }

    #[test]
    fn a_target_seen_once_is_not_copied_and_one_seen_twice_is() {
        let mut c = LocalCopies::default();
        let once = requests(1, 0, 0);
        assert!(!c.offer(TargetKey(1), &once, 0, 4, true));
        let twice = requests(2, 0, SECOND);
        assert!(c.offer(TargetKey(1), &twice, SECOND, 4, true));
        assert!(c.contains(TargetKey(1)));
        assert!(!c.offer(TargetKey(2), &twice, SECOND, 0, true), "no budget, no copy");
    }

    #[test]
    fn a_full_set_admits_only_a_target_clearly_hotter_than_its_coldest() {
        let mut c = LocalCopies::default();
        let now = 10 * SECOND;
        for (key, n) in [(1, 10), (2, 4), (3, 8)] {
            assert!(c.offer(TargetKey(key), &requests(n, 0, SECOND), now, 3, true));
        }
        // Five requests against the coldest copy's four: not hot enough to replace it.
        assert!(!c.offer(TargetKey(4), &requests(5, 0, SECOND), now, 3, true));
        assert!(c.contains(TargetKey(2)));
        // Seven: more than 1.5 times as hot, it takes the coldest copy's place.
        assert!(c.offer(TargetKey(5), &requests(7, 0, SECOND), now, 3, true));
        assert!(!c.contains(TargetKey(2)));
        assert!(c.contains(TargetKey(1)) && c.contains(TargetKey(3)) && c.contains(TargetKey(5)));
        assert_eq!(c.len(), 3);
    }

    #[test]
    fn heat_that_has_decayed_loses_its_copy_to_current_heat() {
        let mut c = LocalCopies::default();
        // Twenty requests long ago against four recent ones: four half-lives later the
        // old count is worth about 1.25, the recent one 4.
        let old = requests(20, 0, SECOND / 10);
        assert!(c.offer(TargetKey(1), &old, 2 * SECOND, 1, true));
        let later = 4 * HALF_LIFE;
        let recent = requests(4, later - 4 * SECOND, SECOND);
        assert!(c.offer(TargetKey(2), &recent, later, 1, true));
        assert!(!c.contains(TargetKey(1)));
    }

    #[test]
    fn a_smaller_budget_drops_the_coldest_copies_first() {
        let mut c = LocalCopies::default();
        for key in 1..=4u64 {
            assert!(c.offer(TargetKey(key), &requests(key + 1, 0, SECOND), 5 * SECOND, 4, true));
        }
        assert!(c.offer(TargetKey(4), &requests(5, 0, SECOND), 5 * SECOND, 2, true));
        assert_eq!(c.len(), 2);
        assert!(c.contains(TargetKey(3)) && c.contains(TargetKey(4)));
        c.clear();
        assert!(c.is_empty());
    }

    #[test]
    fn a_full_cache_keeps_its_copies_and_takes_no_new_one() {
        let mut c = LocalCopies::default();
        assert!(c.offer(TargetKey(1), &requests(3, 0, SECOND), 3 * SECOND, 4, true));
        assert!(c.offer(TargetKey(1), &requests(4, 0, SECOND), 4 * SECOND, 4, false));
        assert!(!c.offer(TargetKey(2), &requests(9, 0, SECOND), 9 * SECOND, 4, false));
        assert_eq!(c.len(), 1);
        let mib = 1 << 20;
        assert!(room(Some(32 * mib), Some(mib), Some(65_536.0)), "a 32nd free");
        assert!(!room(Some(32 * mib), Some(mib - 1), Some(65_536.0)));
        assert!(!room(Some(32 * mib), Some(mib), Some(mib as f64)), "four objects do not fit");
        assert!(!room(None, Some(mib), Some(65_536.0)));
    }

    #[test]
    fn the_budget_is_the_share_of_the_cache_in_mean_objects() {
        let mib = 1 << 20;
        assert_eq!(budget(0.125, Some(32 * mib), Some(65_536.0)), 64);
        assert_eq!(budget(0.125, None, Some(65_536.0)), 0);
        assert_eq!(budget(0.125, Some(32 * mib), None), 0);
        assert_eq!(budget(0.0, Some(32 * mib), Some(65_536.0)), 0);
        assert_eq!(budget(1.0, Some(u64::MAX), Some(1.0)), MAX_COPIES);
    }
}

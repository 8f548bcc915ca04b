//! How requests reach the front-ends when there are several: as a layer-4 spreader
//! (IPVS, a cloud load balancer, SO_REUSEPORT) would, which sees connections, not URLs.
//!
//! A client keeps its connection, so with clients in the workload each client is hashed
//! to one front-end for the whole run ([`Spread::PerClient`]); a workload with a single
//! client (nothing to tell connections apart) has each request hashed on its own
//! ([`Spread::PerRequest`]). Either way the choice is a hash of the seed and the key:
//! deterministic, and independent of the order requests are replayed in.

use trace::rng::splitmix64;
use trace::Workload;

/// What a request is spread by.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Spread {
    /// Every request of one client goes to the same front-end.
    PerClient,
    /// Each request is spread on its own.
    PerRequest,
}

impl Spread {
    /// Per client when the workload has more than one client, else per request.
    pub fn of(workload: &Workload) -> Spread {
        let first = workload.requests.first().map(|r| r.client);
        if workload.requests.iter().any(|r| Some(r.client) != first) {
            Spread::PerClient
        } else {
            Spread::PerRequest
        }
    }

    /// `client` or `request`, as results name it.
    pub fn name(self) -> &'static str {
        match self {
            Spread::PerClient => "client",
            Spread::PerRequest => "request",
        }
    }
}

/// Picks the front-end of each request.
#[derive(Clone, Debug)]
pub(crate) struct Spreader {
    spread: Spread,
    routers: u64,
    seed: u64,
}

impl Spreader {
    pub(crate) fn new(spread: Spread, routers: usize, seed: u64) -> Self {
        Spreader { spread, routers: routers as u64, seed }
    }

    /// The front-end of request `index`, sent by `client`.
    #[inline]
    pub(crate) fn router(&self, index: u64, client: u32) -> u32 {
        if self.routers == 1 {
            return 0;
        }
        let key = match self.spread {
            Spread::PerClient => u64::from(client),
            Spread::PerRequest => index,
        };
        let mut state = self.seed ^ key.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        // Multiply-shift maps the 64-bit hash onto 0..routers without a division.
        ((u128::from(splitmix64(&mut state)) * u128::from(self.routers)) >> 64) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trace::WorkRequest;

    #[test]
    fn clients_keep_their_front_end_and_all_front_ends_get_some() {
        let s = Spreader::new(Spread::PerClient, 4, 7);
        for client in 0..50 {
            assert_eq!(s.router(1, client), s.router(999, client), "client {client}");
        }
        let mut seen = [0u32; 4];
        for client in 0..400 {
            seen[s.router(0, client) as usize] += 1;
        }
        assert!(seen.iter().all(|&n| n > 60), "{seen:?}");
        let per_request = Spreader::new(Spread::PerRequest, 4, 7);
        let spread: std::collections::HashSet<u32> =
            (0..64).map(|i| per_request.router(i, 3)).collect();
        assert_eq!(spread.len(), 4, "one client's requests go everywhere");
        assert_eq!(Spreader::new(Spread::PerRequest, 1, 7).router(5, 5), 0);
    }

    #[test]
    fn a_single_client_spreads_per_request() {
        let req = |client| WorkRequest { target: 0, client, time_ms: 0 };
        let one = Workload { targets: vec![], requests: vec![req(3), req(3)] };
        assert_eq!(Spread::of(&one), Spread::PerRequest);
        let two = Workload { targets: vec![], requests: vec![req(3), req(4)] };
        assert_eq!(Spread::of(&two), Spread::PerClient);
    }
}

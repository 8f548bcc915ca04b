//! The placement's clock: nanoseconds since the router started, the unit the policy, the
//! load view and the agreement count time in. Requests pass the instant they already
//! read, so the request path reads the system clock once per step instead of once per
//! call.

use std::time::Instant;

use policy::Nanos;

#[derive(Clone, Copy, Debug)]
pub(crate) struct Clock {
    origin: Instant,
}

impl Clock {
    /// A clock whose zero is now.
    pub(crate) fn start() -> Clock {
        Clock { origin: Instant::now() }
    }

    /// `at` on this clock.
    pub(crate) fn at(&self, at: Instant) -> Nanos {
        at.saturating_duration_since(self.origin).as_nanos() as Nanos
    }
}

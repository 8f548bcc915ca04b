//! Time as the policies see it: a number the caller passes in, never a clock read here,
//! so the simulator's virtual time and the router's monotonic clock drive the same code.

/// Nanoseconds since an origin the caller chooses; the policy never reads a clock.
pub type Nanos = u64;

/// One second in [`Nanos`].
pub const SECOND: Nanos = 1_000_000_000;

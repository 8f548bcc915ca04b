//! Fixed, documented 64-bit hashes, so every router, simulator and process agrees.
//!
//! std's `DefaultHasher` is seeded per process: two routers would place the same target
//! differently. These functions are part of larder's on-the-wire behaviour and must
//! never change: FNV-1a (64-bit, offset basis 0xcbf29ce484222325, prime 0x100000001b3)
//! names targets, and the SplitMix64 finaliser spreads already-hashed values on a ring.

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// FNV-1a over bytes fed in pieces: hashing `"ab"` then `"c"` equals hashing `"abc"`, which
/// lets the mapper hash a key made of slices without building it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Fnv1a(u64);

impl Default for Fnv1a {
    fn default() -> Self {
        Fnv1a(FNV_OFFSET)
    }
}

impl Fnv1a {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn write(&mut self, bytes: &[u8]) -> &mut Self {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(FNV_PRIME);
        }
        self
    }

    pub fn finish(&self) -> u64 {
        self.0
    }
}

/// FNV-1a 64 of `bytes` in one go.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    Fnv1a::new().write(bytes).finish()
}

/// SplitMix64's finaliser (`wire::target_digest::mix64`, the one copy): a bijection on
/// `u64` with full avalanche, which spreads already-hashed values on the ring.
pub use wire::target_digest::mix64;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_matches_published_vectors() {
        // Test vectors from the FNV reference (Fowler, Noll, Vo).
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn fnv1a_streams() {
        assert_eq!(Fnv1a::new().write(b"foo").write(b"bar").finish(), fnv1a64(b"foobar"));
    }

    #[test]
    fn mix64_is_fixed_and_spreads_neighbours() {
        assert_eq!(mix64(0), 0);
        assert_ne!(mix64(1), mix64(2));
        assert!((mix64(1) ^ mix64(2)).count_ones() > 16);
    }
}

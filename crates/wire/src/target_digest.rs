//! What a node holds, as its load report carries it: a Bloom filter of target keys.
//!
//! Web-cache digests (Squid's Cache Digests, RFC-less but long deployed) taught that a
//! peer does not need a cache's key list to route well, only a compact summary that errs
//! towards "yes". A node builds one from the target keys routers told it
//! ([`crate::TargetHint`]) for the bodies its cache holds; every router folds the same
//! digests into its view, so "the nodes that hold this target" is the same set on every
//! router.
//!
//! The filter: `bits` (a power of two, at least 64) bits in 64-bit words, `hashes` probes
//! per key by double hashing (`h1 + i·h2`) from the SplitMix64 finaliser of the key under
//! two salts. Ten bits per key and seven probes give about 1% false positives. The
//! encoding — field names, probe rule, little-endian words in standard base64 — is the
//! contract; [`TargetDigest::version`] lets a reader skip a digest it already has.

use base64::Engine as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Bits per key: with [`DEFAULT_HASHES`] probes, about 1% false positives.
pub const BITS_PER_KEY: u64 = 10;
/// Probes per key.
pub const DEFAULT_HASHES: u32 = 7;
/// Most bits a digest may have (16 MiB of filter); a reader refuses larger ones.
pub const MAX_BITS: u64 = 1 << 27;
/// Fewest bits a digest is built with (512 bytes), whatever it is sized for. A node that
/// holds few targets reports them with room to spare: up to about fifty keys a false
/// positive is below one in a hundred thousand instead of about 1%. This matters because
/// routers fold a node's digests at their own moments: a key falsely "held" in one
/// router's copy and not in another's sends a new target to different nodes, and with
/// few targets the filter is rebuilt, with new false positives, on nearly every insert.
pub const MIN_BUILT_BITS: u64 = 1 << 12;

const SALT_1: u64 = 0x9e37_79b9_7f4a_7c15;
const SALT_2: u64 = 0xc2b2_ae3d_27d4_eb4f;

/// A Bloom filter of target keys with the version of the holdings it summarises.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetDigest {
    /// Changes whenever what the node holds may have changed; equal versions from one
    /// node summarise the same holdings.
    pub version: u64,
    /// Keys inserted (a key inserted twice counts twice).
    pub entries: u64,
    pub hashes: u32,
    /// The filter, `bits / 64` words.
    #[serde(serialize_with = "words_out", deserialize_with = "words_in")]
    pub words: Vec<u64>,
}

/// Why a digest read from a report cannot be used.
#[derive(Debug, PartialEq, Eq)]
pub enum DigestError {
    /// Not a power of two of at least 64 bits, or above [`MAX_BITS`].
    BadSize(usize),
    /// No probes, or an absurd number of them.
    BadHashes(u32),
}

impl std::fmt::Display for DigestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DigestError::BadSize(w) => write!(f, "digest of {w} words is not a power of two"),
            DigestError::BadHashes(h) => write!(f, "digest with {h} probes per key"),
        }
    }
}

impl std::error::Error for DigestError {}

impl TargetDigest {
    /// An empty digest sized for about `expected` keys, at least [`MIN_BUILT_BITS`].
    pub fn with_capacity(expected: u64, version: u64) -> TargetDigest {
        let bits = expected
            .saturating_mul(BITS_PER_KEY)
            .clamp(MIN_BUILT_BITS, MAX_BITS)
            .next_power_of_two();
        TargetDigest {
            version,
            entries: 0,
            hashes: DEFAULT_HASHES,
            words: vec![0; (bits / 64) as usize],
        }
    }

    /// Check a digest that came from another process before it is consulted.
    pub fn validate(&self) -> Result<(), DigestError> {
        let w = self.words.len();
        if w == 0 || !w.is_power_of_two() || w as u64 * 64 > MAX_BITS {
            return Err(DigestError::BadSize(w));
        }
        if self.hashes == 0 || self.hashes > 32 {
            return Err(DigestError::BadHashes(self.hashes));
        }
        Ok(())
    }

    pub fn insert(&mut self, key: u64) {
        for bit in probes(self.words.len(), self.hashes, key) {
            self.words[bit / 64] |= 1 << (bit % 64);
        }
        self.entries += 1;
    }

    /// Whether `key` may be held: false positives happen (about 1%), false negatives
    /// never for a key inserted. An invalid digest holds nothing.
    pub fn contains(&self, key: u64) -> bool {
        if self.words.is_empty() {
            return false;
        }
        probes(self.words.len(), self.hashes, key)
            .all(|bit| self.words[bit / 64] & (1 << (bit % 64)) != 0)
    }

    /// Size of the filter in bytes.
    pub fn bytes(&self) -> usize {
        self.words.len() * 8
    }
}

/// The bits `key` sets in a filter of `words` 64-bit words (a power of two).
fn probes(words: usize, hashes: u32, key: u64) -> impl Iterator<Item = usize> {
    let mask = words as u64 * 64 - 1;
    let h1 = mix64(key ^ SALT_1);
    let h2 = mix64(key ^ SALT_2) | 1;
    (0..u64::from(hashes)).map(move |i| (h1.wrapping_add(i.wrapping_mul(h2)) & mask) as usize)
}

/// SplitMix64's finaliser: a bijection on `u64` with full avalanche. Part of this
/// encoding (the probe positions) and of larder's placement (policy's ring spreads its
/// points with it), so it is written once, here, and must never change.
pub fn mix64(x: u64) -> u64 {
    let mut z = x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn words_out<S: Serializer>(words: &[u64], s: S) -> Result<S::Ok, S::Error> {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(bytes))
}

fn words_in<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u64>, D::Error> {
    let text = String::deserialize(d)?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text.as_bytes())
        .map_err(serde::de::Error::custom)?;
    if bytes.len() % 8 != 0 {
        return Err(serde::de::Error::custom("digest is not whole 64-bit words"));
    }
    Ok(bytes.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8]))).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_what_was_inserted_and_little_else() {
        let mut d = TargetDigest::with_capacity(1000, 1);
        assert_eq!(d.bytes(), 2048, "10 bits a key, rounded up to a power of two");
        for k in 0..1000u64 {
            d.insert(k.wrapping_mul(0x1234_5678_9abc_def1));
        }
        assert!((0..1000u64).all(|k| d.contains(k.wrapping_mul(0x1234_5678_9abc_def1))));
        let false_hits = (1_000_000..1_010_000u64).filter(|&k| d.contains(k)).count();
        assert!(false_hits < 300, "{false_hits} false positives in 10,000");
        assert_eq!(d.entries, 1000);
    }

    #[test]
    fn a_digest_of_few_keys_has_no_false_positives_to_speak_of() {
        let mut d = TargetDigest::with_capacity(48, 1);
        assert_eq!(d.bytes() as u64 * 8, MIN_BUILT_BITS);
        for k in 0..48u64 {
            d.insert(mix64(k));
        }
        let false_hits = (1_000..101_000u64).filter(|&k| d.contains(mix64(k))).count();
        assert!(false_hits < 10, "{false_hits} false positives in 100,000");
    }

    #[test]
    fn round_trips_through_json_and_refuses_nonsense() {
        let mut d = TargetDigest::with_capacity(10, 7);
        d.insert(42);
        let json = serde_json::to_string(&d).unwrap();
        let back: TargetDigest = serde_json::from_str(&json).unwrap();
        assert_eq!(back, d);
        assert!(back.validate().is_ok() && back.contains(42));
        let three_words = TargetDigest { words: vec![0; 3], ..d.clone() };
        assert_eq!(three_words.validate(), Err(DigestError::BadSize(3)));
        assert_eq!(TargetDigest { hashes: 0, ..d }.validate(), Err(DigestError::BadHashes(0)));
        assert!(serde_json::from_str::<TargetDigest>(
            r#"{"version":1,"entries":0,"hashes":7,"words":"AAA"}"#
        )
        .is_err());
        assert!(!TargetDigest { words: vec![], ..back }.contains(42));
    }
}

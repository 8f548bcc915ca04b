//! Choosing a cache by name, for command lines and configuration files.

use std::collections::hash_map::RandomState;
use std::fmt;
use std::hash::{BuildHasher, Hash};
use std::str::FromStr;

use crate::byte_cache::ByteCache;
use crate::cache::Cache;
use crate::gds::{unit_cost, GdsOrder};
use crate::lru::LruOrder;

/// The replacement policies this crate offers.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Least recently used.
    Lru,
    /// GreedyDual-Size with cost 1 (the LARD paper's choice).
    #[default]
    Gds,
}

/// A cache name that is not one of [`Kind`]'s.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownKind(pub String);

impl fmt::Display for UnknownKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown cache kind {:?} (expected lru or gds)", self.0)
    }
}

impl std::error::Error for UnknownKind {}

impl FromStr for Kind {
    type Err = UnknownKind;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "lru" => Ok(Kind::Lru),
            "gds" | "greedy-dual-size" | "greedydual-size" => Ok(Kind::Gds),
            _ => Err(UnknownKind(s.to_string())),
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::Lru => "lru",
            Kind::Gds => "gds",
        })
    }
}

impl Kind {
    /// A boxed cache of this kind holding at most `capacity_bytes`.
    pub fn build<K, V>(self, capacity_bytes: u64) -> Box<dyn ByteCache<K, V>>
    where
        K: Hash + Eq + Clone + Send + 'static,
        V: Send + 'static,
    {
        self.build_with_hasher(capacity_bytes, RandomState::new())
    }

    /// As [`Kind::build`], hashing keys with `hasher`.
    pub fn build_with_hasher<K, V, S>(
        self,
        capacity_bytes: u64,
        hasher: S,
    ) -> Box<dyn ByteCache<K, V>>
    where
        K: Hash + Eq + Clone + Send + 'static,
        V: Send + 'static,
        S: BuildHasher + Send + 'static,
    {
        match self {
            Kind::Lru => Box::new(Cache::with_order(capacity_bytes, LruOrder::default(), hasher)),
            Kind::Gds => {
                Box::new(Cache::with_order(capacity_bytes, GdsOrder::new(unit_cost), hasher))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints() {
        assert_eq!("LRU".parse::<Kind>(), Ok(Kind::Lru));
        assert_eq!("gds".parse::<Kind>(), Ok(Kind::Gds));
        assert!("fifo".parse::<Kind>().unwrap_err().to_string().contains("lru or gds"));
        assert_eq!(Kind::default().to_string(), "gds");
        for k in [Kind::Lru, Kind::Gds] {
            assert_eq!(k.to_string().parse::<Kind>(), Ok(k));
            let mut c = k.build::<u32, u8>(2);
            c.insert(1, 1, 1);
            c.insert(2, 2, 1);
            c.insert(3, 3, 1);
            assert_eq!((c.len(), c.used_bytes(), c.stats().evictions), (2, 2, 1));
        }
    }
}

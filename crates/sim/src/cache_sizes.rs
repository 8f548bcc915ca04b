//! How much cache each node has: the same on every node, or one size per node (HACC ran
//! 64/64/32 MB nodes side by side, and the real experiment scales that down).

use std::fmt;
use std::str::FromStr;

use crate::{NodeRange, SimError};

const MIB: f64 = 1024.0 * 1024.0;

/// Largest size accepted per node, in MiB (1 PiB), so a typo cannot overflow a byte count.
const MAX_MIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// Each node's cache capacity in bytes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum CacheSizes {
    /// Every node has this many bytes, whatever the cluster size, so a sweep over cluster
    /// sizes keeps the cache per node fixed.
    Uniform(u64),
    /// Node `i` has entry `i`; the list fixes the cluster size to its length.
    PerNode(Vec<u64>),
}

impl CacheSizes {
    /// Cluster sizes to run: `nodes` (8 if not given), or the length of a per-node list,
    /// which fixes the cluster size (a different `nodes` is refused).
    pub fn cluster_sizes(&self, nodes: Option<&NodeRange>) -> Result<Vec<usize>, SimError> {
        let Some(listed) = self.nodes() else {
            return Ok(nodes.map_or_else(|| vec![8], |r| r.0.clone()));
        };
        match nodes.map(|r| r.0.as_slice()) {
            None => Ok(vec![listed]),
            Some([n]) if *n == listed => Ok(vec![listed]),
            Some([n]) => Err(SimError::Flag(format!(
                "--cache-mb {self} lists {listed} cache sizes but --nodes is {n}: give one size \
                 per node (or drop --nodes), or one size for every node"
            ))),
            Some(sizes) => Err(SimError::Flag(format!(
                "--nodes asks for {} cluster sizes, but --cache-mb {self} fixes the cluster at \
                 {listed} nodes: to sweep cluster sizes give one --cache-mb size for every node",
                sizes.len()
            ))),
        }
    }

    /// `32 MiB per node` or `16,16,8,8 MiB node by node, 48 MiB in all`, for titles.
    pub fn label(&self, nodes: usize) -> String {
        match self {
            CacheSizes::Uniform(_) => format!("{self} MiB per node"),
            CacheSizes::PerNode(_) => {
                format!(
                    "{self} MiB node by node, {} MiB in all",
                    self.total(nodes) as f64 / (1u64 << 20) as f64
                )
            }
        }
    }

    /// Capacity of node `node` (of a cluster this list fits, see [`CacheSizes::check`]).
    pub fn of(&self, node: usize) -> u64 {
        match self {
            CacheSizes::Uniform(bytes) => *bytes,
            CacheSizes::PerNode(sizes) => sizes.get(node).copied().unwrap_or(0),
        }
    }

    /// Capacity of all `nodes` caches together: what the one-big-cache reference gets.
    pub fn total(&self, nodes: usize) -> u64 {
        match self {
            CacheSizes::Uniform(bytes) => bytes.saturating_mul(nodes as u64),
            CacheSizes::PerNode(sizes) => {
                sizes.iter().take(nodes).fold(0u64, |sum, s| sum.saturating_add(*s))
            }
        }
    }

    /// The cluster size a per-node list fixes; `None` when any size fits.
    pub fn nodes(&self) -> Option<usize> {
        match self {
            CacheSizes::Uniform(_) => None,
            CacheSizes::PerNode(sizes) => Some(sizes.len()),
        }
    }

    /// Refuses a per-node list whose length is not the cluster size.
    pub fn check(&self, nodes: usize) -> Result<(), SimError> {
        match self.nodes() {
            Some(listed) if listed != nodes => Err(SimError::Config(format!(
                "{listed} cache sizes given for a {nodes}-node cluster: give one size per node, \
                 or one size for every node"
            ))),
            _ => Ok(()),
        }
    }

    /// Mean capacity per node over `nodes` nodes, in bytes.
    pub fn mean(&self, nodes: usize) -> f64 {
        self.total(nodes) as f64 / nodes.max(1) as f64
    }
}

/// Parses MiB as `larder sim --cache-mb` takes them: one size for every node (`32`,
/// `0.5`) or a comma list with one size per node (`16,16,8,8`). Every size must be
/// more than 0: a node without cache is asked for with [`CacheSizes::Uniform`]`(0)`.
impl FromStr for CacheSizes {
    type Err = SimError;
    fn from_str(s: &str) -> Result<Self, SimError> {
        let one = |t: &str| -> Result<u64, SimError> {
            let t = t.trim();
            match t.parse::<f64>() {
                Ok(mib) if mib > 0.0 && mib <= MAX_MIB => Ok(((mib * MIB).round() as u64).max(1)),
                Ok(_) => Err(SimError::Config(format!(
                    "cache size {t:?}: expected MiB more than 0 and at most {MAX_MIB}"
                ))),
                Err(_) => Err(SimError::Config(format!(
                    "cache size {t:?} in {s:?}: expected MiB, one number (every node) or a \
                     comma list with one per node, like 16,16,8,8"
                ))),
            }
        };
        if s.contains(',') {
            Ok(CacheSizes::PerNode(s.split(',').map(one).collect::<Result<_, _>>()?))
        } else {
            Ok(CacheSizes::Uniform(one(s)?))
        }
    }
}

/// MiB, as parsed: `32` or `16,16,8,8`.
impl fmt::Display for CacheSizes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mib = |b: &u64| *b as f64 / MIB;
        match self {
            CacheSizes::Uniform(bytes) => write!(f, "{}", mib(bytes)),
            CacheSizes::PerNode(sizes) => {
                let list: Vec<String> = sizes.iter().map(|b| mib(b).to_string()).collect();
                f.write_str(&list.join(","))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: u64 = 1 << 20;

    #[test]
    fn a_per_node_list_fixes_the_cluster_size() {
        let list: CacheSizes = "16,16,8,8".parse().unwrap();
        let nodes = |v: Vec<usize>| Some(NodeRange(v));
        assert_eq!(list.cluster_sizes(None).unwrap(), [4]);
        assert_eq!(list.cluster_sizes(nodes(vec![4]).as_ref()).unwrap(), [4]);
        let err = list.cluster_sizes(nodes(vec![3]).as_ref()).unwrap_err().to_string();
        assert!(err.contains("lists 4 cache sizes but --nodes is 3"), "{err}");
        let err = list.cluster_sizes(nodes(vec![1, 2]).as_ref()).unwrap_err().to_string();
        assert!(err.contains("fixes the cluster at 4 nodes"), "{err}");
        let one = CacheSizes::Uniform(M);
        assert_eq!(one.cluster_sizes(None).unwrap(), [8]);
        assert_eq!(one.cluster_sizes(nodes(vec![1, 2]).as_ref()).unwrap(), [1, 2]);
    }

    #[test]
    fn parses_one_size_or_one_per_node() {
        let p = |s: &str| s.parse::<CacheSizes>();
        assert_eq!(p("32").unwrap(), CacheSizes::Uniform(32 * M));
        assert_eq!(p("0.5").unwrap(), CacheSizes::Uniform(M / 2));
        assert_eq!(
            p("16, 16,8,8").unwrap(),
            CacheSizes::PerNode(vec![16 * M, 16 * M, 8 * M, 8 * M])
        );
        for bad in ["", "0", "-1", "x", "16,,8", "16,0", "16,8,", "nan", "inf", "1e30"] {
            assert!(p(bad).is_err(), "{bad:?} should be refused");
        }
        assert!(p("16,x").unwrap_err().to_string().contains("\"x\""));
        for s in ["32", "16,16,8,8", "0.5,1"] {
            assert_eq!(p(s).unwrap().to_string(), s);
        }
    }

    #[test]
    fn sizes_totals_and_fit() {
        let per = CacheSizes::PerNode(vec![4, 4, 2]);
        assert_eq!((per.of(0), per.of(2), per.total(3), per.nodes()), (4, 2, 10, Some(3)));
        assert!(per.check(3).is_ok());
        assert!(per.check(4).unwrap_err().to_string().contains("3 cache sizes"));
        let uni = CacheSizes::Uniform(5);
        assert_eq!((uni.of(7), uni.total(3), uni.nodes(), uni.mean(3)), (5, 15, None, 5.0));
        assert!(uni.check(1000).is_ok());
        assert_eq!(CacheSizes::Uniform(u64::MAX).total(2), u64::MAX);
    }
}

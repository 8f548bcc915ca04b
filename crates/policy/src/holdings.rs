//! What a node says it holds: the seam through which many routers keep one placement.
//!
//! Each router keeps its own table of where targets went, and tables of different
//! routers drift apart. The nodes know what their caches hold; a node's load report can
//! carry a compact summary of it (a Bloom filter of target keys, say), and every router
//! that folds those summaries into its [`crate::LoadView`] sees the same holders for a
//! target. The policy reads them through this trait, so it stays pure and does not know
//! how a summary is encoded or where it came from (a node's report, or the simulator's
//! caches).

use std::fmt::Debug;

use crate::TargetKey;

/// A node's summary of the targets it holds.
pub trait Holdings: Send + Sync + Debug {
    /// Whether the summary says `key` is held. A summary may err towards yes (a Bloom
    /// filter's false positives), never towards no for what it held when it was made.
    fn holds(&self, key: TargetKey) -> bool;
}

/// A node's Bloom filter from its load report.
impl Holdings for wire::TargetDigest {
    fn holds(&self, key: TargetKey) -> bool {
        self.contains(key.0)
    }
}

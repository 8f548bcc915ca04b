//! The request paths only the cluster's own processes use. Under [`INTERNAL_PATH_PREFIX`]
//! a node answers its load report ([`crate::LOAD_REPORT_PATH`]: its load, a digest of what
//! it holds, its uptime and hit counters), its Prometheus metrics (`/.larder/metrics`
//! unless configured otherwise) and invalidations ([`crate::INVALIDATE_PATH`]). Routers
//! poll the first and send the last to the nodes' own addresses; no client has any
//! business with them, and what they tell (each node's load and contents) is not for the
//! internet. So a router refuses every target under the prefix from its clients (403)
//! rather than relaying it, whatever the node behind would answer.

/// The prefix of the paths only the cluster's own processes use.
pub const INTERNAL_PATH_PREFIX: &str = "/.larder/";

/// Whether an origin-form request target is under [`INTERNAL_PATH_PREFIX`]. The prefix is
/// matched as sent, byte for byte, as a node matches its own paths: `/%2Elarder/load` or
/// `/.LARDER/load` are not a node's load report either.
pub fn is_internal_target(request_target: &str) -> bool {
    request_target.starts_with(INTERNAL_PATH_PREFIX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nodes_own_paths_are_internal_and_others_are_not() {
        for target in [
            crate::LOAD_REPORT_PATH,
            "/.larder/metrics",
            crate::INVALIDATE_PATH,
            "/.larder/invalidate?target=/a",
            "/.larder/load?x=1",
        ] {
            assert!(is_internal_target(target), "{target}");
        }
        for target in ["/", "/.larder", "/.larders/load", "/a/.larder/load", "/x?/.larder/"] {
            assert!(!is_internal_target(target), "{target}");
        }
    }
}

//! The request fields only the cluster's own processes write: a router or distributor to
//! a node ([`TARGET_HINT_HEADER`], [`PEER_HEADER`]), a node to another
//! ([`PEER_FILL_HEADER`], [`SLICE_HEADER`]), a router polling a node's load
//! ([`POLLER_HEADER`]). A node acts on them (records a placement in the holdings every
//! router reads, fills from a peer, answers one slice, counts a router), so a client's
//! are never honoured: a router drops them from what it relays, and a node drops them
//! from every request on a connection it adopted, whose bytes are the client's own.

use crate::{PEER_FILL_HEADER, PEER_HEADER, POLLER_HEADER, SLICE_HEADER, TARGET_HINT_HEADER};

/// The fields, as this crate spells them.
pub const INTERNAL_FIELDS: [&str; 5] =
    [PEER_HEADER, SLICE_HEADER, TARGET_HINT_HEADER, PEER_FILL_HEADER, POLLER_HEADER];

/// Whether the field `name` (any case) is one of [`INTERNAL_FIELDS`].
pub fn is_internal_field(name: &str) -> bool {
    INTERNAL_FIELDS.iter().any(|f| f.eq_ignore_ascii_case(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cluster_s_own_fields_are_internal_in_any_case_and_others_are_not() {
        for name in [
            "X-Larder-Target",
            "x-larder-peer",
            "X-LARDER-PEER-FILL",
            "x-Larder-Slice",
            "x-larder-poller",
        ] {
            assert!(is_internal_field(name), "{name}");
        }
        for name in ["Host", "X-Larder-Node", "X-Larder-Purge", "X-Larder-Peers", "x-larder-"] {
            assert!(!is_internal_field(name), "{name}");
        }
    }
}

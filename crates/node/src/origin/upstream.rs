//! What one fetch works with: the origin settings, the client, the object store and the
//! bodies being filled. Kept apart from the coalescing of fetches (`state.rs`), which is
//! made of fetches.

use super::client::OriginClient;
use super::config::OriginConfig;
use super::filling::Fills;
use super::hit_for_miss::HitForMiss;
use super::peers::Peers;
use super::slice_state::Slices;
use super::store::ObjectStore;
use std::rc::Rc;

pub struct Upstream {
    pub config: OriginConfig,
    /// Shared with fills, which may fetch the rest of a body a peer failed to send.
    pub client: Rc<OriginClient>,
    /// The other nodes a miss may be filled from.
    pub peers: Peers,
    pub store: Rc<ObjectStore>,
    pub fills: Rc<Fills>,
    /// The slices of large objects being fetched, and who owns which.
    pub slices: Slices,
    /// Targets whose requests go straight to the origin for now.
    pub hit_for_miss: HitForMiss,
}

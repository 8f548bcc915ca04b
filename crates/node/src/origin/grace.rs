//! Grace (`stale-while-revalidate`, RFC 5861): a stale response within its window is served
//! at once and refreshed by one fetch in the background, so a popular object that expires
//! costs no client a wait on the origin.
//!
//! One refresh per target at a time: the refresh runs in the same single-flight as the
//! fetches of misses (`OriginState::fetching`), so a miss arriving meanwhile waits for it
//! instead of fetching again, and a stale hit starts none while a fetch for the target is
//! under way or its new body is still filling. The task checks again when it first runs,
//! since stale hits answered before then each asked for one. The refresh is an ordinary
//! fetch: conditional when the stale copy has validators, stored (or dropped, if no
//! longer cacheable) as any fetch is; when the origin fails, the stale copy stays and the
//! next stale hit tries again.

use super::fetch::fetch;
use super::state::OriginState;
use super::store::Stored;
use crate::state::NodeState;
use http1::RequestHead;
use std::rc::Rc;
use std::sync::Arc;

/// Refresh `stale`, the stored answer to `req` for `target`, in the background, unless a
/// fetch that will replace it is already under way.
pub(super) fn refresh(node: &Rc<NodeState>, target: &str, req: &RequestHead, stale: &Arc<Stored>) {
    let Some(origin) = &node.origin else {
        return;
    };
    if under_way(origin, target, req, stale) {
        return;
    }
    let node = Rc::clone(node);
    let (target, req, stale) = (target.to_string(), req.clone(), Arc::clone(stale));
    tokio::task::spawn_local(async move {
        let Some(origin) = &node.origin else {
            return;
        };
        if under_way(origin, &target, &req, &stale) {
            return;
        }
        let max_cached = node.config.max_cached_file_bytes;
        // What the fetch stores is the refresh; nobody is answered from this task, so the
        // fetching client's own part (cookies, an uncacheable answer) is dropped.
        let work = async {
            fetch(&origin.upstream, max_cached, &req, &target, (Some(stale), None)).await.outcome
        };
        let _ = origin.fetching.run(&target, work).await;
    });
}

/// Whether `stale` needs no refresh from here: a fetch for `target` is under way, a new
/// body for `req` is filling, or the store no longer holds `stale` (already refreshed,
/// invalidated, evicted).
fn under_way(origin: &OriginState, target: &str, req: &RequestHead, stale: &Arc<Stored>) -> bool {
    origin.fetching.in_flight(target)
        || origin.upstream.fills.for_request(target, req).is_some()
        || !origin.upstream.store.get(target, req).is_some_and(|s| Arc::ptr_eq(&s, stale))
}

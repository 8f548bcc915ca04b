//! Byte ranges of stored responses (RFC 9110 §14): a single range of a complete stored 200
//! is answered 206 from the stored body, so players and download managers resuming a
//! transfer get what they asked for without the origin. The parsing is the node's one
//! (`crate::range`), the same as for files.
//!
//! What larder does, where the RFC leaves a choice:
//! - Only complete stored 200s are ranged (hits, stored misses, revalidated or stale
//!   copies). A body still filling from the origin and a response relayed to one client
//!   (PASS) are answered 200 whole: the `Range` is never forwarded on a cache fetch, so the
//!   stored copy is always the whole representation.
//! - Several ranges are answered 200 whole (RFC 9110 §14.2 lets a server ignore `Range`):
//!   a multipart body buys little and costs a copy.
//! - HEAD with `Range` is answered like the GET would be (206 and its fields, no body), so
//!   a client can probe a range before fetching it.

use super::fetch::How;
use super::store::Stored;
use crate::conditional::Validators;
use crate::range::{requested, RangeRequest};
use http1::RequestHead;
use std::time::UNIX_EPOCH;

/// The validators of a stored response, as the client's conditions are compared with:
/// no `ETag` (or one that is not text) never matches a tag, no `Last-Modified` never
/// matches a date.
pub(super) fn validators(s: &Stored) -> Validators<'_> {
    let etag = s.etag().and_then(|e| std::str::from_utf8(e).ok()).unwrap_or("");
    let modified_secs = s
        .last_modified()
        .and_then(|v| http1::parse_http_date(std::str::from_utf8(v).ok()?.trim()).ok())
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(u64::MAX, |d| d.as_secs());
    Validators { etag, modified_secs }
}

/// The part of `s` to answer `req` with when `s` came to be by `how`.
pub(super) fn range_of(req: &RequestHead, s: &Stored, how: How) -> RangeRequest {
    if how == How::Pass || s.status != 200 {
        return RangeRequest::Full;
    }
    requested(req, validators(s), s.body.len() as u64)
}

/// Whether responses made from `s` advertise ranges (`Accept-Ranges: bytes`).
pub(super) fn ranged(s: &Stored, how: How) -> bool {
    how != How::Pass && s.status == 200
}

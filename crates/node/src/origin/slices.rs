//! One slice of a large object (`slice_spec.rs`), wherever it is: this node's store, else
//! one fetch for every request that wants it (coalesced by slice), from the node that owns
//! the slice (`slice_owner.rs`) when that is another node, else, or when that node fails,
//! from the origin with a `Range` request naming the copy (`If-Range`).
//!
//! Every slice is checked against the copy it is wanted for ([`Version`]): a slice of
//! another copy is never returned, and a stored one is dropped. When the origin's copy
//! changed, the object's head is dropped too ([`SliceError::Changed`]): the request that
//! found out ends cut, the next one fetches the new copy whole. A slice asked by another
//! node is never asked of a further node (so no two nodes pass one back and forth), and
//! never waits for a fetch here that waits on a node.
//!
//! An origin that answers a `Range` with the whole object (it ignores ranges) still
//! yields the slice (read out of the whole body), but it is not stored, and the object is
//! relayed from then on (`no_ranges`).

use super::body::OriginBody;
use super::client::OriginClient;
use super::conn::OriginCounters;
use super::fields::first;
use super::slice_spec::{Slice, SliceError, SliceSpec, Version};
use super::upstream::Upstream;
use crate::range::content_range;
use std::sync::Arc;

/// Slice `index` of `spec`'s object; `for_peer` when another node asks it of this one.
pub async fn get(
    up: &Upstream,
    spec: &SliceSpec,
    index: u64,
    for_peer: bool,
) -> Result<Arc<Slice>, SliceError> {
    let key = spec.slice_key(index);
    if let Some(s) = up.store.slice(&key) {
        if s.version == spec.version {
            OriginCounters::add(&up.slices.counters.from_cache, 1);
            return Ok(s);
        }
        up.store.remove_key(&key);
    }
    let flight = if for_peer && up.peers.is_waiting(&key) {
        &up.slices.for_peers
    } else {
        &up.slices.fetching
    };
    // A fetch waited for may be abandoned (its request went away): try once more.
    let mut got = None;
    for _ in 0..2 {
        got = flight.run(&key, fill(up, spec, index, for_peer)).await;
        if got.is_some() {
            break;
        }
    }
    let got = match got {
        Some(Ok(s)) if s.version != spec.version => Err(SliceError::Changed),
        Some(r) => r,
        None => Err(SliceError::Failed("the fetch of the slice was abandoned".into())),
    };
    if matches!(got, Err(SliceError::Changed)) {
        forget(up, spec);
    }
    got
}

/// Drop the head of `spec`'s object when it is still that copy's.
fn forget(up: &Upstream, spec: &SliceSpec) {
    if up.store.sliced(&spec.key).is_some_and(|(_, held)| held.version == spec.version) {
        up.store.remove_key(&spec.key);
    }
}

/// Fetch slice `index` from its owner or the origin, and store it.
async fn fill(
    up: &Upstream,
    spec: &SliceSpec,
    index: u64,
    for_peer: bool,
) -> Result<Arc<Slice>, SliceError> {
    let key = spec.slice_key(index);
    let owner = if for_peer { None } else { up.slices.other_owner(spec, index) };
    if let Some(peer) = owner.and_then(|o| up.peers.client(&o)) {
        if let Some(slice) = from_peer(up, peer, spec, index).await {
            OriginCounters::add(&up.slices.counters.from_peers, 1);
            up.store.put_slice(&key, Arc::clone(&slice));
            return Ok(slice);
        }
    }
    let (slice, keep) = from_origin(up, spec, index).await?;
    OriginCounters::add(&up.slices.counters.from_origin, 1);
    if keep {
        up.store.put_slice(&key, Arc::clone(&slice));
    }
    Ok(slice)
}

/// Slice `index` from the node `peer` that owns it; `None` (the origin is asked instead)
/// when it fails, is too slow, or answers anything but that slice of that copy.
async fn from_peer(
    up: &Upstream,
    peer: &OriginClient,
    spec: &SliceSpec,
    index: u64,
) -> Option<Arc<Slice>> {
    let asked = spec.request(index).value();
    let fields: [(&str, &[u8]); 2] =
        [(wire::SLICE_HEADER, asked.as_bytes()), ("If-Range", &spec.version.validator)];
    let key = spec.slice_key(index);
    let target = (spec.target.as_str(), spec.host.as_deref());
    let (head, body) = up.peers.get(peer, &key, target, &fields).await?;
    let (first_byte, last) = spec.bytes_of(index);
    let whole = content_range(first_byte, last, spec.version.total);
    let same = Version::of(&head.fields, spec.version.total).as_ref() == Some(&spec.version);
    if head.status != 206 || !same || first(&head.fields, "content-range") != Some(whole.as_bytes())
    {
        OriginCounters::add(&up.peers.failures, 1);
        return None;
    }
    match read(body, 0, last - first_byte + 1).await {
        Ok(bytes) => Some(Arc::new(Slice { version: spec.version.clone(), body: bytes.into() })),
        Err(_) => {
            OriginCounters::add(&up.peers.failures, 1);
            None
        }
    }
}

/// Slice `index` from the origin, and whether it may be stored (not when the origin sent
/// the whole object instead).
async fn from_origin(
    up: &Upstream,
    spec: &SliceSpec,
    index: u64,
) -> Result<(Arc<Slice>, bool), SliceError> {
    let (first_byte, last) = spec.bytes_of(index);
    let range = format!("bytes={first_byte}-{last}");
    let fields: [(&str, &[u8]); 2] =
        [("Range", range.as_bytes()), ("If-Range", &spec.version.validator)];
    let failed = |why: String| SliceError::Failed(why.into());
    let (head, body) = up
        .client
        .get(&spec.target, spec.host.as_deref(), &fields)
        .await
        .map_err(|e| failed(e.to_string()))?;
    let len = last - first_byte + 1;
    let (skip, keep) = match head.status {
        206 => {
            let whole = content_range(first_byte, last, spec.version.total);
            let same =
                Version::of(&head.fields, spec.version.total).as_ref() == Some(&spec.version);
            if !same || first(&head.fields, "content-range") != Some(whole.as_bytes()) {
                return Err(SliceError::Changed);
            }
            (0, true)
        }
        200 => {
            let total = body.declared_len().unwrap_or(u64::MAX);
            if Version::of(&head.fields, total).as_ref() != Some(&spec.version) {
                return Err(SliceError::Changed);
            }
            // The origin ignores ranges: this slice is read out of the whole body, and the
            // object is relayed from now on.
            up.slices.mark_no_ranges(&spec.key);
            forget(up, spec);
            (first_byte, false)
        }
        status => return Err(failed(format!("the origin answered {status} to a slice"))),
    };
    let bytes = read(body, skip, len).await.map_err(|why| failed(why.to_string()))?;
    Ok((Arc::new(Slice { version: spec.version.clone(), body: bytes.into() }), keep))
}

/// `len` bytes of `body` after its first `skip`; the rest of a longer body is left unread
/// (its connection closed). An error when the body ends short or fails.
async fn read(mut body: OriginBody, mut skip: u64, len: u64) -> Result<Vec<u8>, Arc<str>> {
    let mut out = Vec::with_capacity(len as usize);
    while (out.len() as u64) < len {
        let Some(mut piece) = body.next().await.map_err(|e| Arc::from(e.to_string()))? else {
            return Err("the slice ended short".into());
        };
        let drop = skip.min(piece.len() as u64) as usize;
        piece.drain(..drop);
        skip -= drop as u64;
        let room = (len - out.len() as u64) as usize;
        out.extend_from_slice(&piece[..piece.len().min(room)]);
    }
    Ok(out)
}

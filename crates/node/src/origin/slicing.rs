//! Whether an origin response too large to be stored whole is stored as slices instead
//! (`slice_spec.rs`), and the start of it: the response that showed the object is large
//! is read for its first slice only (stored), then its connection is closed, and the other
//! slices are fetched as they are wanted (`slices.rs`). So the request that found the
//! object costs the origin one request, the first slice's.
//!
//! Sliced: a cacheable 200 of declared length up to the largest sliced object, that does
//! not vary, whose origin says it serves ranges (`Accept-Ranges: bytes`) and has not been
//! seen to ignore them, and that names its copy (a strong `ETag` or `Last-Modified`).

use super::body::OriginBody;
use super::client::OriginHead;
use super::conn::OriginCounters;
use super::fields::{values, Field};
use super::freshness::Freshness;
use super::slice_spec::{Slice, SliceSpec, Version};
use super::store::Stored;
use super::upstream::Upstream;
use std::sync::Arc;

/// How `head` (of declared length `len`) is to be sliced when it is, for the object under
/// `key` asked as `target` on the site `host`; `kept` are the fields to store.
pub fn spec_for(
    up: &Upstream,
    (key, target, host): (&str, &str, Option<&[u8]>),
    head: &OriginHead,
    kept: &[Field],
    len: u64,
) -> Option<SliceSpec> {
    let ranges = values(&head.fields, "accept-ranges")
        .any(|v| v.split(|&b| b == b',').any(|t| t.trim_ascii().eq_ignore_ascii_case(b"bytes")));
    let plain = !values(kept, "vary").any(|v| !v.trim_ascii().is_empty());
    let fits = len > 0 && len <= up.config.max_object_bytes;
    if head.status != 200 || !ranges || !plain || !fits || up.slices.ignores_ranges(key) {
        return None;
    }
    Some(SliceSpec {
        key: key.to_string(),
        target: target.to_string(),
        host: host.map(<[u8]>::to_vec),
        version: Version::of(kept, len)?,
        slice_bytes: up.config.slice_bytes.max(1),
    })
}

/// Store the head of the sliced object (`kept` fields, `freshness`), and its first slice
/// read from `body`, which is then dropped. A body that fails before the first slice is
/// whole stores no slice: it is fetched again when wanted. `from_origin` says whose body
/// it is, for the counters.
pub async fn start(
    up: &Upstream,
    spec: SliceSpec,
    (kept, freshness): (Vec<Field>, Freshness),
    mut body: OriginBody,
    from_origin: bool,
) -> (Arc<Stored>, Arc<SliceSpec>) {
    let (_, last) = spec.bytes_of(0);
    let mut first = Vec::with_capacity(last as usize + 1);
    let whole = loop {
        if first.len() as u64 > last {
            break true;
        }
        match body.next().await {
            Ok(Some(piece)) => {
                let room = (last + 1) as usize - first.len();
                first.extend_from_slice(&piece[..piece.len().min(room)]);
            }
            Ok(None) | Err(_) => break false,
        }
    };
    drop(body);
    if whole {
        let counters = &up.slices.counters;
        OriginCounters::add(
            if from_origin { &counters.from_origin } else { &counters.from_peers },
            1,
        );
        let slice = Slice { version: spec.version.clone(), body: first.into() };
        up.store.put_slice(&spec.slice_key(0), Arc::new(slice));
    }
    let head = Arc::new(Stored {
        status: 200,
        fields: kept,
        body: Arc::from(&[][..]),
        freshness,
        vary: Vec::new(),
        vary_key: String::new(),
    });
    let spec = Arc::new(spec);
    up.store.put_sliced(Arc::clone(&head), Arc::clone(&spec));
    (head, spec)
}

//! A slice of a large object asked of this node by another node of the cluster
//! (`wire::SliceRequest`, with the peer-fill mark and the copy's validator in `If-Range`):
//! answered 206 with exactly that slice, from the store or the origin, never from a
//! further node (`slices.rs`); 502 when it cannot be had.

use super::site;
use super::slice_spec::{SliceSpec, Version, MAX_SLICE_BYTES};
use super::slices;
use super::state::OriginState;
use crate::range::content_range;
use crate::reply::{begin, error, simple, Reply, ReplyCtx, SharedBody};
use crate::state::NodeState;
use http1::{RequestHead, Status};
use wire::SliceRequest;

/// Answer `req`, another node's request for the slice `asked` of the object under `key`.
pub async fn answer(
    node: &NodeState,
    origin: &OriginState,
    (req, key, asked): (&RequestHead, &str, SliceRequest),
    ctx: &ReplyCtx,
    out: &mut Vec<u8>,
) -> Reply {
    let up = &origin.upstream;
    let validator = req.header("if-range").map(<[u8]>::to_vec);
    let bounded = asked.size <= MAX_SLICE_BYTES && asked.total <= up.config.max_object_bytes;
    let Some(validator) = validator.filter(|_| bounded) else {
        return error(node, out, Status::BAD_REQUEST, ctx, &[]);
    };
    let spec = SliceSpec {
        key: key.to_string(),
        target: req.target.clone(),
        host: site::host_to_send(up.config.host, req).map(<[u8]>::to_vec),
        version: Version { validator, total: asked.total },
        slice_bytes: asked.size,
    };
    let slice = match slices::get(up, &spec, asked.index, true).await {
        Ok(slice) => slice,
        Err(e) => {
            let body = format!("{}\n{e}\n", Status::BAD_GATEWAY);
            let no_store: &[(&str, &[u8])] = &[("Cache-Control", b"no-store")];
            let ctype = "text/plain; charset=utf-8";
            return simple(node, out, Status::BAD_GATEWAY, ctx, ctype, body.as_bytes(), no_store);
        }
    };
    let (first, last) = asked.bytes();
    if slice.body.len() as u64 != last - first + 1 {
        return error(node, out, Status::BAD_GATEWAY, ctx, &[("Cache-Control", b"no-store")]);
    }
    let mut h = begin(node, out, Status::PARTIAL_CONTENT, ctx);
    h.header(spec.version.field_name(), &spec.version.validator);
    h.header("Content-Range", content_range(first, last, asked.total).as_bytes());
    h.header_u64("Content-Length", slice.body.len() as u64);
    h.finish();
    let send = !ctx.head_only;
    let len = slice.body.len();
    Reply {
        status: Status::PARTIAL_CONTENT,
        body_bytes: if send { len as u64 } else { 0 },
        close: !ctx.keep_alive,
        shared: send.then(|| SharedBody { bytes: slice.body.clone(), start: 0, end: len }),
        stream: None,
        relay: None,
    }
}

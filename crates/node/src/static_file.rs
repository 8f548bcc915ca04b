//! Static files the AMPED way: translation from the path cache (or a helper), validators
//! and ranges, then the body from the content cache, from the page cache without blocking
//! (preadv2 RWF_NOWAIT), or from a helper thread; large bodies are streamed afterwards.

use crate::conditional::{not_modified, Validators};
use crate::disk;
use crate::path::SafePath;
use crate::pool::PoolGone;
use crate::range::{self, RangeRequest};
use crate::reply::{begin, error, FileStream, Reply, ReplyCtx, SharedBody};
use crate::state::{BodyKey, CachedBody, NodeState, PathEntry};
use crate::stats::Reading;
use crate::translate::{translate, FileMeta, Translation};
use cache::ByteCache;
use http1::{Method, RequestHead, Status};
use std::io;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

pub async fn serve(
    node: &Rc<NodeState>,
    head: &RequestHead,
    safe: &SafePath,
    ctx: &ReplyCtx,
    out: &mut Vec<u8>,
) -> Reply {
    let key = if safe.trailing_slash && !safe.rel.is_empty() {
        format!("{}/", safe.rel)
    } else {
        safe.rel.clone()
    };
    let translation = match translation(node, &key, safe).await {
        Ok(t) => t,
        Err(PoolGone) => return error(node, out, Status::SERVICE_UNAVAILABLE, ctx, &[]),
    };
    match &*translation {
        Translation::NotFound => error(node, out, Status::NOT_FOUND, ctx, &[]),
        Translation::Forbidden => error(node, out, Status::FORBIDDEN, ctx, &[]),
        Translation::AddSlash => {
            let location = format!("{}/", head.path());
            let extra: &[(&str, &[u8])] = &[("Location", location.as_bytes())];
            error(node, out, Status::MOVED_PERMANENTLY, ctx, extra)
        }
        Translation::File(meta) => serve_file(node, head, &key, meta, ctx, out).await,
    }
}

/// The translation of `key`: from the path cache while it is fresh; while one request
/// refreshes an expired entry, the others keep using the old one; a path never seen is
/// translated once on a helper however many requests wait for it.
async fn translation(
    node: &NodeState,
    key: &str,
    safe: &SafePath,
) -> Result<Arc<Translation>, PoolGone> {
    let now = Instant::now();
    let cached = node.paths.borrow_mut().get(&key.to_string()).cloned();
    if let Some(e) = cached {
        if now.duration_since(e.checked) < node.config.stat_ttl || node.translating.in_flight(key) {
            return Ok(e.translation);
        }
    }
    let opts = Arc::clone(&node.translate);
    let (rel, slash) = (safe.rel.clone(), safe.trailing_slash);
    let work = async {
        let t = Arc::new(node.disk.run(move || translate(&opts, &rel, slash)).await?);
        let entry = PathEntry { translation: Arc::clone(&t), checked: now };
        node.paths.borrow_mut().insert(key.to_string(), entry, 1);
        Ok(t)
    };
    node.translating.run(key, work).await.unwrap_or(Err(PoolGone))
}

async fn serve_file(
    node: &NodeState,
    head: &RequestHead,
    key: &str,
    meta: &Arc<FileMeta>,
    ctx: &ReplyCtx,
    out: &mut Vec<u8>,
) -> Reply {
    let v = Validators { etag: &meta.etag, modified_secs: meta.modified_secs };
    let len = meta.stamp.len;
    if not_modified(head, v) {
        let mut h = begin(node, out, Status::NOT_MODIFIED, ctx);
        h.header("ETag", meta.etag.as_bytes());
        h.finish();
        return Reply {
            status: Status::NOT_MODIFIED,
            body_bytes: 0,
            close: !ctx.keep_alive,
            shared: None,
            stream: None,
            relay: None,
        };
    }
    let range = if head.method == Method::Get {
        range::requested(head, v, len)
    } else {
        RangeRequest::Full
    };
    let (status, start, count) = match range {
        RangeRequest::Full => (Status::OK, 0, len),
        RangeRequest::Partial { start, end } => (Status::PARTIAL_CONTENT, start, end - start + 1),
        RangeRequest::Unsatisfiable => {
            let cr = range::unsatisfied(len);
            return error(
                node,
                out,
                Status::RANGE_NOT_SATISFIABLE,
                ctx,
                &[("Content-Range", cr.as_bytes())],
            );
        }
    };
    let cacheable = len <= node.config.max_cached_file_bytes;
    // Fetch the body before writing the head, so a failed read can still become a 500.
    let body = if ctx.head_only || !cacheable {
        None
    } else {
        match body_bytes(node, key, meta, ctx.hint).await {
            Ok(b) => Some(b),
            Err(_) => return error(node, out, Status::INTERNAL_SERVER_ERROR, ctx, &[]),
        }
    };
    let mut h = begin(node, out, status, ctx);
    h.raw_lines(&meta.header_lines);
    h.header_u64("Content-Length", count);
    if status == Status::PARTIAL_CONTENT {
        let cr = range::content_range(start, start + count - 1, len);
        h.header("Content-Range", cr.as_bytes());
    }
    h.finish();
    let mut reply = Reply {
        status,
        body_bytes: 0,
        close: !ctx.keep_alive,
        shared: None,
        stream: None,
        relay: None,
    };
    if ctx.head_only {
        return reply;
    }
    reply.body_bytes = count;
    match body {
        Some(bytes) => {
            let (start, end) = (start as usize, (start + count) as usize);
            reply.shared = Some(SharedBody { bytes, start, end });
        }
        None => reply.stream = Some(FileStream { meta: Arc::clone(meta), start, len: count }),
    }
    reply
}

/// The whole body of a cacheable file: content cache, else the page cache without
/// blocking, else a helper thread; whatever was read goes into the content cache.
async fn body_bytes(
    node: &NodeState,
    key: &str,
    meta: &Arc<FileMeta>,
    hint: Option<wire::TargetHint>,
) -> io::Result<Arc<[u8]>> {
    let bkey = BodyKey::File(key.to_string());
    if let Some(b) = node.cached_body(&bkey, hint, |b| b.stamp == Some(meta.stamp)) {
        return Ok(b);
    }
    let len = meta.stamp.len as usize;
    let nowait =
        if node.config.direct_io { None } else { disk::read_at_nowait(&meta.file, 0, len)? };
    let data = match nowait {
        Some(d) => d,
        None => {
            let (m, direct_io) = (Arc::clone(meta), node.config.direct_io);
            let _reading = Reading::start(&node.counters, len as u64);
            node.disk
                .run(move || disk::read_miss(&m, direct_io, 0, len))
                .await
                .map_err(|e| io::Error::other(e.to_string()))??
        }
    };
    let bytes: Arc<[u8]> = data.into();
    let body = CachedBody { stamp: Some(meta.stamp), bytes: Arc::clone(&bytes), target: hint };
    node.store_body(bkey, body);
    Ok(bytes)
}

//! One request through a caching node: fresh from the store, else the body already
//! arriving for the target, else one fetch for all concurrent requests for the target
//! (`single_flight`), then the answer: the shared stored or filling response, this request's own (uncacheable or relayed) response, a stale copy
//! standing in for a failed origin, or 502/504 with the reason.

use super::fetch::{fetch, How, Outcome, Own};
use super::fields::{end_to_end, Field};
use super::filling::Filling;
use super::relay::{Relay, Source};
use super::store::Stored;
use super::OriginState;
use crate::reply::{begin, error, simple, Reply, ReplyCtx, SharedBody};
use crate::state::NodeState;
use crate::stats::Counters;
use http1::{RequestHead, ResponseHead, Status, Version};
use std::cell::RefCell;
use std::rc::Rc;
use std::time::SystemTime;

/// Fields of a stored or relayed response the node writes itself.
const REWRITTEN: &[&str] = &["date", "server", "age", "content-length", "x-larder-cache"];

pub async fn serve(
    node: &NodeState,
    origin: &Rc<OriginState>,
    req: &RequestHead,
    ctx: &ReplyCtx,
    out: &mut Vec<u8>,
) -> Reply {
    let target = req.target.as_str();
    if !target.starts_with('/') {
        return error(node, out, Status::BAD_REQUEST, ctx, &[]);
    }
    let cached = origin.store.get(target, req);
    if let Some(s) = cached.as_ref().filter(|s| s.freshness.is_fresh(SystemTime::now())) {
        Counters::add(&node.counters.hits, 1);
        return stored(node, s, How::Hit, ctx, out);
    }
    Counters::add(&node.counters.misses, 1);
    if let Some(fill) = origin.filling_for(target, req) {
        return filling(node, &fill, ctx, out);
    }
    let max_cached = node.config.max_cached_file_bytes;
    let own = RefCell::new(None);
    let work = async {
        let (outcome, mine) = fetch(origin, max_cached, req, target, cached.clone()).await;
        *own.borrow_mut() = mine;
        outcome
    };
    let mut outcome = origin.fetching.run(target, work).await;
    if let Some(mine) = own.take() {
        return answer_own(node, mine, ctx, out);
    }
    let usable = match &outcome {
        Some(Outcome::Shared(s, _)) => s.matches(req),
        Some(Outcome::Filling(f)) => f.meta.matches(req),
        Some(Outcome::Failed(..)) => true,
        Some(Outcome::Pass) | None => false,
    };
    if !usable {
        // The fetch waited for was not for this request (uncacheable, another variant, or
        // its request went away): fetch alone.
        let (o, mine) = fetch(origin, max_cached, req, target, cached.clone()).await;
        if let Some(mine) = mine {
            return answer_own(node, mine, ctx, out);
        }
        outcome = Some(o);
    }
    match outcome {
        Some(Outcome::Shared(s, how)) => stored(node, &s, how, ctx, out),
        Some(Outcome::Filling(f)) => filling(node, &f, ctx, out),
        Some(Outcome::Failed(status, why)) => {
            match cached.filter(|s| s.freshness.usable_on_error(SystemTime::now())) {
                Some(s) => stored(node, &s, How::Stale, ctx, out),
                None => failed(node, status, &why, ctx, out),
            }
        }
        Some(Outcome::Pass) | None => {
            failed(node, Status::BAD_GATEWAY, "origin response lost", ctx, out)
        }
    }
}

/// The head of a response made from `s` (stored, filling, or this request's own) with
/// a body of `len` bytes; whether the body is to be sent.
fn head_of(
    node: &NodeState,
    s: &Stored,
    how: How,
    len: u64,
    ctx: &ReplyCtx,
    out: &mut Vec<u8>,
) -> (Status, bool) {
    let status = Status::new(s.status).unwrap_or(Status::BAD_GATEWAY);
    let mut h = begin(node, out, status, ctx);
    write_fields(&mut h, &s.fields);
    if how != How::Pass {
        h.header_u64("Age", s.freshness.age(SystemTime::now()).as_secs());
    }
    h.header("X-Larder-Cache", how.as_bytes());
    if !status.forbids_body() {
        h.header_u64("Content-Length", len);
    }
    h.finish();
    (status, !status.forbids_body() && !ctx.head_only && len > 0)
}

/// A complete response with its body from memory.
fn stored(node: &NodeState, s: &Stored, how: How, ctx: &ReplyCtx, out: &mut Vec<u8>) -> Reply {
    let len = s.body.len();
    let (status, send) = head_of(node, s, how, len as u64, ctx, out);
    Reply {
        status,
        body_bytes: if send { len as u64 } else { 0 },
        close: !ctx.keep_alive,
        shared: send.then(|| SharedBody { bytes: s.body.clone(), start: 0, end: len }),
        stream: None,
        relay: None,
    }
}

/// A response whose body is still arriving: the head now, the body as it fills.
fn filling(node: &NodeState, f: &Rc<Filling>, ctx: &ReplyCtx, out: &mut Vec<u8>) -> Reply {
    let (status, send) = head_of(node, &f.meta, How::Miss, f.len, ctx, out);
    Reply {
        status,
        body_bytes: if send { f.len } else { 0 },
        close: !ctx.keep_alive,
        shared: None,
        stream: None,
        relay: send.then(|| Relay {
            prefix: Vec::new(),
            body: Source::Fill(f.reader()),
            chunked: false,
        }),
    }
}

fn answer_own(node: &NodeState, own: Own, ctx: &ReplyCtx, out: &mut Vec<u8>) -> Reply {
    match own {
        Own::Whole(s) => stored(node, &s, How::Pass, ctx, out),
        Own::Stream(head, prefix, body) => {
            let status = Status::new(head.status).unwrap_or(Status::BAD_GATEWAY);
            let len = body.declared_len().map(|rest| rest + prefix.len() as u64);
            let chunked = len.is_none() && ctx.version == Version::Http11;
            // A body of unknown length to an HTTP/1.0 client ends with the connection.
            let ctx = ReplyCtx { keep_alive: ctx.keep_alive && (len.is_some() || chunked), ..*ctx };
            let mut h = begin(node, out, status, &ctx);
            write_fields(&mut h, &end_to_end(&head.fields));
            h.header("X-Larder-Cache", How::Pass.as_bytes());
            match len {
                Some(n) => {
                    h.header_u64("Content-Length", n);
                }
                None if chunked => {
                    h.header("Transfer-Encoding", b"chunked");
                }
                None => {}
            }
            h.finish();
            let send = !ctx.head_only && !status.forbids_body();
            Reply {
                status,
                body_bytes: len.unwrap_or(0),
                close: !ctx.keep_alive,
                shared: None,
                stream: None,
                relay: send.then(|| Relay { prefix, body: Source::Origin(body), chunked }),
            }
        }
    }
}

/// 502 or 504 with the reason, never stored by anyone downstream.
fn failed(node: &NodeState, status: Status, why: &str, ctx: &ReplyCtx, out: &mut Vec<u8>) -> Reply {
    let body = format!("{status}\n{why}\n");
    let ctype = "text/plain; charset=utf-8";
    let no_store: &[(&str, &[u8])] = &[("Cache-Control", b"no-store")];
    simple(node, out, status, ctx, ctype, body.as_bytes(), no_store)
}

fn write_fields(h: &mut ResponseHead<'_>, fields: &[Field]) {
    for (name, value) in fields {
        if !REWRITTEN.iter().any(|r| r.eq_ignore_ascii_case(name)) {
            h.header(name, value);
        }
    }
}

//! One request through a caching node: fresh from the store, else a stale copy within its
//! grace (served at once, refreshed in the background: `grace.rs`), else the body already
//! arriving for the target, else one fetch for all concurrent requests for the target
//! (`single_flight`; from a peer node first when a router names one: `peers.rs`), then
//! the answer: the shared stored or filling response, this request's own (uncacheable or
//! relayed) response, a stale copy standing in for a failed origin, or 502/504 with the
//! reason.

use super::fetch::{fetch, Fetched, How, Outcome, Own};
use super::fields::{first, Field};
use super::filling::Filling;
use super::grace;
use super::partial::{range_of, ranged, validators};
use super::peers::Peers;
use super::relay::{Relay, Source};
use super::relayed::{write_relayed, OwnFields, UpstreamBody};
use super::site;
use super::slice_peer;
use super::slice_reader::SliceReader;
use super::slice_spec::SliceSpec;
use super::state::OriginState;
use super::store::Stored;
use crate::conditional::not_modified;
use crate::range::{content_range, requested, unsatisfied, RangeRequest};
use crate::reply::{begin, begin_dated, error, simple, Reply, ReplyCtx, SharedBody};
use crate::state::NodeState;
use crate::stats::Counters;
use http1::{RequestHead, ResponseHead, Status, Version};
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::SystemTime;

/// Fields of a stored or relayed response the node writes itself (the origin's `Date` is
/// kept: [`begin_dated`] writes it first).
const REWRITTEN: &[&str] = &["date", "server", "age", "content-length", "x-larder-cache"];
/// Fields of a stored response the node also writes itself: whether ranges are accepted is
/// the cache's to say (first), and a 206 carries the node's own `Content-Range`.
const RANGE_FIELDS: &[&str] = &["accept-ranges", "content-range"];
/// The fields a 304 to the client repeats (RFC 9110 §15.4.5).
const NOT_MODIFIED_FIELDS: &[&str] =
    &["cache-control", "content-location", "etag", "expires", "vary", "last-modified"];

pub async fn serve(
    node: &Rc<NodeState>,
    origin: &OriginState,
    req: &RequestHead,
    ctx: &ReplyCtx,
    out: &mut Vec<u8>,
) -> Reply {
    if !req.target.starts_with('/') {
        return error(node, out, Status::BAD_REQUEST, ctx, &[]);
    }
    let Ok(key) = site::key(origin.upstream.config.host, req) else {
        return error(node, out, Status::BAD_REQUEST, ctx, &[]);
    };
    let target = key.as_ref();
    if let Some(hint) = ctx.hint {
        if origin.upstream.store.name(target, hint) {
            node.holdings.borrow_mut().changed();
        }
    }
    let asked_slice = req.header(wire::SLICE_HEADER).and_then(wire::SliceRequest::parse);
    if let Some(asked) = asked_slice.filter(|_| Peers::is_peer_fill(req)) {
        return slice_peer::answer(node, origin, (req, target, asked), ctx, out).await;
    }
    let mut to = Answer::new(node, req, ctx);
    let now = SystemTime::now();
    if let Some((head, spec)) = origin.upstream.store.sliced(target) {
        if head.freshness.is_fresh(now) {
            Counters::add(&node.counters.hits, 1);
            return to.sliced(node, (&head, spec), How::Hit, out);
        }
    }
    let cached = origin.upstream.store.get(target, req);
    if let Some(s) = cached.as_ref().filter(|s| s.freshness.is_fresh(now)) {
        Counters::add(&node.counters.hits, 1);
        return to.stored(s, How::Hit, out);
    }
    if let Some(s) = cached.as_ref().filter(|s| s.freshness.usable_while_revalidating(now)) {
        Counters::add(&node.counters.hits, 1);
        grace::refresh(node, target, req, s);
        return to.stored(s, How::Grace, out);
    }
    Counters::add(&node.counters.misses, 1);
    if let Some(fill) = origin.upstream.fills.for_request(target, req) {
        return to.filling(&fill, out);
    }
    let max_cached = node.config.max_cached_file_bytes;
    // A cold miss a router says another node holds or is filling is filled from it first.
    let peers = &origin.upstream.peers;
    let peer = if cached.is_none() { peers.named(req) } else { None };
    let alone = || fetch(&origin.upstream, max_cached, req, target, (cached.clone(), peer));
    // Another node's peer fill never waits for a fetch here that waits on a peer: that
    // peer could be the node asking (two nodes naming each other).
    let fetching = if Peers::is_peer_fill(req) && peers.is_waiting(target) {
        &origin.fetching_for_peers
    } else {
        &origin.fetching
    };
    let (mut outcome, mut mine) = if origin.upstream.hit_for_miss.is_marked(target, now) {
        // The last response for this target was not shareable: no queueing behind a
        // fetch whose answer this request most likely could not use.
        let (outcome, mine) = Mine::split(alone().await);
        (Some(outcome), mine)
    } else {
        let mine = RefCell::new(Mine::Waited);
        let work = async {
            let (outcome, m) = Mine::split(alone().await);
            *mine.borrow_mut() = m;
            outcome
        };
        let outcome = fetching.run(target, work).await;
        (outcome, mine.into_inner())
    };
    let usable = match &outcome {
        Some(Outcome::Shared(s, _)) => s.matches(req),
        Some(Outcome::Filling(f)) => f.meta.matches(req),
        Some(Outcome::Sliced(..)) | Some(Outcome::Failed(..)) => true,
        Some(Outcome::Pass) | None => false,
    };
    if matches!(mine, Mine::Waited) && !usable {
        // The fetch waited for was not for this request (uncacheable, another variant, or
        // its request went away): fetch alone.
        let (o, m) = Mine::split(alone().await);
        (outcome, mine) = (Some(o), m);
    }
    match mine {
        Mine::Own(own, interim) => {
            to.interim(&interim, out);
            return to.own(own, out);
        }
        Mine::Cookies(cookies, interim) => {
            to.cookies = cookies;
            to.interim(&interim, out);
        }
        Mine::Waited => {}
    }
    match outcome {
        Some(Outcome::Shared(s, how)) => to.stored(&s, how, out),
        Some(Outcome::Filling(f)) => to.filling(&f, out),
        Some(Outcome::Sliced(head, spec)) => to.sliced(node, (&head, spec), How::Miss, out),
        Some(Outcome::Failed(status, why)) => match cached {
            Some(s) if s.freshness.usable_on_error(SystemTime::now()) => {
                to.stored(&s, How::Stale, out)
            }
            // RFC 9111 §5.2.2.2: a must-revalidate response that cannot be revalidated
            // is answered 504, whatever kept the origin from answering.
            Some(s) if s.freshness.must_revalidate => {
                failed(node, Status::GATEWAY_TIMEOUT, &why, ctx, out)
            }
            _ => failed(node, status, &why, ctx, out),
        },
        Some(Outcome::Pass) | None => {
            failed(node, Status::BAD_GATEWAY, "origin response lost", ctx, out)
        }
    }
}

/// What a fetch left for this request beside the outcome every waiting request shares.
enum Mine {
    /// This request waited on another's fetch: the shared outcome alone.
    Waited,
    /// This request fetched, and the outcome is shared with these cookies and interim
    /// responses for it alone.
    Cookies(Vec<Field>, Vec<u8>),
    /// This request fetched an answer only it may use (and these interim responses).
    Own(Own, Vec<u8>),
}

impl Mine {
    fn split(f: Fetched) -> (Outcome, Mine) {
        let mine = match f.own {
            Some(own) => Mine::Own(own, f.interim),
            None => Mine::Cookies(f.cookies, f.interim),
        };
        (f.outcome, mine)
    }
}

/// Who is being answered: the node, the request and what shapes the response.
pub(super) struct Answer<'a> {
    node: &'a NodeState,
    req: &'a RequestHead,
    ctx: &'a ReplyCtx,
    /// Cookies the origin set for this client alone, added to the shared response.
    cookies: Vec<Field>,
}

impl<'a> Answer<'a> {
    pub(super) fn new(node: &'a NodeState, req: &'a RequestHead, ctx: &'a ReplyCtx) -> Self {
        Answer { node, req, ctx, cookies: Vec::new() }
    }

    /// Pass on the origin's interim responses (103 Early Hints, …) before the final one;
    /// never to an HTTP/1.0 client, which cannot read them (RFC 9110 §15.2).
    pub(super) fn interim(&self, interim: &[u8], out: &mut Vec<u8>) {
        if self.ctx.version != Version::Http10 {
            out.extend_from_slice(interim);
        }
    }

    /// The head of a response made from `s` (stored, filling, or this request's own) with
    /// a body of `len` bytes, or of its bytes `part` (inclusive) with 206, or 304 when the
    /// client's own validators match a cached 200; the status, and whether the body is to
    /// be sent.
    fn head_of(
        &self,
        s: &Stored,
        how: How,
        len: u64,
        part: Option<(u64, u64)>,
        out: &mut Vec<u8>,
    ) -> (Status, bool) {
        if part.is_none() && self.answers_not_modified(s, how) {
            let mut h = begin(self.node, out, Status::NOT_MODIFIED, self.ctx);
            for (name, value) in &s.fields {
                if NOT_MODIFIED_FIELDS.iter().any(|n| n.eq_ignore_ascii_case(name)) {
                    h.header(name, value);
                }
            }
            write_fields(&mut h, &self.cookies);
            h.header("X-Larder-Cache", how.as_bytes());
            h.finish();
            return (Status::NOT_MODIFIED, false);
        }
        let status = match part {
            Some(_) => Status::PARTIAL_CONTENT,
            None => Status::new(s.status).unwrap_or(Status::BAD_GATEWAY),
        };
        let mut h = begin_dated(self.node, out, status, self.ctx, first(&s.fields, "date"));
        let ranged = ranged(s, how);
        // A 206 carries the node's own Content-Range; a whole answer keeps the stored one.
        let own_fields: &[&str] = match (ranged, part) {
            (true, Some(_)) => RANGE_FIELDS,
            (true, None) => &RANGE_FIELDS[..1],
            (false, _) => &[],
        };
        write_fields_except(&mut h, &s.fields, own_fields);
        write_fields(&mut h, &self.cookies);
        if how != How::Pass {
            h.header_u64("Age", s.freshness.age(SystemTime::now()).as_secs());
        }
        if ranged {
            h.header("Accept-Ranges", b"bytes");
        }
        h.header("X-Larder-Cache", how.as_bytes());
        let count = match part {
            Some((start, end)) => {
                h.header("Content-Range", content_range(start, end, len).as_bytes());
                end - start + 1
            }
            None => len,
        };
        if !status.forbids_body() {
            h.header_u64("Content-Length", count);
        }
        h.finish();
        (status, !status.forbids_body() && !self.ctx.head_only && count > 0)
    }

    /// Whether a 304 answers: the client's If-None-Match (or If-Modified-Since) matches a
    /// cached 200. Checked before `Range`, as RFC 9110 §13.2.2 orders.
    fn answers_not_modified(&self, s: &Stored, how: How) -> bool {
        how != How::Pass && s.status == 200 && not_modified(self.req, validators(s))
    }

    fn reply(&self, status: Status, body_bytes: u64) -> Reply {
        Reply {
            status,
            body_bytes,
            close: !self.ctx.keep_alive,
            shared: None,
            stream: None,
            relay: None,
        }
    }

    /// A complete response with its body from memory, or the range of it asked for (the
    /// stored bytes shared, not copied).
    fn stored(&self, s: &Stored, how: How, out: &mut Vec<u8>) -> Reply {
        let len = s.body.len();
        let range = if self.answers_not_modified(s, how) {
            RangeRequest::Full
        } else {
            range_of(self.req, s, how)
        };
        let part = match range {
            RangeRequest::Full => None,
            RangeRequest::Partial { start, end } => Some((start, end)),
            RangeRequest::Unsatisfiable => {
                let cr = unsatisfied(len as u64);
                let fields: &[(&str, &[u8])] =
                    &[("Content-Range", cr.as_bytes()), ("X-Larder-Cache", how.as_bytes())];
                return error(self.node, out, Status::RANGE_NOT_SATISFIABLE, self.ctx, fields);
            }
        };
        let (status, send) = self.head_of(s, how, len as u64, part, out);
        // `range` bounds `part` within the body.
        let (start, end) = part.map_or((0, len), |(a, b)| (a as usize, b as usize + 1));
        let mut reply = self.reply(status, if send { (end - start) as u64 } else { 0 });
        reply.shared = send.then(|| SharedBody { bytes: s.body.clone(), start, end });
        reply
    }

    /// A large object stored as slices (`head` a [`Stored`] without its body): the head
    /// now (200 whole, 206 for one range, 304, 416), the bytes slice by slice as they
    /// are sent. Several ranges are answered 200 whole, as for stored responses.
    fn sliced(
        &self,
        node: &Rc<NodeState>,
        (head, spec): (&Stored, Arc<SliceSpec>),
        how: How,
        out: &mut Vec<u8>,
    ) -> Reply {
        let len = spec.version.total;
        let range = if self.answers_not_modified(head, how) {
            RangeRequest::Full
        } else {
            requested(self.req, validators(head), len)
        };
        let part = match range {
            RangeRequest::Full => None,
            RangeRequest::Partial { start, end } => Some((start, end)),
            RangeRequest::Unsatisfiable => {
                let cr = unsatisfied(len);
                let fields: &[(&str, &[u8])] =
                    &[("Content-Range", cr.as_bytes()), ("X-Larder-Cache", how.as_bytes())];
                return error(self.node, out, Status::RANGE_NOT_SATISFIABLE, self.ctx, fields);
            }
        };
        let (status, send) = self.head_of(head, how, len, part, out);
        let bytes = part.unwrap_or((0, len - 1));
        let mut reply = self.reply(status, if send { bytes.1 - bytes.0 + 1 } else { 0 });
        let body = Source::Slices(SliceReader::new(node, spec, bytes));
        reply.relay = send.then(|| Relay { prefix: Vec::new(), body, chunked: false });
        reply
    }

    /// A response whose body is still arriving: the head now, the body as it fills.
    fn filling(&self, f: &Rc<Filling>, out: &mut Vec<u8>) -> Reply {
        // Its body is not all here: a `Range` is answered with the whole (200).
        let (status, send) = self.head_of(&f.meta, How::Miss, f.len, None, out);
        let mut reply = self.reply(status, if send { f.len } else { 0 });
        let body = Source::Fill(f.reader());
        reply.relay = send.then(|| Relay { prefix: Vec::new(), body, chunked: false });
        reply
    }

    /// This request's own response: complete, or relayed from the origin connection.
    pub(super) fn own(&self, own: Own, out: &mut Vec<u8>) -> Reply {
        let (head, prefix, body) = match own {
            Own::Whole(s) => return self.stored(&s, How::Pass, out),
            Own::Stream(head, prefix, body) => (head, prefix, body),
        };
        self.interim(&head.interim, out);
        let status = Status::new(head.status).unwrap_or(Status::BAD_GATEWAY);
        let own =
            OwnFields { dropped: REWRITTEN, added: &[("X-Larder-Cache", How::Pass.as_bytes())] };
        let body = UpstreamBody::Streamed(prefix, *body);
        write_relayed(self.node, self.ctx, (status, &head.fields), body, &own, out)
    }
}

/// 502 or 504 with the reason, never stored by anyone downstream.
pub(super) fn failed(
    node: &NodeState,
    status: Status,
    why: &str,
    ctx: &ReplyCtx,
    out: &mut Vec<u8>,
) -> Reply {
    let body = format!("{status}\n{why}\n");
    let ctype = "text/plain; charset=utf-8";
    let no_store: &[(&str, &[u8])] = &[("Cache-Control", b"no-store")];
    simple(node, out, status, ctx, ctype, body.as_bytes(), no_store)
}

fn write_fields(h: &mut ResponseHead<'_>, fields: &[Field]) {
    write_fields_except(h, fields, &[]);
}

/// The fields but those the node writes itself and those named in `also`.
fn write_fields_except(h: &mut ResponseHead<'_>, fields: &[Field], also: &[&str]) {
    let ours = |name: &str| REWRITTEN.iter().chain(also).any(|r| r.eq_ignore_ascii_case(name));
    for (name, value) in fields {
        if !ours(name) {
            h.header(name, value);
        }
    }
}

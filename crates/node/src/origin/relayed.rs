//! A response made upstream (by an origin, or by the node a forwarded request belongs to)
//! written to one client: the upstream's `Date` and end-to-end fields under this node's
//! connection fields, less the ones the caller says it writes itself, then the body
//! framed anew: `Content-Length` when its length is known, else chunked to an HTTP/1.1
//! client, else ending with the connection (HTTP/1.0). What the callers differ in is a
//! parameter ([`OwnFields`]), so every upstream response is framed by the one rule.

use super::body::OriginBody;
use super::fields::{end_to_end, first, Field};
use super::relay::{Relay, Source};
use crate::reply::{begin_dated, Reply, ReplyCtx};
use crate::state::NodeState;
use http1::{Status, Version};

/// Upstream fields never passed on: this writer writes its own (`Date` from the upstream's,
/// through [`begin_dated`]; the framing from the body it sends).
const FRAMING: &[&str] = &["date", "server", "content-length"];

/// The body of an upstream response.
pub(crate) enum UpstreamBody {
    /// Read whole already: written after the head.
    Whole(Vec<u8>),
    /// Bytes already read, then the rest relayed as it arrives.
    Streamed(Vec<u8>, OriginBody),
}

/// What the caller says on an upstream response instead of the upstream.
pub(crate) struct OwnFields<'a> {
    /// Upstream fields left out (lower case), beside the framing this writer writes.
    pub dropped: &'a [&'a str],
    /// Fields written after the upstream's.
    pub added: &'a [(&'a str, &'a [u8])],
}

/// Write the upstream response `status` with `fields` and `body` to this client into
/// `out`; the body after the head when read whole, else in the [`Reply`]'s relay.
pub(crate) fn write_relayed(
    node: &NodeState,
    ctx: &ReplyCtx,
    (status, fields): (Status, &[Field]),
    body: UpstreamBody,
    own: &OwnFields<'_>,
    out: &mut Vec<u8>,
) -> Reply {
    let len = match &body {
        UpstreamBody::Whole(b) => Some(b.len() as u64),
        UpstreamBody::Streamed(prefix, b) => {
            b.declared_len().map(|rest| rest + prefix.len() as u64)
        }
    };
    let chunked = len.is_none() && ctx.version == Version::Http11;
    // A body of unknown length to an HTTP/1.0 client ends with the connection.
    let keep_alive = ctx.keep_alive && (len.is_some() || chunked || status.forbids_body());
    let ctx = ReplyCtx { keep_alive, ..*ctx };
    let mut h = begin_dated(node, out, status, &ctx, first(fields, "date"));
    let ours = |name: &str| FRAMING.iter().chain(own.dropped).any(|r| r.eq_ignore_ascii_case(name));
    for (name, value) in end_to_end(fields) {
        if !ours(&name) {
            h.header(&name, &value);
        }
    }
    for (name, value) in own.added {
        h.header(name, value);
    }
    // A HEAD answer has the framing a GET's would have; a 1xx, 204 or 304 has none.
    if !status.forbids_body() {
        match len {
            Some(n) => {
                h.header_u64("Content-Length", n);
            }
            None if chunked => {
                h.header("Transfer-Encoding", b"chunked");
            }
            None => {}
        }
    }
    h.finish();
    let send = !ctx.head_only && !status.forbids_body();
    let mut reply = Reply {
        status,
        body_bytes: if send { len.unwrap_or(0) } else { 0 },
        close: !keep_alive,
        shared: None,
        stream: None,
        relay: None,
    };
    match body {
        UpstreamBody::Whole(b) if send => out.extend_from_slice(&b),
        UpstreamBody::Streamed(prefix, b) if send => {
            reply.relay = Some(Relay { prefix, body: Source::Origin(b), chunked });
        }
        _ => {}
    }
    reply
}

//! What every answer is made of, shared by the places that answer (`respond`,
//! `static_file`, `dynamic_route`, `connection`): the [`Reply`] summary, the context
//! that shapes a response ([`ReplyCtx`]), bodies sent after the head ([`SharedBody`],
//! [`FileStream`]), and the writers of a head, a small complete response and an error page.
//! A leaf: it knows the node's state (for the Date header) but none of those callers.

use crate::state::NodeState;
use crate::translate::FileMeta;
use http1::{ResponseHead, Status, Version};
use std::sync::Arc;

/// A file range to stream after the head, for bodies too large for the content cache.
#[derive(Clone, Debug)]
pub struct FileStream {
    pub meta: Arc<FileMeta>,
    pub start: u64,
    pub len: u64,
}

/// A body the content cache holds (or a range of it), sent from the cache's own buffer
/// after the head instead of being copied next to it.
#[derive(Clone, Debug)]
pub struct SharedBody {
    pub bytes: Arc<[u8]>,
    pub start: usize,
    pub end: usize,
}

impl SharedBody {
    pub fn bytes(&self) -> &[u8] {
        &self.bytes[self.start..self.end]
    }
}

/// What was answered, for counters, the access log and the connection.
#[derive(Debug)]
pub struct Reply {
    pub status: Status,
    pub body_bytes: u64,
    /// Close the connection after this response.
    pub close: bool,
    /// A cached body to send after the head written into the output buffer.
    pub shared: Option<SharedBody>,
    pub stream: Option<FileStream>,
    /// An origin body relayed after the head as it arrives.
    pub relay: Option<crate::origin::Relay>,
}

/// What shapes every response to one request.
#[derive(Clone, Copy, Debug)]
pub struct ReplyCtx {
    pub version: Version,
    pub keep_alive: bool,
    /// HEAD: the same head as GET, no body.
    pub head_only: bool,
    /// The target a router placed this request by (`X-Larder-Target`), remembered with
    /// the body it fills or hits so the load report can say what this node holds.
    pub hint: Option<wire::TargetHint>,
}

impl ReplyCtx {
    /// For answers sent before a request could be understood: close afterwards.
    pub fn closing() -> ReplyCtx {
        ReplyCtx { version: Version::Http11, keep_alive: false, head_only: false, hint: None }
    }
}

/// Start a response: status line, Date, Server and the connection header.
pub fn begin<'a>(
    node: &NodeState,
    out: &'a mut Vec<u8>,
    status: Status,
    ctx: &ReplyCtx,
) -> ResponseHead<'a> {
    begin_dated(node, out, status, ctx, None)
}

/// [`begin`] with the `Date` of a response made elsewhere (an origin's, stored or relayed)
/// when it has one: RFC 9110 §6.6.1 has the origin date its response, and a cache passes
/// that on (it is what `Age` and a client's own freshness arithmetic start from); the
/// node's clock dates only responses that arrive without one.
pub fn begin_dated<'a>(
    node: &NodeState,
    out: &'a mut Vec<u8>,
    status: Status,
    ctx: &ReplyCtx,
    date: Option<&[u8]>,
) -> ResponseHead<'a> {
    let mut head = ResponseHead::new(out, status);
    match date {
        Some(d) => {
            head.header("Date", d);
        }
        None => node.write_date(&mut head),
    }
    head.header("Server", b"larder");
    if !ctx.keep_alive {
        head.header("Connection", b"close");
    } else if ctx.version == Version::Http10 {
        head.header("Connection", b"keep-alive");
    }
    head
}

/// A complete response with an in-memory body.
pub fn simple(
    node: &NodeState,
    out: &mut Vec<u8>,
    status: Status,
    ctx: &ReplyCtx,
    content_type: &str,
    body: &[u8],
    extra: &[(&str, &[u8])],
) -> Reply {
    let mut head = begin(node, out, status, ctx);
    head.header("Content-Type", content_type.as_bytes());
    for (name, value) in extra {
        head.header(name, value);
    }
    head.header_u64("Content-Length", body.len() as u64);
    head.finish();
    let send_body = !ctx.head_only && !status.forbids_body();
    if send_body {
        out.extend_from_slice(body);
    }
    Reply {
        status,
        body_bytes: if send_body { body.len() as u64 } else { 0 },
        close: !ctx.keep_alive,
        shared: None,
        stream: None,
        relay: None,
    }
}

/// An error page: the status as plain text.
pub fn error(
    node: &NodeState,
    out: &mut Vec<u8>,
    status: Status,
    ctx: &ReplyCtx,
    extra: &[(&str, &[u8])],
) -> Reply {
    let body = format!("{status}\n");
    simple(node, out, status, ctx, "text/plain; charset=utf-8", body.as_bytes(), extra)
}

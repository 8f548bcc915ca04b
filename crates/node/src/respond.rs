//! One request in, one response head (and maybe body) out: method checks, the report
//! paths, the dynamic route and static files, in that order.

use crate::path::sanitize;
use crate::state::NodeState;
use crate::translate::FileMeta;
use crate::{dynamic_route, static_file};
use http1::{Method, RequestHead, ResponseHead, Status, Version};
use std::rc::Rc;
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
}

/// What shapes every response to one request.
#[derive(Clone, Copy, Debug)]
pub struct ReplyCtx {
    pub version: Version,
    pub keep_alive: bool,
    /// HEAD: the same head as GET, no body.
    pub head_only: bool,
}

impl ReplyCtx {
    /// For answers sent before a request could be understood: close afterwards.
    pub fn closing() -> ReplyCtx {
        ReplyCtx { version: Version::Http11, keep_alive: false, head_only: false }
    }
}

const ALLOW: &[u8] = b"GET, HEAD";

/// Start a response: status line, Date, Server and the connection header.
pub fn begin<'a>(
    node: &NodeState,
    out: &'a mut Vec<u8>,
    status: Status,
    ctx: &ReplyCtx,
) -> ResponseHead<'a> {
    let mut head = ResponseHead::new(out, status);
    node.write_date(&mut head);
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

/// Answer one parsed request into `out`.
pub async fn respond(node: &Rc<NodeState>, head: &RequestHead, out: &mut Vec<u8>) -> Reply {
    let ctx = ReplyCtx {
        version: head.version,
        keep_alive: head.keep_alive() && !node.is_shutting_down(),
        head_only: head.method == Method::Head,
    };
    match head.method {
        Method::Get | Method::Head => {}
        Method::Other(_) => return error(node, out, Status::NOT_IMPLEMENTED, &ctx, &[]),
        _ => return error(node, out, Status::METHOD_NOT_ALLOWED, &ctx, &[("Allow", ALLOW)]),
    }
    let path = head.path();
    if node.config.load_path.as_deref() == Some(path) {
        node.load.borrow_mut().sample(std::time::Instant::now(), crate::server::SAMPLE_GAP);
        let json = node.report().to_json();
        let no_store: &[(&str, &[u8])] = &[("Cache-Control", b"no-store")];
        return simple(node, out, Status::OK, &ctx, "application/json", json.as_bytes(), no_store);
    }
    if node.config.metrics_path.as_deref() == Some(path) {
        node.load.borrow_mut().sample(std::time::Instant::now(), crate::server::SAMPLE_GAP);
        let text = node.report().to_prometheus();
        let ctype = "text/plain; version=0.0.4; charset=utf-8";
        return simple(node, out, Status::OK, &ctx, ctype, text.as_bytes(), &[]);
    }
    let safe = match sanitize(path) {
        Ok(s) => s,
        Err(_) => return error(node, out, Status::BAD_REQUEST, &ctx, &[]),
    };
    if let Some(cfg) = &node.config.dynamic {
        if let Some(app) = crate::dynamic::parse_app_path(cfg, &safe.rel, head.query()) {
            return match app {
                Ok(app) => dynamic_route::serve(node, cfg, &app, &ctx, out).await,
                Err(_) => error(node, out, Status::NOT_FOUND, &ctx, &[]),
            };
        }
    }
    static_file::serve(node, head, &safe, &ctx, out).await
}

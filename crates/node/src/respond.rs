//! One request in, one response head (and maybe body) out: a router's invalidation and
//! every method but GET and HEAD on a caching node (to the origin), method checks, the
//! report paths, the dynamic route and static files, in that order.

use crate::path::sanitize;
use crate::reply::{error, simple, Reply, ReplyCtx};
use crate::request_body::RequestBody;
use crate::state::NodeState;
use crate::stats::SAMPLE_GAP;
use crate::{dynamic_route, static_file};
use http1::{Method, RequestHead, Status};
use std::net::IpAddr;
use std::rc::Rc;
use wire::Invalidation;

const ALLOW: &[u8] = b"GET, HEAD";

/// Answer one parsed request from `peer` into `out`; `body` is its body, still on the
/// connection, when it is to be passed on (a caching node's POST, PUT, …).
pub async fn respond(
    node: &Rc<NodeState>,
    head: &RequestHead,
    body: Option<&mut RequestBody<'_>>,
    peer: IpAddr,
    out: &mut Vec<u8>,
) -> Reply {
    let ctx = ReplyCtx {
        version: head.version,
        keep_alive: head.keep_alive() && !node.is_shutting_down(),
        head_only: head.method == Method::Head,
        hint: head.header(wire::TARGET_HINT_HEADER).and_then(wire::TargetHint::parse),
    };
    if let Some(origin) = &node.origin {
        if let Some(parsed) = Invalidation::parse(head.method.as_str(), &head.target) {
            let trusted = origin.upstream.config.may_invalidate(peer);
            let up = &origin.upstream;
            return crate::origin::answer_invalidation(node, up, parsed, trusted, &ctx, out);
        }
    }
    match (head.method.clone(), &node.origin) {
        (Method::Get | Method::Head, _) => {}
        (_, Some(origin)) => return crate::origin::pass(node, origin, head, body, &ctx, out).await,
        (Method::Other(_), None) => return error(node, out, Status::NOT_IMPLEMENTED, &ctx, &[]),
        (_, None) => {
            return error(node, out, Status::METHOD_NOT_ALLOWED, &ctx, &[("Allow", ALLOW)])
        }
    }
    let path = head.path();
    if node.config.load_path.as_deref() == Some(path) {
        let now = std::time::Instant::now();
        if let Some(id) = head.header(wire::POLLER_HEADER).and_then(wire::PollerId::parse) {
            node.pollers.borrow_mut().polled(id, now);
        }
        node.load.borrow_mut().sample(now, SAMPLE_GAP);
        let json = node.report().to_json();
        let no_store: &[(&str, &[u8])] = &[("Cache-Control", b"no-store")];
        return simple(node, out, Status::OK, &ctx, "application/json", json.as_bytes(), no_store);
    }
    if node.config.metrics_path.as_deref() == Some(path) {
        node.load.borrow_mut().sample(std::time::Instant::now(), SAMPLE_GAP);
        let text = node.report().to_prometheus();
        let ctype = wire::METRICS_CONTENT_TYPE;
        return simple(node, out, Status::OK, &ctx, ctype, text.as_bytes(), &[]);
    }
    if let Some(origin) = &node.origin {
        return crate::origin::serve(node, origin, head, &ctx, out).await;
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

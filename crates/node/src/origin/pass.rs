//! A request of any method but GET and HEAD through a caching node: passed to the origin
//! with its body streamed from the client, the response relayed to that client alone
//! (never stored, never shared, never coalesced with other requests), and, when the
//! method is unsafe and the response not an error, the stored responses it outdated
//! dropped (`invalidate.rs`).

use super::fetch::Own;
use super::fields::forwarded;
use super::invalidate::after_unsafe;
use super::serve::{failed, Answer};
use super::site;
use super::state::OriginState;
use super::OriginError;
use crate::reply::{error, Reply, ReplyCtx};
use crate::request_body::RequestBody;
use crate::state::NodeState;
use http1::{RequestHead, Status};

/// Request fields not forwarded on a passed request: the framing (the node re-frames the
/// body), the host, the expectation (answered by the node: `request_body.rs`) and `Via`
/// (the node writes its own). Conditions are forwarded: they are the client's own
/// (`If-Match` on a PUT).
const NOT_FORWARDED: &[&str] = &["host", "content-length", "transfer-encoding", "expect", "via"];

pub async fn pass(
    node: &NodeState,
    origin: &OriginState,
    req: &RequestHead,
    body: Option<&mut RequestBody<'_>>,
    ctx: &ReplyCtx,
    out: &mut Vec<u8>,
) -> Reply {
    if !req.target.starts_with('/') {
        return error(node, out, Status::BAD_REQUEST, ctx, &[]);
    }
    let fields = forwarded(req, NOT_FORWARDED);
    let up = &origin.upstream;
    let Ok(host) = site::checked_host(up.config.host, req) else {
        return error(node, out, Status::BAD_REQUEST, ctx, &[]);
    };
    match up.client.send(req.method.as_str(), (&req.target, host), &fields, body).await {
        Err(e @ OriginError::Client(_)) => {
            // The rest of the request cannot be found on the connection: answer, then close.
            let closing = ReplyCtx { keep_alive: false, ..*ctx };
            error(node, out, e.status(), &closing, &[])
        }
        Err(e) => failed(node, e.status(), &e.to_string(), ctx, out),
        Ok((head, body)) => {
            after_unsafe(node, up, req, head.status, &head.fields);
            Answer::new(node, req, ctx).own(Own::Stream(head, Vec::new(), Box::new(body)), out)
        }
    }
}

//! Back-end forwarding on an adopted connection (extended LARD's prototype): a later
//! request that belongs to another node ([`crate::HandOn`]) is fetched from that node over
//! pooled keep-alive HTTP/1.1 connections (the origin client's, `origin/client.rs`) and
//! answered here, in order with the connection's other answers. The request carries the
//! peer-fill mark and goes to the owner's node itself, never to a distributor, so it is
//! served there: one hop, however the placements disagree. An owner that cannot be
//! reached, is busy beyond the bound, answers a server error, is too slow or fails before
//! its response is whole leaves the request to this node, which serves it as any other:
//! forwarding costs time, never a request.

use crate::forwarder::{Busy, Forwarder};
use crate::hand_on::Elsewhere;
use crate::origin::fields::forwarded;
use crate::origin::{write_relayed, OriginBody, OriginHead, OwnFields, UpstreamBody};
use crate::reply::{Reply, ReplyCtx};
use crate::state::NodeState;
use http1::{RequestHead, Status};

/// Request fields not sent on: those the client connection alone means (`host` goes as
/// the Host of the forwarded request), and those hops write on responses. The cluster's
/// own request fields ([`wire::INTERNAL_FIELDS`]), which a client's would steer the owner
/// by, are gone already: an adopted connection's requests lose them as they are read.
const NOT_FORWARDED: &[&str] = &["host", "via", "x-larder-node", "x-larder-router"];

/// The owner's response goes on as it is, its `Age` and `X-Larder-Cache` included: this
/// node writes only the fields every relayed response gets.
const OWNER_FIELDS_KEPT: OwnFields<'static> = OwnFields { dropped: &[], added: &[] };

/// A forwarded request's answer, written; `busy` lives until its body is sent.
pub struct Forwarded {
    pub reply: Reply,
    pub busy: Busy,
}

/// Answer the GET `req` with the response of the node `to` names, into `out`; `None`
/// (nothing written) when this node is to serve it instead.
pub async fn forward(
    node: &NodeState,
    req: &RequestHead,
    to: &dyn Elsewhere,
    out: &mut Vec<u8>,
) -> Option<Forwarded> {
    let forwarder = &node.forwarder;
    let busy = forwarder.take(to.node())?;
    let client = busy.client();
    let mut fields = forwarded(req, NOT_FORWARDED);
    fields.push(wire::PEER_FILL_FIELD);
    // The target the owner is asked for, so its holdings name it as a relayed one would.
    let mut hint = Vec::new();
    if let Some(h) = to.hint() {
        h.write_value(&mut hint);
        fields.push((wire::TARGET_HINT_HEADER, &hint));
    }
    let got = client.get(&req.target, req.header("host"), &fields).await;
    let whole = match got {
        Ok((head, body)) if head.status < 500 => match Status::new(head.status) {
            Some(status) => read_small(head, body, forwarder.max_buffered_bytes())
                .await
                .map(|(head, body)| (status, head, body)),
            None => None,
        },
        _ => None,
    };
    let Some((status, head, body)) = whole else {
        Forwarder::count(&forwarder.failures);
        return None;
    };
    Forwarder::count(&forwarder.forwarded);
    let ctx = ReplyCtx {
        version: req.version,
        keep_alive: req.keep_alive() && !node.is_shutting_down(),
        head_only: false,
        hint: None,
    };
    let reply = write_relayed(node, &ctx, (status, &head.fields), body, &OWNER_FIELDS_KEPT, out);
    Some(Forwarded { reply, busy })
}

/// The head and the body: read whole when it is declared no longer than `max`; `None`
/// when the owner failed before the end of it.
async fn read_small(
    head: OriginHead,
    mut body: OriginBody,
    max: u64,
) -> Option<(OriginHead, UpstreamBody)> {
    match body.declared_len() {
        Some(n) if n <= max => {
            let mut whole = Vec::with_capacity(n as usize);
            while let Some(piece) = body.next().await.ok()? {
                whole.extend_from_slice(&piece);
            }
            Some((head, UpstreamBody::Whole(whole)))
        }
        _ => Some((head, UpstreamBody::Streamed(Vec::new(), body))),
    }
}

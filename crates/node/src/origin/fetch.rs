//! One fetch from the origin for one request target: conditional when a stale copy has
//! validators, the 304 folded into the stored copy, a cacheable body of known length filled
//! into the cache while relayed (`filling.rs`), any other body read whole when it fits the
//! cache (and stored when the rules allow), or handed over for relaying when it does not.
//! What other requests for the same target may share of it is the [`Outcome`]; what only
//! the fetching request may use is its [`Own`] answer.

use super::body::OriginBody;
use super::client::OriginHead;
use super::conn::OriginCounters;
use super::fields::{end_to_end, update, Field};
use super::filling::Filling;
use super::freshness::{decide, Exchange, Freshness};
use super::store::Stored;
use super::upstream::Upstream;
use super::vary::{names, secondary_key};
use http1::{RequestHead, Status};
use std::rc::Rc;
use std::sync::Arc;
use std::time::SystemTime;

/// How a response came to be, sent to the client as `X-Larder-Cache`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum How {
    /// Fresh from the cache.
    Hit,
    /// Fetched from the origin (and stored).
    Miss,
    /// Stale, confirmed by the origin with 304.
    Revalidated,
    /// Stale, served because the origin failed.
    Stale,
    /// From the origin, not stored (not cacheable, or too large).
    Pass,
}

impl How {
    pub fn as_bytes(self) -> &'static [u8] {
        match self {
            How::Hit => b"HIT",
            How::Miss => b"MISS",
            How::Revalidated => b"REVALIDATED",
            How::Stale => b"STALE",
            How::Pass => b"PASS",
        }
    }
}

/// What every request waiting on one fetch may use.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// A stored response: every waiter whose request it matches (`Vary`) is answered with it.
    Shared(Arc<Stored>, How),
    /// A cacheable response whose body is arriving: every waiter it matches relays it.
    Filling(Rc<Filling>),
    /// Not shareable (not cacheable, or relayed uncached): each waiter fetches on its own.
    Pass,
    /// The origin failed: each waiter serves its stale copy if allowed, else this error.
    Failed(Status, Arc<str>),
}

/// An answer only the fetching request may use.
#[derive(Debug)]
pub enum Own {
    /// A complete response that must not be stored or shared.
    Whole(Arc<Stored>),
    /// A response relayed as it arrives: head, bytes already read, the rest.
    Stream(OriginHead, Vec<u8>, OriginBody),
}

/// Request fields never forwarded: the origin gets the framing, host and conditions of
/// the cache's own request, not the client's.
const NOT_FORWARDED: &[&str] = &[
    "host",
    "content-length",
    "transfer-encoding",
    "expect",
    "range",
    "if-range",
    "if-match",
    "if-none-match",
    "if-modified-since",
    "if-unmodified-since",
    "via",
];

/// Fetch `target` for `req`; `stale` is the stored copy that may be revalidated.
pub async fn fetch(
    up: &Upstream,
    max_cached: u64,
    req: &RequestHead,
    target: &str,
    stale: Option<Arc<Stored>>,
) -> (Outcome, Option<Own>) {
    let req_fields: Vec<Field> =
        req.headers.iter().map(|h| (h.name.clone(), h.value.clone())).collect();
    let mut fields: Vec<(&str, &[u8])> = req
        .headers
        .iter()
        .filter(|h| {
            !NOT_FORWARDED.iter().any(|n| n.eq_ignore_ascii_case(&h.name))
                && !super::fields::is_hop_by_hop(&req_fields, &h.name)
        })
        .map(|h| (h.name.as_str(), h.value.as_slice()))
        .collect();
    if let Some(s) = &stale {
        fields.extend(s.etag().map(|v| ("If-None-Match", v)));
        fields.extend(s.last_modified().map(|v| ("If-Modified-Since", v)));
    }
    let request_time = SystemTime::now();
    let (head, mut body) = match up.client.get(target, &fields).await {
        Ok(r) => r,
        Err(e) => return (Outcome::Failed(e.status(), e.to_string().into()), None),
    };
    let response_time = SystemTime::now();
    let kept = end_to_end(&head.fields);
    let exchange = |status, fields| Exchange {
        status,
        fields,
        authorized: req.header("authorization").is_some(),
        request_time,
        response_time,
    };
    let defaults = up.config.defaults;
    if let (304, Some(s)) = (head.status, &stale) {
        let merged = update(&s.fields, &kept);
        let decision = decide(&exchange(s.status, &merged), defaults);
        let refreshed = Arc::new(Stored {
            status: s.status,
            freshness: decision.unwrap_or(Freshness::none(response_time)),
            fields: merged,
            body: Arc::clone(&s.body),
            vary: s.vary.clone(),
            vary_key: s.vary_key.clone(),
        });
        if decision.is_err() {
            up.store.remove(target, s);
            return (Outcome::Pass, Some(Own::Whole(refreshed)));
        }
        up.store.put(target, Arc::clone(&refreshed));
        return (Outcome::Shared(refreshed, How::Revalidated), None);
    }
    let server_error = matches!(head.status, 500 | 502 | 503 | 504);
    if server_error && stale.as_ref().is_some_and(|s| s.freshness.usable_on_error(response_time)) {
        OriginCounters::add(&up.client.counters().errors, 1);
        let why = format!("origin answered {}", head.status);
        return (Outcome::Failed(Status::BAD_GATEWAY, why.into()), None);
    }
    let decision = decide(&exchange(head.status, &kept), defaults);
    let declared = body.declared_len();
    if declared.is_some_and(|n| n > max_cached) {
        return (Outcome::Pass, Some(Own::Stream(head, Vec::new(), body)));
    }
    if let (Ok(freshness), Some(len @ 1..)) = (decision, declared) {
        // Cacheable and of known length: every request for it relays the body as it
        // arrives, while it fills the cache.
        let vary = names(&kept);
        let meta = Arc::new(Stored {
            status: head.status,
            freshness,
            vary_key: secondary_key(&vary, req),
            vary,
            fields: kept,
            body: Arc::from(&[][..]),
        });
        return (
            Outcome::Filling(Filling::start(&up.store, &up.fills, target, meta, len, body)),
            None,
        );
    }
    let mut data = Vec::new();
    loop {
        match body.next().await {
            Ok(Some(piece)) => {
                data.extend_from_slice(&piece);
                if data.len() as u64 > max_cached {
                    return (Outcome::Pass, Some(Own::Stream(head, data, body)));
                }
            }
            Ok(None) => break,
            Err(e) => return (Outcome::Failed(e.status(), e.to_string().into()), None),
        }
    }
    let vary = names(&kept);
    let stored = Arc::new(Stored {
        status: head.status,
        freshness: decision.unwrap_or(Freshness::none(response_time)),
        vary_key: secondary_key(&vary, req),
        vary,
        fields: kept,
        body: data.into(),
    });
    if decision.is_err() {
        if let Some(s) = &stale {
            up.store.remove(target, s);
        }
        return (Outcome::Pass, Some(Own::Whole(stored)));
    }
    up.store.put(target, Arc::clone(&stored));
    (Outcome::Shared(stored, How::Miss), None)
}

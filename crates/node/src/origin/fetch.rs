//! One fetch from the origin for one request target: conditional when a stale copy has
//! validators, the 304 folded into the stored copy, a cacheable body of known length filled
//! into the cache while relayed (`filling.rs`), any other body read whole when it fits the
//! cache (and stored when the rules allow), or handed over for relaying when it does not.
//! What other requests for the same target may share of it is the [`Outcome`]; what only
//! the fetching request may use is its [`Own`] answer, which alone carries the cookies the
//! origin set (`Set-Cookie` is never stored, or stored without the cookies).

use super::body::OriginBody;
use super::client::{OriginClient, OriginHead};
use super::config::SetCookie;
use super::conn::OriginCounters;
use super::cookies::split_off_cookies;
use super::fields::{end_to_end, forwarded, update, Field};
use super::filling::Filling;
use super::freshness::{decide, Exchange, Freshness, NotStorable};
use super::resume::Resume;
use super::site;
use super::slice_spec::SliceSpec;
use super::slicing;
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
    /// Stale, served at once within its grace (`stale-while-revalidate`) while it is
    /// refreshed in the background.
    Grace,
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
            How::Grace => b"GRACE",
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
    /// A large object stored as slices: its head and slicing; every waiter it matches
    /// streams the slices.
    Sliced(Arc<Stored>, Arc<SliceSpec>),
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
    Stream(OriginHead, Vec<u8>, Box<OriginBody>),
}

/// What one fetch yields.
#[derive(Debug)]
pub struct Fetched {
    /// What every request waiting on the fetch may use.
    pub outcome: Outcome,
    /// What only the fetching request may use, instead of the outcome.
    pub own: Option<Own>,
    /// Cookies the origin set, for the fetching request alone, added to the outcome: the
    /// response was stored without them ([`SetCookie::StoreWithout`]).
    pub cookies: Vec<Field>,
    /// The interim responses (103 Early Hints, …) that came first, for the fetching
    /// request alone, as written to a client ([`OriginHead::interim`]).
    pub interim: Vec<u8>,
}

impl Fetched {
    fn shared(outcome: Outcome) -> Fetched {
        Fetched { outcome, own: None, cookies: Vec::new(), interim: Vec::new() }
    }

    fn own(own: Own) -> Fetched {
        Fetched { outcome: Outcome::Pass, own: Some(own), cookies: Vec::new(), interim: Vec::new() }
    }
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
    "x-larder-peer",
    "x-larder-peer-fill",
];

/// Fetch the target of `req`, stored under `target` (its key: `site.rs`), from `peer`
/// when one is given and answers, else from the origin; `stale` is the stored copy that
/// may be revalidated.
pub async fn fetch(
    up: &Upstream,
    max_cached: u64,
    req: &RequestHead,
    target: &str,
    (stale, peer): (Option<Arc<Stored>>, Option<&OriginClient>),
) -> Fetched {
    let mut fields = forwarded(req, NOT_FORWARDED);
    if let Some(s) = &stale {
        fields.extend(s.etag().map(|v| ("If-None-Match", v)));
        fields.extend(s.last_modified().map(|v| ("If-Modified-Since", v)));
    }
    let request_time = SystemTime::now();
    let host = site::host_to_send(up.config.host, req);
    let from_peer = match peer {
        Some(p) => up.peers.get(p, target, (&req.target, host), &fields).await,
        None => None,
    };
    let (mut head, body, resume) = match from_peer {
        Some((head, body)) => {
            let len = body.declared_len().unwrap_or(0);
            let client = Rc::clone(&up.client);
            let resume = Resume::new(client, (&req.target, host), &head.fields, len);
            (head, body, resume)
        }
        None => match up.client.get(&req.target, host, &fields).await {
            Ok((head, body)) => (head, body, None),
            Err(e) => return Fetched::shared(Outcome::Failed(e.status(), e.to_string().into())),
        },
    };
    let interim = std::mem::take(&mut head.interim);
    let fetched =
        answer(up, max_cached, req, target, stale, (request_time, head, (body, resume))).await;
    Fetched { interim, ..fetched }
}

/// What the origin's answer `head` and `body` to the request for `target` (sent at
/// `request_time`) yields: stored, filling, or the fetching request's own.
async fn answer(
    up: &Upstream,
    max_cached: u64,
    req: &RequestHead,
    target: &str,
    stale: Option<Arc<Stored>>,
    (request_time, head, (mut body, resume)): (
        SystemTime,
        OriginHead,
        (OriginBody, Option<Resume>),
    ),
) -> Fetched {
    let response_time = SystemTime::now();
    let (kept, cookies) = match up.config.set_cookie {
        SetCookie::StoreWithout => split_off_cookies(end_to_end(&head.fields)),
        SetCookie::NeverStore => (end_to_end(&head.fields), Vec::new()),
    };
    // The fields of a response only the fetching client gets: the shared ones and its cookies.
    let mine =
        |fields: &[Field]| -> Vec<Field> { fields.iter().chain(&cookies).cloned().collect() };
    let with_cookies =
        |outcome| Fetched { outcome, own: None, cookies: cookies.clone(), interim: Vec::new() };
    // A response not shareable by what it says sends later requests straight to the origin.
    let note = |decision: &Result<Freshness, NotStorable>| match decision {
        Ok(_) => up.hit_for_miss.clear(target),
        Err(why) if why.said_by_response() => up.hit_for_miss.mark(target, response_time),
        Err(_) => {}
    };
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
        note(&decision);
        let refreshed = |fields| {
            Arc::new(Stored {
                status: s.status,
                freshness: decision.unwrap_or(Freshness::none(response_time)),
                fields,
                body: Arc::clone(&s.body),
                vary: s.vary.clone(),
                vary_key: s.vary_key.clone(),
            })
        };
        if decision.is_err() {
            up.store.remove(target, s);
            return Fetched::own(Own::Whole(refreshed(mine(&merged))));
        }
        let shared = refreshed(merged);
        up.store.put(target, Arc::clone(&shared));
        return with_cookies(Outcome::Shared(shared, How::Revalidated));
    }
    let server_error = matches!(head.status, 500 | 502 | 503 | 504);
    if server_error && stale.as_ref().is_some_and(|s| s.freshness.usable_on_error(response_time)) {
        OriginCounters::add(&up.client.counters().errors, 1);
        let why = format!("origin answered {}", head.status);
        return Fetched::shared(Outcome::Failed(Status::BAD_GATEWAY, why.into()));
    }
    let decision = decide(&exchange(head.status, &kept), defaults);
    note(&decision);
    let declared = body.declared_len();
    if let Some(len) = declared.filter(|&n| n > max_cached) {
        // Too large to store whole: stored as slices when it can be, else relayed.
        let host = site::host_to_send(up.config.host, req);
        let spec = match &decision {
            Ok(_) => slicing::spec_for(up, (target, &req.target, host), &head, &kept, len),
            Err(_) => None,
        };
        let (Some(spec), Ok(freshness)) = (spec, decision) else {
            return Fetched::own(Own::Stream(head, Vec::new(), Box::new(body)));
        };
        let from_origin = resume.is_none();
        let (meta, spec) = slicing::start(up, spec, (kept, freshness), body, from_origin).await;
        return with_cookies(Outcome::Sliced(meta, spec));
    }
    let vary = names(&kept);
    let vary_key = secondary_key(&vary, req);
    if let (Ok(freshness), Some(len @ 1..)) = (decision, declared) {
        // Cacheable and of known length: every request for it relays the body as it
        // arrives, while it fills the cache.
        let meta = Arc::new(Stored {
            status: head.status,
            freshness,
            vary_key,
            vary,
            fields: kept,
            body: Arc::from(&[][..]),
        });
        let fill = Filling::start(&up.store, &up.fills, target, meta, len, (body, resume));
        return with_cookies(Outcome::Filling(fill));
    }
    let mut data = Vec::new();
    loop {
        match body.next().await {
            Ok(Some(piece)) => {
                data.extend_from_slice(&piece);
                if data.len() as u64 > max_cached {
                    return Fetched::own(Own::Stream(head, data, Box::new(body)));
                }
            }
            Ok(None) => break,
            Err(e) => return Fetched::shared(Outcome::Failed(e.status(), e.to_string().into())),
        }
    }
    let Ok(freshness) = decision else {
        if let Some(s) = &stale {
            up.store.remove(target, s);
        }
        let fields = mine(&kept);
        let freshness = Freshness::none(response_time);
        let own =
            Stored { status: head.status, freshness, vary_key, vary, fields, body: data.into() };
        return Fetched::own(Own::Whole(Arc::new(own)));
    };
    let stored = Arc::new(Stored {
        status: head.status,
        freshness,
        vary_key,
        vary,
        fields: kept,
        body: data.into(),
    });
    up.store.put(target, Arc::clone(&stored));
    with_cookies(Outcome::Shared(stored, How::Miss))
}

//! Whether a shared cache may store an origin response, and for how long it is fresh
//! (RFC 9111 §3 and §4.2). Pure: every time is passed in, so the rules are tested without
//! a clock.
//!
//! What larder does, where the RFC leaves a choice:
//! - Only responses to GET are stored (the node always fetches with GET).
//! - Stored without explicit freshness: the statuses RFC 9110 §15.1 calls heuristically
//!   cacheable (200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501), fresh for the
//!   configured default TTL instead of a heuristic. Any other final status except 206 and
//!   304 is stored only with `max-age`, `s-maxage`, `Expires` or `public`.
//! - `no-store` and `private` (with or without field names) are never stored; neither is
//!   an answer to a request with `Authorization` unless `public`, `s-maxage` or
//!   `must-revalidate` allow it (§3.5); nor one with `Vary: *`; nor one that sets a cookie
//!   (`Set-Cookie`: the caller removes the cookies first when the operator chose to store
//!   such responses without them).
//! - `no-cache` is stored but revalidated before every use, and never stands in for an
//!   origin error. `must-revalidate`,
//!   `proxy-revalidate` and `s-maxage` forbid serving stale, even on an origin error (the
//!   client then gets 504, as §5.2.2.2 asks).
//! - `Larder-Cache-Control` or else `CDN-Cache-Control` (RFC 9213), when present and a valid
//!   Structured Field Dictionary, replace `Cache-Control` and `Expires` (unless turned off).
//! - A stale response stands in for an origin error (unreachable, timeout, 500, 502, 503,
//!   504) for `stale-if-error` seconds past expiry: the response's directive (RFC 5861)
//!   when it has one, the configured default otherwise.
//! - A stale response is served while it is refreshed in the background for
//!   `stale-while-revalidate` seconds past expiry (RFC 5861): the response's directive, else
//!   the configured default grace. `no-cache`, `must-revalidate`, `proxy-revalidate` and
//!   `s-maxage` forbid it, as they forbid serving stale on an error.

use super::cache_control::Directives;
use super::cookies::sets_cookie;
use super::fields::{first, values, Field};
use http1::parse_http_date;
use std::time::{Duration, SystemTime};

/// Statuses that may be stored without explicit freshness information.
const HEURISTIC: &[u16] = &[200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501];

/// The facts about one exchange with the origin that storability depends on.
#[derive(Clone, Copy, Debug)]
pub struct Exchange<'a> {
    pub status: u16,
    /// The response's header fields.
    pub fields: &'a [Field],
    /// The request carried `Authorization`.
    pub authorized: bool,
    /// When the request was sent and when the response head arrived.
    pub request_time: SystemTime,
    pub response_time: SystemTime,
}

/// The defaults for responses that do not say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Defaults {
    /// Freshness of a response without `max-age`, `s-maxage` or `Expires` (and without a
    /// `Last-Modified` the heuristic can use). Zero means only explicit freshness, which
    /// turns the heuristic off too, as Varnish's `default_ttl=0` and nginx without
    /// `proxy_cache_valid` store nothing on a `Last-Modified` alone.
    pub ttl: Duration,
    /// RFC 9111 §4.2.2: a response with `Last-Modified` and no explicit freshness is fresh
    /// for this percentage of its age at `Date` (10% is the RFC's example) ...
    pub heuristic_percent: u32,
    /// ... but no longer than this, so a file untouched for years is still rechecked.
    pub heuristic_max: Duration,
    /// How long past expiry a stale response may stand in for an origin error.
    pub stale_if_error: Duration,
    /// Honour the targeted fields of RFC 9213, `Larder-Cache-Control` then
    /// `CDN-Cache-Control`: the first present and valid one replaces `Cache-Control` and
    /// `Expires` for this cache, so an origin can give its CDN a policy other than the
    /// browsers' (which still get `Cache-Control` as sent).
    pub targeted: bool,
    /// How long past expiry a stale response may be served while it is refreshed (grace).
    pub stale_while_revalidate: Duration,
}

/// The targeted fields (RFC 9213) this cache obeys, the more specific first.
pub const TARGETED: &[&str] = &["larder-cache-control", "cdn-cache-control"];

/// Why a response is not stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotStorable {
    Status,
    NoStore,
    Private,
    Authorization,
    VaryAny,
    SetCookie,
}

impl NotStorable {
    /// Whether the reason lies in the response alone, so the next response for the target
    /// will most likely not be shareable either (not the status, which an origin error
    /// can cause, nor this request's `Authorization`).
    pub fn said_by_response(self) -> bool {
        use NotStorable::*;
        matches!(self, NoStore | Private | VaryAny | SetCookie)
    }
}

/// How long a stored response stays fresh and what may be done once it is stale.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Freshness {
    /// Freshness lifetime (§4.2.1).
    pub lifetime: Duration,
    /// The corrected initial age (§4.2.3): how old the response already was on arrival.
    pub initial_age: Duration,
    pub response_time: SystemTime,
    /// Revalidate before every use (`no-cache`).
    pub no_cache: bool,
    /// Never serve stale (`must-revalidate`, `proxy-revalidate`, `s-maxage`).
    pub must_revalidate: bool,
    pub stale_if_error: Duration,
    /// How long past expiry it may be served while a refresh is under way (RFC 5861).
    pub stale_while_revalidate: Duration,
}

impl Freshness {
    /// The freshness of a response that is not stored: stale at once, never a stand-in.
    pub fn none(response_time: SystemTime) -> Freshness {
        Freshness {
            lifetime: Duration::ZERO,
            initial_age: Duration::ZERO,
            response_time,
            no_cache: true,
            must_revalidate: true,
            stale_if_error: Duration::ZERO,
            stale_while_revalidate: Duration::ZERO,
        }
    }

    /// The current age (§4.2.3) at `now`.
    pub fn age(&self, now: SystemTime) -> Duration {
        self.initial_age + now.duration_since(self.response_time).unwrap_or_default()
    }

    /// Whether the response may be served at `now` without asking the origin.
    pub fn is_fresh(&self, now: SystemTime) -> bool {
        !self.no_cache && self.age(now) < self.lifetime
    }

    /// Whether the (stale) response may stand in for an origin error at `now`: never for
    /// `no-cache`, which allows a use only after a successful validation (§4.2.4).
    pub fn usable_on_error(&self, now: SystemTime) -> bool {
        !self.must_revalidate
            && !self.no_cache
            && self.age(now) < self.lifetime + self.stale_if_error
    }

    /// Whether the (stale) response may be served at `now` while it is refreshed.
    pub fn usable_while_revalidating(&self, now: SystemTime) -> bool {
        !self.no_cache
            && !self.must_revalidate
            && self.age(now) < self.lifetime + self.stale_while_revalidate
    }
}

/// Decide whether the response of `x` may be stored and, if so, its freshness.
pub fn decide(x: &Exchange<'_>, defaults: Defaults) -> Result<Freshness, NotStorable> {
    let targeted = TARGETED
        .iter()
        .filter(|_| defaults.targeted)
        .filter(|name| first(x.fields, name).is_some())
        .find_map(|name| Directives::targeted(values(x.fields, name)));
    let cc = targeted.unwrap_or_else(|| Directives::parse(values(x.fields, "cache-control")));
    if cc.no_store {
        return Err(NotStorable::NoStore);
    }
    if cc.private {
        return Err(NotStorable::Private);
    }
    if sets_cookie(x.fields) {
        return Err(NotStorable::SetCookie);
    }
    if x.authorized && !(cc.public || cc.s_maxage.is_some() || cc.must_revalidate) {
        return Err(NotStorable::Authorization);
    }
    if values(x.fields, "vary")
        .flat_map(|v| v.split(|&b| b == b','))
        .any(|t| t.trim_ascii() == b"*")
    {
        return Err(NotStorable::VaryAny);
    }
    let date = date_field(x.fields, "date");
    let expires = first(x.fields, "expires")
        .filter(|_| targeted.is_none())
        .map(|v| http_date(v).unwrap_or(SystemTime::UNIX_EPOCH));
    let explicit = cc.s_maxage.or(cc.max_age).map(Duration::from_secs).or_else(|| {
        // §5.3: an invalid Expires means "already expired"; without Date, compare with
        // the time the response arrived.
        expires.map(|e| e.duration_since(date.unwrap_or(x.response_time)).unwrap_or_default())
    });
    let final_status = (200..=999).contains(&x.status);
    let storable_status = final_status
        && x.status != 206
        && x.status != 304
        && (explicit.is_some() || cc.public || HEURISTIC.contains(&x.status));
    if !storable_status {
        return Err(NotStorable::Status);
    }
    Ok(Freshness {
        lifetime: explicit.unwrap_or_else(|| heuristic(x, date, defaults).unwrap_or(defaults.ttl)),
        initial_age: initial_age(x, date),
        response_time: x.response_time,
        no_cache: cc.no_cache,
        must_revalidate: cc.must_revalidate || cc.proxy_revalidate || cc.s_maxage.is_some(),
        stale_if_error: cc.stale_if_error.map_or(defaults.stale_if_error, Duration::from_secs),
        stale_while_revalidate: cc
            .stale_while_revalidate
            .map_or(defaults.stale_while_revalidate, Duration::from_secs),
    })
}

/// §4.2.2: a fraction of the time since `Last-Modified` (at `Date`, else at arrival),
/// capped; `None` when the response has no usable `Last-Modified` or the heuristic is off.
fn heuristic(x: &Exchange<'_>, date: Option<SystemTime>, d: Defaults) -> Option<Duration> {
    if d.ttl.is_zero() || d.heuristic_percent == 0 {
        return None;
    }
    let modified = date_field(x.fields, "last-modified")?;
    let unchanged = date.unwrap_or(x.response_time).duration_since(modified).ok()?;
    Some((unchanged * d.heuristic_percent / 100).min(d.heuristic_max))
}

/// §4.2.3: the larger of the apparent age (Date against arrival) and the `Age` field
/// plus the time the exchange took.
fn initial_age(x: &Exchange<'_>, date: Option<SystemTime>) -> Duration {
    let apparent = date.and_then(|d| x.response_time.duration_since(d).ok()).unwrap_or_default();
    let age_value = age_value(x.fields);
    let delay = x.response_time.duration_since(x.request_time).unwrap_or_default();
    apparent.max(age_value + delay)
}

/// The `Age` field's value (RFC 9111 §5.1), as the HTTP cache-tests suite reads it: the
/// first item of the first field line (`Age: 7200, 0` is old, `Age: 0, 7200` is not:
/// a list is not valid there, and the first value is the one an upstream cache wrote);
/// an item that is not a delta-seconds (negative, fractional, text) is ignored, and a
/// value too large to hold is 2^31 s, which no freshness lifetime outlasts.
fn age_value(fields: &[Field]) -> Duration {
    let item = first(fields, "age").and_then(|v| v.split(|&b| b == b',').next());
    match item.map(<[u8]>::trim_ascii) {
        Some(d) if !d.is_empty() && d.iter().all(u8::is_ascii_digit) => {
            let secs = std::str::from_utf8(d).ok().and_then(|t| t.parse::<u64>().ok());
            Duration::from_secs(secs.unwrap_or(u64::MAX).min(1 << 31))
        }
        _ => Duration::ZERO,
    }
}

fn http_date(v: &[u8]) -> Option<SystemTime> {
    parse_http_date(std::str::from_utf8(v).ok()?.trim()).ok()
}

fn date_field(fields: &[Field], name: &str) -> Option<SystemTime> {
    first(fields, name).and_then(http_date)
}

#[cfg(test)]
mod tests {
    use super::*;
    use http1::format_http_date;

    const D: Defaults = Defaults {
        ttl: Duration::from_secs(100),
        stale_if_error: Duration::from_secs(50),
        targeted: true,
        heuristic_percent: 10,
        heuristic_max: Duration::from_secs(3000),
        stale_while_revalidate: Duration::from_secs(20),
    };

    fn at(secs: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000 + secs)
    }

    fn fields(pairs: &[(&str, String)]) -> Vec<Field> {
        pairs.iter().map(|(n, v)| (n.to_string(), v.clone().into_bytes())).collect()
    }

    fn decide_at(status: u16, pairs: &[(&str, String)]) -> Result<Freshness, NotStorable> {
        decide_with(D, status, pairs)
    }

    /// The decision on a response with these fields, exchanged at once at `at(0)`.
    fn decide_with(
        d: Defaults,
        status: u16,
        pairs: &[(&str, String)],
    ) -> Result<Freshness, NotStorable> {
        let f = fields(pairs);
        let x = Exchange {
            status,
            fields: &f,
            authorized: false,
            request_time: at(0),
            response_time: at(0),
        };
        decide(&x, d)
    }

    /// The freshness lifetime, in seconds, of a stored 200 with these fields under `d`.
    fn lifetime_with(d: Defaults, pairs: &[(&str, String)]) -> u64 {
        decide_with(d, 200, pairs).unwrap().lifetime.as_secs()
    }

    fn cc(v: &str) -> (&'static str, String) {
        ("Cache-Control", v.to_string())
    }

    #[test]
    fn max_age_and_s_maxage() {
        let f = decide_at(200, &[cc("max-age=10")]).unwrap();
        assert!(f.is_fresh(at(9)) && !f.is_fresh(at(10)));
        assert!(!f.must_revalidate);
        let f = decide_at(200, &[cc("max-age=10, s-maxage=20")]).unwrap();
        assert_eq!(f.lifetime, Duration::from_secs(20));
        assert!(f.must_revalidate, "s-maxage implies proxy-revalidate");
    }

    #[test]
    fn default_ttl_only_for_heuristic_statuses() {
        assert_eq!(decide_at(200, &[]).unwrap().lifetime, D.ttl);
        assert_eq!(decide_at(404, &[]).unwrap().lifetime, D.ttl);
        assert_eq!(decide_at(302, &[]), Err(NotStorable::Status));
        assert_eq!(decide_at(302, &[cc("max-age=5")]).unwrap().lifetime.as_secs(), 5);
        assert_eq!(decide_at(206, &[cc("max-age=5")]), Err(NotStorable::Status));
        assert_eq!(decide_at(500, &[]), Err(NotStorable::Status));
    }

    #[test]
    fn never_stored() {
        assert_eq!(decide_at(200, &[cc("no-store, max-age=60")]), Err(NotStorable::NoStore));
        assert_eq!(decide_at(200, &[cc("private=\"x\"")]), Err(NotStorable::Private));
        let vary = ("Vary", "Accept, *".to_string());
        assert_eq!(decide_at(200, &[vary]), Err(NotStorable::VaryAny));
        let cookie = ("Set-Cookie", "session=1".to_string());
        assert_eq!(
            decide_at(200, &[cc("public, max-age=60"), cookie]),
            Err(NotStorable::SetCookie)
        );
        let f = fields(&[]);
        let mut x = Exchange {
            status: 200,
            fields: &f,
            authorized: true,
            request_time: at(0),
            response_time: at(0),
        };
        assert_eq!(decide(&x, D), Err(NotStorable::Authorization));
        let public = fields(&[cc("public")]);
        x.fields = &public;
        assert!(decide(&x, D).is_ok());
    }

    #[test]
    fn no_cache_is_stored_but_never_fresh() {
        let f = decide_at(200, &[cc("no-cache, max-age=60")]).unwrap();
        assert!(!f.is_fresh(at(0)));
    }

    #[test]
    fn expires_against_date_and_invalid_expires() {
        let date = ("Date", format_http_date(at(0)));
        let f = decide_at(200, &[date.clone(), ("Expires", format_http_date(at(30)))]).unwrap();
        assert_eq!(f.lifetime, Duration::from_secs(30));
        let f = decide_at(200, &[date.clone(), ("Expires", "0".into())]).unwrap();
        assert_eq!(f.lifetime, Duration::ZERO, "an invalid Expires is already expired");
        let f = decide_at(200, &[cc("max-age=5"), ("Expires", format_http_date(at(30)))]);
        assert_eq!(f.unwrap().lifetime, Duration::from_secs(5), "max-age wins over Expires");
    }

    #[test]
    fn age_counts_against_lifetime() {
        let f = decide_at(200, &[cc("max-age=10"), ("Age", "7".into())]).unwrap();
        assert_eq!(f.age(at(0)), Duration::from_secs(7));
        assert!(f.is_fresh(at(2)) && !f.is_fresh(at(3)));
        // A Date in the past makes it older too (apparent age), and a slow exchange adds
        // its delay to Age.
        let old = ("Date", format_http_date(at(0) - Duration::from_secs(4)));
        assert_eq!(decide_at(200, &[cc("max-age=10"), old]).unwrap().age(at(0)).as_secs(), 4);
        let f = fields(&[("Age", "3".into())]);
        let x = Exchange {
            status: 200,
            fields: &f,
            authorized: false,
            request_time: at(0),
            response_time: at(2),
        };
        assert_eq!(decide(&x, D).unwrap().initial_age.as_secs(), 5);
    }

    #[test]
    fn age_is_the_first_item_of_the_first_line() {
        let secs = |lines: &[&str]| {
            let pairs: Vec<_> = lines.iter().map(|l| ("Age", l.to_string())).collect();
            age_value(&fields(&pairs)).as_secs()
        };
        assert_eq!(secs(&["7200, 0"]), 7200);
        assert_eq!(secs(&["0, 7200"]), 0);
        assert_eq!(secs(&["7200", "0"]), 7200);
        assert_eq!(secs(&["0", "7200"]), 0);
        assert_eq!(secs(&[" 30 "]), 30);
        for ignored in ["abc", "-7200", "7200.0", ""] {
            assert_eq!(secs(&[ignored]), 0, "{ignored}");
        }
        for huge in ["2147483647", "2147483648", "99999999999999999999999"] {
            assert!(secs(&[huge]) >= 2147483647, "{huge}");
        }
        assert_eq!(secs(&[]), 0);
    }

    #[test]
    fn targeted_fields_replace_cache_control_and_expires() {
        let cdn = |v: &str| ("CDN-Cache-Control", v.to_string());
        let lifetime =
            |pairs: &[(&str, String)]| decide_at(200, pairs).map(|f| f.lifetime.as_secs());
        assert_eq!(lifetime(&[cc("max-age=3600"), cdn("max-age=1")]), Ok(1));
        assert_eq!(lifetime(&[cc("no-store"), cdn("max-age=10000")]), Ok(10000));
        let past = ("Expires", format_http_date(at(0) - Duration::from_secs(10)));
        assert_eq!(lifetime(&[past, cdn("max-age=60")]), Ok(60), "Expires ignored");
        assert_eq!(lifetime(&[cc("max-age=60"), cdn("no-store")]), Err(NotStorable::NoStore));
        assert_eq!(lifetime(&[cc("max-age=60"), cdn("private")]), Err(NotStorable::Private));
        assert_eq!(lifetime(&[cc("no-store"), cdn("max-age=9, &&")]), Err(NotStorable::NoStore));
        let larder = ("Larder-Cache-Control", "max-age=7".to_string());
        assert_eq!(lifetime(&[cdn("max-age=60"), larder.clone()]), Ok(7), "the more specific");
        let bad = ("Larder-Cache-Control", "MAX-AGE=7".to_string());
        assert_eq!(lifetime(&[cdn("max-age=60"), bad]), Ok(60), "an invalid one is skipped");
        let off = Defaults { targeted: false, ..D };
        assert_eq!(lifetime_with(off, &[cc("max-age=5"), cdn("max-age=60")]), 5, "turned off");
    }

    #[test]
    fn heuristic_freshness_from_last_modified() {
        let date = ("Date", format_http_date(at(0)));
        let modified =
            |ago: u64| ("Last-Modified", format_http_date(at(0) - Duration::from_secs(ago)));
        let lifetime = lifetime_with;
        assert_eq!(lifetime(D, &[date.clone(), modified(1000)]), 100, "10% of its age");
        assert_eq!(lifetime(D, &[date.clone(), modified(86400)]), 3000, "capped");
        assert_eq!(lifetime(D, &[modified(500)]), 50, "against arrival without Date");
        assert_eq!(
            lifetime(D, std::slice::from_ref(&date)),
            100,
            "no Last-Modified: the default TTL"
        );
        assert_eq!(lifetime(D, &[date.clone(), cc("max-age=7"), modified(1000)]), 7);
        let future = ("Last-Modified", format_http_date(at(60)));
        assert_eq!(lifetime(D, &[date.clone(), future]), 100, "a future Last-Modified");
        let explicit_only = Defaults { ttl: Duration::ZERO, ..D };
        assert_eq!(lifetime(explicit_only, &[date.clone(), modified(1000)]), 0);
        let off = Defaults { heuristic_percent: 0, ..D };
        assert_eq!(lifetime(off, &[date, modified(1000)]), 100);
    }

    #[test]
    fn stale_if_error_window() {
        let f = decide_at(200, &[cc("max-age=10")]).unwrap();
        assert!(f.usable_on_error(at(59)) && !f.usable_on_error(at(60)), "default 50 s");
        let f = decide_at(200, &[cc("max-age=10, stale-if-error=5")]).unwrap();
        assert!(f.usable_on_error(at(14)) && !f.usable_on_error(at(15)));
        let f = decide_at(200, &[cc("max-age=10, must-revalidate")]).unwrap();
        assert!(!f.usable_on_error(at(11)));
        let f = decide_at(200, &[cc("max-age=2, no-cache")]).unwrap();
        assert!(!f.usable_on_error(at(3)), "no-cache is used only once validated");
        assert!(!Freshness::none(at(0)).usable_on_error(at(0)));
    }

    #[test]
    fn stale_while_revalidate_window() {
        let f = decide_at(200, &[cc("max-age=10")]).unwrap();
        assert!(!f.is_fresh(at(10)) && f.usable_while_revalidating(at(10)));
        assert!(f.usable_while_revalidating(at(29)) && !f.usable_while_revalidating(at(30)));
        let f = decide_at(200, &[cc("max-age=0, stale-while-revalidate=600")]).unwrap();
        assert!(!f.is_fresh(at(0)) && f.usable_while_revalidating(at(0)));
        assert!(f.usable_while_revalidating(at(599)) && !f.usable_while_revalidating(at(600)));
        let f = decide_at(200, &[cc("max-age=10, stale-while-revalidate=0")]).unwrap();
        assert!(!f.usable_while_revalidating(at(10)), "the response's own zero wins");
        for forbids in ["no-cache", "must-revalidate", "proxy-revalidate", "s-maxage=10"] {
            let v = format!("max-age=10, stale-while-revalidate=600, {forbids}");
            let f = decide_at(200, &[cc(&v)]).unwrap();
            assert!(!f.usable_while_revalidating(at(11)), "{forbids}");
        }
        assert!(!Freshness::none(at(0)).usable_while_revalidating(at(0)));
    }
}

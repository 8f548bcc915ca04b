//! The request a router sends to the other nodes after an unsafe request (POST, PUT,
//! DELETE, …) for a target succeeded through one node: "drop what you store for this
//! target" (RFC 9111 §4.4 across the cluster). The node that answered invalidated its own
//! copy; the others only hear of it through this.
//!
//! `POST /.larder/invalidate?target=<percent-encoded request target> HTTP/1.1`, no body.
//! The target is the origin-form target exactly as the router forwarded it (the node keys
//! its store by it), every byte outside the unreserved set escaped, so it survives any
//! query it carries. Written and parsed here only.
//!
//! A purge (`PURGE` at the router) uses the same request with two optional parameters
//! after the target: `&mode=soft` (mark stale rather than drop, so stale-if-error can
//! still serve it and the next request revalidates) and `&scope=prefix` (every stored
//! target that starts with it). Without them it is today's exact, hard invalidation, so
//! older routers and nodes keep understanding each other. A third, `&site=<host>`, names
//! the site (the client's `Host`) for nodes that keep one object per site
//! (`--origin-host client`); without it such a node drops the target on every site it
//! holds, and a node that keeps one site ignores it. The node answers 200 with
//! [`InvalidationOutcome`] as its body.

use crate::percent::{push_escaped, units};

/// The path of the invalidation request.
pub const INVALIDATE_PATH: &str = "/.larder/invalidate";
/// Its method: unsafe, so no cache on the way answers it or keeps it.
pub const INVALIDATE_METHOD: &str = "POST";
/// The first query parameter, holding the encoded target.
const PARAM: &str = "target=";
/// The optional parameters after it (non-default values only).
const SOFT: &str = "mode=soft";
const PREFIX: &str = "scope=prefix";
const SITE: &str = "site=";

/// "Drop the stored responses for `target`".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invalidation {
    /// An origin-form request target (`/path?query`), as a node keys its store; with
    /// [`Scope::Prefix`], the start every dropped target shares.
    pub target: String,
    pub mode: Mode,
    pub scope: Scope,
    /// The site (a request's `Host`, as sent) the target is on, for nodes that keep one
    /// object per site; `None`: every site.
    pub site: Option<String>,
}

/// What becomes of a stored response the invalidation names.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// Removed: the next request is a miss.
    #[default]
    Hard,
    /// Kept but stale from now on: the next request revalidates, and an origin error may
    /// still be answered with it (stale-if-error), as a purge should not take a site down.
    Soft,
}

/// Which stored targets the invalidation names.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Scope {
    /// The target exactly (each of its `Vary` variants).
    #[default]
    Exact,
    /// Every stored target that starts with it (`/static/` names `/static/a.css`).
    Prefix,
}

/// A node's answer to an invalidation (the 200 body, one word and a newline).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InvalidationOutcome {
    /// It held something the invalidation named, and dropped (or marked stale) it.
    Dropped,
    /// It held nothing the invalidation named.
    NotHeld,
}

impl InvalidationOutcome {
    /// The body a node answers with.
    pub fn body(self) -> &'static [u8] {
        match self {
            InvalidationOutcome::Dropped => b"dropped\n",
            InvalidationOutcome::NotHeld => b"not held\n",
        }
    }

    /// Read a node's answer: `None` unless a 200 with one of the two bodies.
    pub fn parse(status: u16, body: &[u8]) -> Option<InvalidationOutcome> {
        if status != 200 {
            return None;
        }
        match body.trim_ascii() {
            b"dropped" => Some(InvalidationOutcome::Dropped),
            b"not held" => Some(InvalidationOutcome::NotHeld),
            _ => None,
        }
    }
}

/// Why an invalidation request was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InvalidationError {
    /// Not a POST.
    Method,
    /// No `?target=`, a bad escape, or not an origin-form target.
    Target,
}

impl std::fmt::Display for InvalidationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InvalidationError::Method => write!(f, "an invalidation is a {INVALIDATE_METHOD}"),
            InvalidationError::Target => {
                f.write_str("an invalidation names one origin-form target as ?target=")
            }
        }
    }
}

impl std::error::Error for InvalidationError {}

impl Invalidation {
    /// Today's invalidation: drop exactly `target`.
    pub fn exact(target: impl Into<String>) -> Invalidation {
        Invalidation { target: target.into(), mode: Mode::Hard, scope: Scope::Exact, site: None }
    }

    /// The same invalidation for the site `host` (a request's `Host`, when it had one).
    pub fn on_site(mut self, host: Option<&[u8]>) -> Invalidation {
        self.site = host.and_then(|h| std::str::from_utf8(h.trim_ascii()).ok()).map(String::from);
        self
    }

    /// The request target of the invalidation, `/.larder/invalidate?target=…`.
    pub fn request_target(&self) -> String {
        let mut out = String::with_capacity(INVALIDATE_PATH.len() + 8 + self.target.len() * 3);
        out.push_str(INVALIDATE_PATH);
        out.push('?');
        out.push_str(PARAM);
        push_encoded(&self.target, b"/", &mut out);
        if self.mode == Mode::Soft {
            out.push('&');
            out.push_str(SOFT);
        }
        if self.scope == Scope::Prefix {
            out.push('&');
            out.push_str(PREFIX);
        }
        if let Some(site) = &self.site {
            out.push('&');
            out.push_str(SITE);
            push_encoded(site, b"", &mut out);
        }
        out
    }

    /// The whole request to `host`, closing the connection after it (these are rare and
    /// go to each node on a fresh connection).
    pub fn request(&self, host: &str) -> Vec<u8> {
        let mut out = Vec::with_capacity(128 + self.target.len() * 3);
        for part in [INVALIDATE_METHOD, " ", &self.request_target(), " HTTP/1.1\r\nHost: ", host] {
            out.extend_from_slice(part.as_bytes());
        }
        out.extend_from_slice(b"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        out
    }

    /// Whether a request target is aimed at the invalidation path (whatever its query), so
    /// a router can refuse it from clients and a node can route it.
    pub fn is_invalidation_target(request_target: &str) -> bool {
        // On every request a router relays: a prefix test, not a scan for the query.
        request_target
            .strip_prefix(INVALIDATE_PATH)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('?'))
    }

    /// Read an invalidation request: `None` when it is not aimed at the invalidation
    /// path, an error when it is but is malformed.
    pub fn parse(
        method: &str,
        request_target: &str,
    ) -> Option<Result<Invalidation, InvalidationError>> {
        if !Invalidation::is_invalidation_target(request_target) {
            return None;
        }
        if method != INVALIDATE_METHOD {
            return Some(Err(InvalidationError::Method));
        }
        Some(Invalidation::parse_query(request_target.split_once('?').map(|(_, q)| q)))
    }

    /// Read the query of an invalidation (`target=…&mode=soft&scope=prefix`), as the
    /// router's admin API takes it too.
    pub fn parse_query(query: Option<&str>) -> Result<Invalidation, InvalidationError> {
        let rest = query.and_then(|q| q.strip_prefix(PARAM)).ok_or(InvalidationError::Target)?;
        let mut params = rest.split('&');
        let encoded = params.next().unwrap_or_default();
        let (mut mode, mut scope, mut site) = (Mode::Hard, Scope::Exact, None);
        for param in params {
            match param {
                SOFT => mode = Mode::Soft,
                PREFIX => scope = Scope::Prefix,
                _ => match param.strip_prefix(SITE) {
                    Some(host) if !host.is_empty() => {
                        let host = decode(host)?;
                        if host.bytes().any(|b| b <= b' ' || b == 0x7f || b == b'/') {
                            return Err(InvalidationError::Target);
                        }
                        site = Some(host);
                    }
                    _ => return Err(InvalidationError::Target),
                },
            }
        }
        let target = decode(encoded)?;
        let well_formed =
            target.starts_with('/') && !target.bytes().any(|b| b <= b' ' || b == 0x7f);
        if !well_formed {
            return Err(InvalidationError::Target);
        }
        Ok(Invalidation { target, mode, scope, site })
    }
}

/// Append `text` with every byte escaped but the unreserved ones and those in `also`.
fn push_encoded(text: &str, also: &[u8], out: &mut String) {
    for &b in text.as_bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) || also.contains(&b) {
            out.push(b as char);
        } else {
            push_escaped(b, out);
        }
    }
}

/// A percent-encoded parameter value as UTF-8 text.
fn decode(encoded: &str) -> Result<String, InvalidationError> {
    let mut bytes = Vec::with_capacity(encoded.len());
    for u in units(encoded.as_bytes()) {
        bytes.push(u.map_err(|_| InvalidationError::Target)?.byte);
    }
    String::from_utf8(bytes).map_err(|_| InvalidationError::Target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_any_target() {
        let kinds = [
            (Mode::Hard, Scope::Exact),
            (Mode::Soft, Scope::Exact),
            (Mode::Hard, Scope::Prefix),
            (Mode::Soft, Scope::Prefix),
        ];
        for target in ["/", "/a/b.html", "/s?q=1&r=%2Fx", "/ü?target=/x#f"] {
            for (mode, scope) in kinds {
                for site in [None, Some("shop.example:8080"), Some("[::1]:80")] {
                    let site = site.map(String::from);
                    let inv = Invalidation { target: target.to_string(), mode, scope, site };
                    let rt = inv.request_target();
                    assert_eq!(Invalidation::parse("POST", &rt), Some(Ok(inv.clone())), "{rt}");
                }
            }
            let inv = Invalidation::exact(target);
            let rt = inv.request_target();
            assert!(!rt[INVALIDATE_PATH.len() + 1..].contains(['?', '&', ' ', '#']), "{rt}");
            assert_eq!(Invalidation::parse("POST", &rt), Some(Ok(inv.clone())), "{rt}");
            let req = String::from_utf8(inv.request("n:1")).unwrap();
            assert!(req.starts_with(&format!("POST {rt} HTTP/1.1\r\nHost: n:1\r\n")), "{req}");
            assert!(req.ends_with("Content-Length: 0\r\nConnection: close\r\n\r\n"));
        }
    }

    #[test]
    fn refuses_what_is_not_one() {
        assert_eq!(Invalidation::parse("POST", "/other?target=/a"), None);
        assert_eq!(
            Invalidation::parse("GET", "/.larder/invalidate?target=/a"),
            Some(Err(InvalidationError::Method))
        );
        let bad_ones = [
            "",
            "?x=/a",
            "?target=a",
            "?target=/a%2",
            "?target=/a%0A",
            "?target=%FF",
            "?target=/a&x",
            "?target=/a&site=",
            "?target=/a&site=a%2Fb",
            "?target=/a&site=a%20b",
        ];
        for bad in bad_ones {
            let rt = format!("{INVALIDATE_PATH}{bad}");
            assert_eq!(
                Invalidation::parse("POST", &rt),
                Some(Err(InvalidationError::Target)),
                "{rt}"
            );
        }
        assert!(Invalidation::is_invalidation_target("/.larder/invalidate"));
        assert!(!Invalidation::is_invalidation_target("/.larder/invalidated"));
    }

    #[test]
    fn outcomes_read_back() {
        for o in [InvalidationOutcome::Dropped, InvalidationOutcome::NotHeld] {
            assert_eq!(InvalidationOutcome::parse(200, o.body()), Some(o));
            assert_eq!(InvalidationOutcome::parse(403, o.body()), None);
        }
        assert_eq!(InvalidationOutcome::parse(200, b"ok"), None);
    }
}

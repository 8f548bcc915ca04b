//! Invalidation (RFC 9111 §4.4): a non-error response to an unsafe request drops what the
//! node stores for its target and for the same-origin targets its `Location` and
//! `Content-Location` name; and the endpoint through which a router tells this node that
//! an unsafe request for a target succeeded on another node ([`wire::Invalidation`]).

use super::config::OriginHost;
use super::fields::{first, Field};
use super::site;
use super::upstream::Upstream;
use crate::reply::{error, simple, Reply, ReplyCtx};
use crate::state::NodeState;
use http1::{Method, RequestHead, Status};
use wire::{Invalidation, InvalidationError, InvalidationOutcome, InvalidationScope};

/// Whether a request may change what its target is: any method but the safe ones
/// (RFC 9110 §9.2.1).
pub fn is_unsafe(method: &Method) -> bool {
    !matches!(method, Method::Get | Method::Head | Method::Options | Method::Trace)
}

/// After a response of `status` with `fields` to the unsafe request `req`: drop the
/// stored responses it made outdated. Error responses (4xx, 5xx) change nothing.
pub fn after_unsafe(
    node: &NodeState,
    up: &Upstream,
    req: &RequestHead,
    status: u16,
    fields: &[Field],
) {
    if !is_unsafe(&req.method) || !(200..400).contains(&status) {
        return;
    }
    let host = req.header("host");
    let site = site::host_to_send(up.config.host, req);
    let mut dropped = drop_target(up, &site::key_on(site, &req.target));
    for name in ["location", "content-location"] {
        if let Some(target) = first(fields, name).and_then(|v| same_origin_target(v, host)) {
            dropped |= drop_target(up, &site::key_on(site, &target));
        }
    }
    if dropped {
        node.holdings.borrow_mut().changed();
    }
}

/// Drop the stored responses and the fill under way for `target`.
fn drop_target(up: &Upstream, target: &str) -> bool {
    up.fills.forget(target);
    up.store.invalidate(target)
}

/// The origin-form target a `Location` or `Content-Location` value names when it is on
/// the same origin as the request: a path (`/a`), or an absolute `http(s)` URI whose
/// authority is the request's `Host`. Relative paths and other hosts are left alone (the
/// cache could not tell what they name; RFC 9111 §4.4 forbids the other hosts).
fn same_origin_target(value: &[u8], host: Option<&[u8]>) -> Option<String> {
    let value = std::str::from_utf8(value.trim_ascii()).ok()?;
    let target = if value.starts_with('/') && !value.starts_with("//") {
        value
    } else {
        let lower = value.get(..8)?.to_ascii_lowercase();
        let rest = if lower.starts_with("http://") {
            &value[7..]
        } else if lower.starts_with("https://") {
            &value[8..]
        } else {
            return None;
        };
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, path) = rest.split_at(end);
        if !host.is_some_and(|h| h.trim_ascii().eq_ignore_ascii_case(authority.as_bytes())) {
            return None;
        }
        if path.is_empty() || path.starts_with('#') {
            "/"
        } else {
            path
        }
    };
    let target = target.split('#').next().unwrap_or(target);
    let well_formed = target.starts_with('/') && !target.bytes().any(|b| b <= b' ' || b == 0x7f);
    well_formed.then(|| target.to_string())
}

/// Answer an invalidation request: 200 once the target is dropped (or marked stale, or
/// every target under a prefix), saying whether it was held ([`InvalidationOutcome`];
/// asking twice leaves the same store as asking once), 403 from a peer not trusted to
/// ask, 400 when malformed.
pub fn answer(
    node: &NodeState,
    up: &Upstream,
    parsed: Result<Invalidation, InvalidationError>,
    trusted: bool,
    ctx: &ReplyCtx,
    out: &mut Vec<u8>,
) -> Reply {
    if !trusted {
        return error(node, out, Status::FORBIDDEN, ctx, &[]);
    }
    match parsed {
        Err(InvalidationError::Method) => {
            error(node, out, Status::METHOD_NOT_ALLOWED, ctx, &[("Allow", b"POST")])
        }
        Err(InvalidationError::Target) => error(node, out, Status::BAD_REQUEST, ctx, &[]),
        Ok(mut inv) => {
            // One site: every site name is that site. Several: the named one, or all.
            let every_site = match (up.config.host, inv.site.take()) {
                (OriginHost::Origin, _) => false,
                (OriginHost::Client, Some(host)) => {
                    inv.target = site::key_on(Some(host.as_bytes()), &inv.target).into_owned();
                    false
                }
                (OriginHost::Client, None) => true,
            };
            if inv.scope == InvalidationScope::Exact {
                // A fill under way would store the old response again.
                up.fills.forget_matching(|key| {
                    key == inv.target || (every_site && site::target_of(key) == inv.target)
                });
            }
            let held = up.store.purge(&inv, every_site, std::time::SystemTime::now());
            if held {
                node.holdings.borrow_mut().changed();
            }
            let outcome =
                if held { InvalidationOutcome::Dropped } else { InvalidationOutcome::NotHeld };
            let body = outcome.body();
            let no_store: &[(&str, &[u8])] = &[("Cache-Control", b"no-store")];
            simple(node, out, Status::OK, ctx, "text/plain; charset=utf-8", body, no_store)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_same_origin_locations_are_targets() {
        let t = |v: &str| same_origin_target(v.as_bytes(), Some(b"shop.example:8080"));
        assert_eq!(t("/a/b?c#d").as_deref(), Some("/a/b?c"));
        assert_eq!(t("http://SHOP.example:8080/x").as_deref(), Some("/x"));
        assert_eq!(t("https://shop.example:8080").as_deref(), Some("/"));
        assert_eq!(t("http://other.example/x"), None);
        assert_eq!(t("//shop.example:8080/x"), None);
        assert_eq!(t("relative/x"), None);
        assert_eq!(t("/a b"), None);
        assert_eq!(same_origin_target(b"http://h/x", None), None);
    }

    #[test]
    fn safe_methods_invalidate_nothing() {
        assert!(!is_unsafe(&Method::Get) && !is_unsafe(&Method::Options));
        assert!(is_unsafe(&Method::Post) && is_unsafe(&Method::Delete));
        assert!(is_unsafe(&Method::Other("PURGE".into())));
    }
}

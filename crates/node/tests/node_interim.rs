//! Interim responses through a caching node (RFC 9110 §15.2): an origin's 103 Early Hints
//! and 102 Processing go on to the client whose request fetched, before the final
//! response, and are never stored (a hit has none); an HTTP/1.0 client never gets one.

mod common;

use common::origin::{cache_status, caching_node};
use testkit::{Route, TestOrigin};

const HINT: (&str, &str) = ("Link", "</styles.css>; rel=preload; as=style");

#[test]
fn early_hints_reach_the_fetching_client_and_are_never_stored() {
    let origin = TestOrigin::start();
    let page = Route::ok(&[("Cache-Control", "max-age=600")], b"page")
        .interim(102, &[])
        .interim(103, &[HINT, ("X-My-Header", "test")]);
    origin.set("/page", page);
    let node = caching_node(&[origin.url()], |_| {});
    let mut c = node.client();
    c.send(b"GET /page HTTP/1.1\r\nHost: t\r\n\r\n");
    let processing = c.response(false);
    assert_eq!(processing.status, 102);
    let hints = c.response(false);
    assert_eq!(hints.status, 103);
    assert_eq!(hints.header("link"), Some(HINT.1));
    assert_eq!(hints.header("x-my-header"), Some("test"));
    let r = c.response(false);
    assert_eq!((r.status, cache_status(&r), r.body.as_slice()), (200, "MISS", &b"page"[..]));

    // Stored without them: the hit is the final response alone.
    let r = c.get("/page");
    assert_eq!((r.status, cache_status(&r)), (200, "HIT"));
    assert_eq!(origin.hits("/page"), 1);
}

#[test]
fn passed_and_uncacheable_answers_keep_their_hints_and_http_1_0_gets_none() {
    let origin = TestOrigin::start();
    let api = Route::ok(&[("Cache-Control", "no-store")], b"api").interim(103, &[HINT]);
    origin.set("/api", api);
    let node = caching_node(&[origin.url()], |_| {});
    let mut c = node.client();
    for request in [
        &b"GET /api HTTP/1.1\r\nHost: t\r\n\r\n"[..],
        b"POST /api HTTP/1.1\r\nHost: t\r\nContent-Length: 1\r\n\r\nx",
    ] {
        c.send(request);
        assert_eq!(c.response(false).status, 103);
        let r = c.response(false);
        assert_eq!((r.status, r.body.as_slice()), (200, &b"api"[..]));
    }
    let mut old = node.client();
    old.send(b"GET /api HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    let r = old.response(false);
    assert_eq!((r.status, r.body.as_slice()), (200, &b"api"[..]), "no interim for HTTP/1.0");
}

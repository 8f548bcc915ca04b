//! Every method through a caching node: POST, PUT, DELETE, PATCH, OPTIONS and unknown
//! tokens reach the origin with their bodies byte-exact (Content-Length or chunked,
//! streamed), their responses come back byte-exact and are never stored, and a successful
//! unsafe request invalidates what the node stores for the target (RFC 9111 §4.4), also
//! when a router asks for it (`/.larder/invalidate`). All on loopback.

mod common;

use common::origin::{cache_status, caching_node};
use common::{pattern, Client, TestNode};
use std::io::Read;
use testkit::{Response, Route, TestOrigin};

/// A request with a body framed by Content-Length, or chunked in pieces of 7000 bytes.
fn request(method: &str, path: &str, body: &[u8], chunked: bool) -> Vec<u8> {
    let mut r = format!("{method} {path} HTTP/1.1\r\nHost: shop.test\r\n").into_bytes();
    testkit::frame_body(&mut r, body, chunked.then_some(7000));
    r
}

fn node_with_big_bodies(origin: &TestOrigin) -> TestNode {
    let urls = [origin.url()];
    let urls: Vec<_> = urls.iter().map(|u| node::origin::OriginUrl::parse(u).unwrap()).collect();
    let o = node::origin::OriginConfig::new(urls);
    TestNode::start(move |cfg| {
        cfg.origin = Some(o);
        cfg.max_body_bytes = 16 << 20;
    })
}

#[test]
fn every_method_reaches_the_origin_byte_exact_both_ways() {
    let origin = TestOrigin::start();
    let answer = pattern(2 << 20, 9);
    origin.set("/api", Route::ok(&[("Cache-Control", "max-age=600")], &answer).status(201));
    let node = node_with_big_bodies(&origin);
    let mut c = node.client();
    let cases: [(&str, Vec<u8>, bool); 8] = [
        ("POST", b"a=1".to_vec(), false),
        ("PUT", pattern(5 << 20, 1), false),
        ("POST", pattern(3 << 20, 2), true),
        ("PATCH", b"{\"x\":1}".to_vec(), true),
        ("DELETE", Vec::new(), false),
        ("OPTIONS", Vec::new(), false),
        ("PROPFIND", b"<propfind/>".to_vec(), false),
        ("POST", Vec::new(), true),
    ];
    // One keep-alive connection for all: each body must end exactly where it should.
    for (i, (method, body, chunked)) in cases.iter().enumerate() {
        c.send(&request(method, "/api", body, *chunked));
        let r = c.response(false);
        assert_eq!((r.status, cache_status(&r)), (201, "PASS"), "{method} #{i}");
        assert!(r.body == answer, "{method} #{i}: response body differs");
        let (got_method, got_body) = origin.last_body("/api").unwrap();
        assert_eq!(got_method, *method);
        assert!(
            got_body == *body,
            "{method} #{i}: {} bytes sent, {} got",
            body.len(),
            got_body.len()
        );
        let fields = origin.last_request("/api");
        let te = testkit::header(&fields, "transfer-encoding");
        assert_eq!(te.is_some(), *chunked, "{method} #{i}: framing kept: {fields:?}");
    }
    assert_eq!(
        origin.hits("/api"),
        cases.len() as u64,
        "never coalesced, never served from the cache"
    );
    let r = c.get("/api");
    assert_ne!(cache_status(&r), "HIT", "responses to other methods are not stored");
    assert_eq!(origin.hits("/api"), cases.len() as u64 + 1);
}

#[test]
fn expect_100_continue_is_answered_by_the_node() {
    let origin = TestOrigin::start();
    origin.set("/up", Route::ok(&[], b"stored"));
    let node = caching_node(&[origin.url()], |_| {});
    let mut c = node.client();
    c.send(b"PUT /up HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n");
    let interim = c.response(false);
    assert_eq!(interim.status, 100);
    c.send(b"hello");
    let r = c.response(false);
    assert_eq!((r.status, r.body.as_slice()), (200, &b"stored"[..]));
    assert_eq!(origin.last_body("/up"), Some(("PUT".into(), b"hello".to_vec())));
    let expect = testkit::header(&origin.last_request("/up"), "expect").map(str::to_string);
    assert_eq!(expect, None, "the expectation is not forwarded");
    // A client that sends its body without waiting gets no 100, and the connection goes on.
    c.send(b"PUT /up HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\nabc");
    let r = c.response(false);
    assert_eq!((r.status, r.body.as_slice()), (200, &b"stored"[..]));
    assert_eq!(origin.last_body("/up"), Some(("PUT".into(), b"abc".to_vec())));
    let r = c.get("/up");
    assert_eq!(r.status, 200);
}

#[test]
fn a_relayed_response_that_has_no_body_gets_no_framing() {
    let origin = TestOrigin::start();
    // The origin frames its 204 with `Content-Length: 0`; the node's answer has none.
    origin.set("/gone", Route::ok(&[], b"").status(204));
    origin.set("/f", Route::ok(&[], b"ok"));
    let node = caching_node(&[origin.url()], |_| {});
    let mut c = node.client();
    c.send(&request("DELETE", "/gone", b"", false));
    let r = c.response(false);
    assert_eq!((r.status, cache_status(&r)), (204, "PASS"));
    assert_eq!(r.header("content-length"), None, "no Content-Length on a 204: {r:?}");
    assert_eq!(r.header("transfer-encoding"), None, "{r:?}");
    let r = c.get("/f");
    assert_eq!((r.status, r.body.as_slice()), (200, &b"ok"[..]), "the connection goes on");
}

#[test]
fn a_body_over_the_limit_is_refused_and_never_reaches_the_origin() {
    let origin = TestOrigin::start();
    origin.set("/f", Route::ok(&[], b"ok"));
    let node = caching_node(&[origin.url()], |_| {});
    let limit = 64 * 1024;
    let r = common::raw(node.addr, &request("POST", "/f", &pattern(limit + 1, 3), false));
    assert_eq!(r.status, 413);
    let mut c = node.client();
    c.send(&request("POST", "/f", &pattern(limit + 1, 3), true));
    assert_eq!(c.response(false).status, 413);
    assert!(c.closed(), "a body cut short leaves the connection unusable");
    assert_eq!(origin.last_body("/f"), None, "no complete request reached the origin");
}

#[test]
fn an_unreachable_origin_answers_502() {
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", dead.local_addr().unwrap());
    drop(dead);
    let node = caching_node(&[url], |_| {});
    let mut c = node.client();
    c.send(&request("POST", "/f", b"x=1", false));
    assert_eq!(c.response(false).status, 502);
    assert_eq!(c.get("/f").status, 502, "the connection goes on");
}

/// GET `path` and its cache status and body.
fn get(c: &mut Client, path: &str) -> (String, Vec<u8>) {
    let r = c.get(path);
    assert_eq!(r.status, 200, "{r:?}");
    (cache_status(&r).to_string(), r.body)
}

fn fresh(body: &[u8]) -> Route {
    Route::ok(&[("Cache-Control", "max-age=600")], body)
}

#[test]
fn a_successful_unsafe_request_invalidates_the_stored_response() {
    let origin = TestOrigin::start();
    origin.set("/obj", fresh(b"v0"));
    let node = caching_node(&[origin.url()], |_| {});
    let mut c = node.client();
    assert_eq!(get(&mut c, "/obj"), ("MISS".into(), b"v0".to_vec()));
    assert_eq!(get(&mut c, "/obj"), ("HIT".into(), b"v0".to_vec()));
    for (i, method) in ["POST", "PUT", "DELETE", "PATCH"].iter().enumerate() {
        let new = format!("v{}", i + 1).into_bytes();
        origin.set("/obj", fresh(&new));
        c.send(&request(method, "/obj", b"change", false));
        assert_eq!(c.response(false).status, 200);
        assert_eq!(get(&mut c, "/obj"), ("MISS".into(), new.clone()), "after {method}");
        assert_eq!(get(&mut c, "/obj"), ("HIT".into(), new), "after {method}");
    }
}

#[test]
fn location_and_content_location_of_the_same_origin_are_invalidated() {
    let origin = TestOrigin::start();
    origin.set("/a", fresh(b"a0"));
    origin.set("/b", fresh(b"b0"));
    let node = caching_node(&[origin.url()], |_| {});
    let mut c = node.client();
    get(&mut c, "/a");
    get(&mut c, "/b");
    let fields = [("Location", "/a"), ("Content-Location", "http://shop.test/b")];
    origin.set("/form", Route::ok(&fields, b"").status(303));
    origin.set("/a", fresh(b"a1"));
    origin.set("/b", fresh(b"b1"));
    c.send(&request("POST", "/form", b"q", false));
    assert_eq!(c.response(false).status, 303);
    assert_eq!(get(&mut c, "/a"), ("MISS".into(), b"a1".to_vec()));
    assert_eq!(get(&mut c, "/b"), ("MISS".into(), b"b1".to_vec()));
    // Another host's URI is not this cache's to drop.
    let fields = [("Location", "http://elsewhere.test/a")];
    origin.set("/form", Route::ok(&fields, b"").status(303));
    c.send(&request("POST", "/form", b"q", false));
    assert_eq!(c.response(false).status, 303);
    assert_eq!(get(&mut c, "/a"), ("HIT".into(), b"a1".to_vec()));
}

#[test]
fn error_responses_and_safe_methods_invalidate_nothing() {
    let origin = TestOrigin::start();
    origin.set("/obj", fresh(b"v0"));
    let node = caching_node(&[origin.url()], |_| {});
    let mut c = node.client();
    get(&mut c, "/obj");
    for status in [400, 404, 409, 500, 503] {
        origin.set("/obj", fresh(b"err").status(status));
        c.send(&request("POST", "/obj", b"x", false));
        assert_eq!(c.response(false).status, status);
    }
    origin.set("/obj", fresh(b"v1"));
    c.send(b"OPTIONS /obj HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!(c.response(false).status, 200);
    assert_eq!(get(&mut c, "/obj"), ("HIT".into(), b"v0".to_vec()));
}

#[test]
fn the_invalidation_endpoint_drops_a_target_idempotently() {
    let origin = TestOrigin::start();
    origin.set("/p?q=1", fresh(b"v0"));
    let node = caching_node(&[origin.url()], |_| {});
    let mut c = node.client();
    get(&mut c, "/p?q=1");
    let inv = wire::Invalidation::exact("/p?q=1");
    let send = |c: &mut Client| {
        c.send(format!("POST {} HTTP/1.1\r\nHost: n\r\n\r\n", inv.request_target()).as_bytes());
        c.response(false)
    };
    let first = send(&mut c);
    assert_eq!((first.status, first.body.as_slice()), (200, &b"dropped\n"[..]));
    let again = send(&mut c);
    assert_eq!((again.status, again.body.as_slice()), (200, &b"not held\n"[..]));
    assert_eq!(origin.hits("/.larder/invalidate"), 0, "never passed to the origin");
    origin.set("/p?q=1", fresh(b"v1"));
    assert_eq!(get(&mut c, "/p?q=1"), ("MISS".into(), b"v1".to_vec()));
    let bad = c.get(wire::INVALIDATE_PATH);
    assert_eq!(bad.status, 405);
    c.send(
        format!("POST {}?target=nopath HTTP/1.1\r\nHost: n\r\n\r\n", wire::INVALIDATE_PATH)
            .as_bytes(),
    );
    assert_eq!(c.response(false).status, 400);
}

#[test]
fn a_chunked_origin_response_to_a_post_is_relayed_byte_exact() {
    let origin = TestOrigin::start();
    let answer = pattern(300_000, 4);
    origin.set("/c", Route::ok(&[], &answer).chunked());
    let node = caching_node(&[origin.url()], |_| {});
    let mut c = node.client();
    let mut req = request("POST", "/c", b"z", false);
    // Ask the node to close after, so the answer can be read to its end.
    let at = req.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    req.splice(at + 2..at + 2, b"Connection: close\r\n".iter().copied());
    c.send(&req);
    let mut all = Vec::new();
    c.stream.read_to_end(&mut all).unwrap();
    let (head, n) = Response::parse_head(&all).unwrap().unwrap();
    assert_eq!(head.header("transfer-encoding"), Some("chunked"));
    let mut raw = &all[n..];
    let mut body = Vec::new();
    loop {
        let end = raw.windows(2).position(|w| w == b"\r\n").unwrap();
        let size = usize::from_str_radix(std::str::from_utf8(&raw[..end]).unwrap(), 16).unwrap();
        raw = &raw[end + 2..];
        if size == 0 {
            break;
        }
        body.extend_from_slice(&raw[..size]);
        raw = &raw[size + 2..];
    }
    assert!(body == answer);
}

#[test]
fn a_body_cut_short_never_leaves_its_origin_connection_in_the_pool() {
    let origin = TestOrigin::start();
    origin.set("/f", fresh(b"ok"));
    let node = caching_node(&[origin.url()], |_| {});
    for _ in 0..3 {
        let mut c = node.client();
        c.send(b"POST /f HTTP/1.1\r\nHost: t\r\nContent-Length: 1000\r\n\r\nonly ten b");
        c.stream.shutdown(std::net::Shutdown::Write).unwrap();
        let mut rest = Vec::new();
        let _ = c.stream.read_to_end(&mut rest);
    }
    // Had a half-sent request's connection gone back to the pool, this GET would be read
    // by the origin as the rest of that body.
    let mut c = node.client();
    assert_eq!(get(&mut c, "/f"), ("MISS".into(), b"ok".to_vec()));
    assert_eq!(origin.last_body("/f"), Some(("GET".into(), Vec::new())));
    c.send(&request("PUT", "/f", b"whole", false));
    assert_eq!(c.response(false).status, 200);
    assert_eq!(origin.last_body("/f"), Some(("PUT".into(), b"whole".to_vec())));
    assert_eq!(get(&mut c, "/f"), ("MISS".into(), b"ok".to_vec()), "PUT invalidated it");
}

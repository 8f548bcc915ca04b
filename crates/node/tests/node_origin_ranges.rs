//! Byte ranges answered from a caching node's store: 206 with exactly the bytes asked
//! for, 416 beyond the end, the whole object when `If-Range` does not match or the
//! `Range` is not one usable range.

mod common;

use common::origin::{cache_status, caching_node, get_with};
use common::{pattern, Client, TestNode};
use testkit::{Response, Route, TestOrigin};

const LAST_MODIFIED: &str = "Sun, 06 Nov 1994 08:49:37 GMT";
const LEN: usize = 1000;

/// An origin serving a 1000-byte `/v.bin` with validators, a node that has stored it, a
/// client of the node and the body.
fn stored() -> (TestOrigin, TestNode, Client, Vec<u8>) {
    let origin = TestOrigin::start();
    let body = pattern(LEN, 11);
    let fields =
        [("Cache-Control", "max-age=600"), ("ETag", "\"r1\""), ("Last-Modified", LAST_MODIFIED)];
    origin.set("/v.bin", Route::ok(&fields, &body));
    let node = caching_node(&[origin.url()], |_| {});
    let mut c = node.client();
    // A miss whose body is still arriving is answered whole, Range or not.
    let first = get_with(&mut c, "/v.bin", "Range: bytes=0-9\r\n");
    assert_eq!((first.status, cache_status(&first)), (200, "MISS"));
    assert_eq!(first.body, body);
    (origin, node, c, body)
}

fn range(c: &mut Client, spec: &str) -> Response {
    get_with(c, "/v.bin", &format!("Range: {spec}\r\n"))
}

#[test]
fn single_ranges_are_byte_exact_from_the_store() {
    let (origin, _node, mut c, body) = stored();
    let cases: &[(&str, usize, usize)] = &[
        ("bytes=0-99", 0, 99),
        ("bytes=400-499", 400, 499),
        ("bytes=900-999", 900, 999),
        ("bytes=990-5000", 990, 999),
        ("bytes=-100", 900, 999),
        ("bytes=-5000", 0, 999),
        ("bytes=950-", 950, 999),
        ("bytes=0-0", 0, 0),
    ];
    for &(spec, start, end) in cases {
        let r = range(&mut c, spec);
        assert_eq!((r.status, cache_status(&r)), (206, "HIT"), "{spec}");
        let want = format!("bytes {start}-{end}/{LEN}");
        assert_eq!(r.header("content-range"), Some(want.as_str()), "{spec}");
        assert_eq!(r.header("accept-ranges"), Some("bytes"), "{spec}");
        assert_eq!(r.body, &body[start..=end], "{spec}");
    }
    let whole = c.get("/v.bin");
    assert_eq!((whole.status, whole.header("accept-ranges")), (200, Some("bytes")));
    assert_eq!(whole.body, body);
    // HEAD: the 206 head, no body.
    c.send(b"HEAD /v.bin HTTP/1.1\r\nHost: t\r\nRange: bytes=10-19\r\n\r\n");
    let head = c.response(true);
    assert_eq!(head.status, 206);
    assert_eq!(head.header("content-range"), Some("bytes 10-19/1000"));
    assert_eq!(head.header("content-length"), Some("10"));
    // The connection is still in step: the next answer is whole and exact.
    assert_eq!(c.get("/v.bin").body, body);
    assert_eq!(origin.hits("/v.bin"), 1, "every range came from the store");
}

#[test]
fn unsatisfiable_ranges_are_416() {
    let (origin, _node, mut c, _) = stored();
    for spec in ["bytes=1000-", "bytes=5000-6000", "bytes=-0"] {
        let r = range(&mut c, spec);
        assert_eq!(r.status, 416, "{spec}");
        assert_eq!(r.header("content-range"), Some("bytes */1000"), "{spec}");
    }
    assert_eq!(origin.hits("/v.bin"), 1);
}

#[test]
fn whole_object_when_if_range_misses_or_range_is_unusable() {
    let (origin, _node, mut c, body) = stored();
    let whole = |r: Response, why: &str| {
        assert_eq!((r.status, r.header("content-range")), (200, None), "{why}");
        assert_eq!(r.body, body, "{why}");
    };
    let r = get_with(&mut c, "/v.bin", "Range: bytes=0-9\r\nIf-Range: \"r0\"\r\n");
    whole(r, "other ETag");
    let r = get_with(&mut c, "/v.bin", "Range: bytes=0-9\r\nIf-Range: W/\"r1\"\r\n");
    whole(r, "a weak ETag never matches");
    let old = "Range: bytes=0-9\r\nIf-Range: Sun, 06 Nov 1994 08:49:38 GMT\r\n";
    whole(get_with(&mut c, "/v.bin", old), "other date");
    whole(range(&mut c, "bytes=0-9, 20-29"), "several ranges");
    whole(range(&mut c, "bytes=x-9"), "malformed");
    whole(range(&mut c, "bytes=9-0"), "backwards");
    whole(range(&mut c, "lines=0-9"), "another unit");
    // Matching If-Range (strong ETag, or the Last-Modified date) keeps the range.
    let r = get_with(&mut c, "/v.bin", "Range: bytes=0-9\r\nIf-Range: \"r1\"\r\n");
    assert_eq!((r.status, &r.body[..]), (206, &body[..10]));
    let same = format!("Range: bytes=0-9\r\nIf-Range: {LAST_MODIFIED}\r\n");
    let r = get_with(&mut c, "/v.bin", &same);
    assert_eq!((r.status, &r.body[..]), (206, &body[..10]));
    // A matching If-None-Match wins over Range (RFC 9110 §13.2.2).
    let r = get_with(&mut c, "/v.bin", "Range: bytes=0-9\r\nIf-None-Match: \"r1\"\r\n");
    assert_eq!(r.status, 304);
    assert_eq!(origin.hits("/v.bin"), 1);
}

#[test]
fn a_whole_answer_keeps_the_stored_content_range_and_a_206_writes_its_own() {
    let origin = TestOrigin::start();
    let fields = [("Cache-Control", "max-age=600"), ("Content-Range", "origin's own")];
    origin.set("/cr", Route::ok(&fields, &pattern(100, 3)));
    let node = caching_node(&[origin.url()], |_| {});
    let mut c = node.client();
    assert_eq!(cache_status(&c.get("/cr")), "MISS");
    let whole = c.get("/cr");
    assert_eq!((whole.status, whole.header("content-range")), (200, Some("origin's own")));
    let part = get_with(&mut c, "/cr", "Range: bytes=0-9\r\n");
    assert_eq!((part.status, part.header("content-range")), (206, Some("bytes 0-9/100")));
}

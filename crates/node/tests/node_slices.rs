//! Large objects as slices on loopback: an object above the whole-object limit is stored
//! as fixed-size slices fetched with Range requests, served whole or by ranges byte for
//! byte across slice boundaries, never mixed from two copies of a changed object, filled
//! from the node that owns each slice (once cluster-wide, completed from the origin when
//! that node dies mid-slice, never passed back and forth), and relayed when the origin
//! ignores ranges.

mod common;

use common::origin::{cache_status, get_with, load};
use common::{pattern, TestNode, WAIT};
use node::origin::{slice_owner, OriginConfig, OriginUrl};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::Duration;
use testkit::{Route, TestOrigin};

const ETAG: &str = "\"v1\"";

/// An origin serving `body` at `path`, cacheable, with an ETag and ranges.
fn origin_with(path: &str, body: &[u8]) -> TestOrigin {
    let origin = TestOrigin::start();
    origin.set(path, ranged_route(ETAG, body));
    origin
}

fn ranged_route(etag: &str, body: &[u8]) -> Route {
    let fields = [("Cache-Control", "max-age=600"), ("ETag", etag), ("Accept-Ranges", "bytes")];
    Route::ok(&fields, body).ranges()
}

/// A caching node on `listener` in front of `origin` (whole objects up to 64 KiB), slicing
/// larger ones by `slice` bytes, with `peers` as the cluster's nodes.
fn sliced_node(
    listener: TcpListener,
    origin: &TestOrigin,
    slice: u64,
    peers: Vec<SocketAddr>,
    peer_timeout: Duration,
) -> TestNode {
    let url = OriginUrl::parse(&origin.url()).unwrap();
    TestNode::start_on(listener, move |cfg, me| {
        let mut o = OriginConfig::new(vec![url]);
        o.slice_bytes = slice;
        o.peers = peers;
        o.own_addr = Some(me);
        o.peer_timeout = peer_timeout;
        cfg.origin = Some(o);
    })
}

fn bind() -> TcpListener {
    TcpListener::bind("127.0.0.1:0").unwrap()
}

fn alone(origin: &TestOrigin, slice: u64) -> TestNode {
    sliced_node(bind(), origin, slice, Vec::new(), WAIT)
}

fn range(c: &mut common::Client, path: &str, spec: &str) -> testkit::Response {
    get_with(c, path, &format!("Range: bytes={spec}\r\n"))
}

#[test]
fn a_large_object_is_served_whole_and_by_ranges_from_its_slices() {
    let body = pattern(100_000, 1);
    let origin = origin_with("/v.bin", &body);
    let node = alone(&origin, 16_384);
    let mut c = node.client();
    let first = c.get("/v.bin");
    assert_eq!((first.status, cache_status(&first)), (200, "MISS"));
    assert!(first.body == body, "byte-exact");
    assert_eq!(first.header("etag"), Some(ETAG));
    assert_eq!(first.header("accept-ranges"), Some("bytes"));
    // One request found the object (its first slice), one Range request each other slice.
    assert_eq!(origin.hits("/v.bin"), 7);
    let asked = origin.last_request("/v.bin");
    assert_eq!(testkit::header(&asked, "range"), Some("bytes=98304-99999"), "{asked:?}");
    assert_eq!(testkit::header(&asked, "if-range"), Some(ETAG), "{asked:?}");
    let again = c.get("/v.bin");
    assert_eq!((cache_status(&again), again.body == body), ("HIT", true));
    for (spec, first, last) in
        [("16000-33000", 16_000, 33_000), ("-100", 99_900, 99_999), ("16384-", 16_384, 99_999)]
    {
        let r = range(&mut c, "/v.bin", spec);
        assert_eq!(r.status, 206, "{spec}");
        let cr = format!("bytes {first}-{last}/100000");
        assert_eq!(r.header("content-range"), Some(cr.as_str()), "{spec}");
        assert!(r.body == body[first..=last], "{spec}: byte-exact across slice boundaries");
    }
    let several = range(&mut c, "/v.bin", "0-1,50-60");
    assert_eq!((several.status, several.body == body), (200, true), "several ranges: 200 whole");
    let out = range(&mut c, "/v.bin", "100000-");
    assert_eq!((out.status, out.header("content-range")), (416, Some("bytes */100000")));
    c.send(b"HEAD /v.bin HTTP/1.1\r\nHost: t\r\n\r\n");
    let head = c.response(true);
    assert_eq!((head.status, head.header("content-length")), (200, Some("100000")));
    let same = get_with(&mut c, "/v.bin", &format!("If-None-Match: {ETAG}\r\n"));
    assert_eq!(same.status, 304);
    assert_eq!(origin.hits("/v.bin"), 7, "all of it from the slices");
    let report = load(node.addr);
    assert_eq!(report["slices_from_origin"].as_u64(), Some(7), "{report}");
    assert!(report["slices_from_cache"].as_u64() > Some(7), "{report}");
}

#[test]
fn a_range_of_a_cold_object_fetches_only_the_slices_it_needs() {
    let body = pattern(100_000, 2);
    let origin = origin_with("/v.bin", &body);
    let node = alone(&origin, 16_384);
    let r = range(&mut node.client(), "/v.bin", "50000-50010");
    assert_eq!(r.status, 206);
    assert!(r.body == body[50_000..=50_010]);
    assert_eq!(origin.hits("/v.bin"), 2, "the first slice (finding the object), then slice 3");
}

#[test]
fn an_object_changed_at_the_origin_mid_fill_is_never_served_mixed() {
    let v1 = pattern(100_000, 3);
    let v2 = pattern(100_000, 4);
    let origin = origin_with("/v.bin", &v1);
    let node = alone(&origin, 16_384);
    // Two slices of the first copy are stored; then the origin's copy changes.
    let part = range(&mut node.client(), "/v.bin", "0-20000");
    assert!(part.body == v1[..=20_000]);
    origin.set("/v.bin", ranged_route("\"v2\"", &v2));
    let mut s = TcpStream::connect(node.addr).unwrap();
    s.set_read_timeout(Some(WAIT)).unwrap();
    s.write_all(b"GET /v.bin HTTP/1.1\r\nHost: t\r\n\r\n").unwrap();
    let mut got = Vec::new();
    s.read_to_end(&mut got).expect("the node ends the cut answer by closing");
    let at = got.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    let sent = &got[at..];
    assert!(sent.len() < v1.len(), "cut short, never claimed complete");
    assert!(sent == &v1[..sent.len()], "only the first copy's bytes, nothing of the second");
    let fresh = node.client().get("/v.bin");
    assert_eq!(fresh.header("etag"), Some("\"v2\""));
    assert!(fresh.body == v2, "the changed copy, whole");
}

/// A path whose slice 1 `pick` accepts the owner of, by the nodes each node counts.
fn path_where(pick: impl Fn(&str) -> bool) -> String {
    (0..10_000).map(|k| format!("/o{k}.bin")).find(|p| pick(p)).expect("some path fits")
}

#[test]
fn one_cold_object_costs_the_origin_one_request_per_slice_across_nodes() {
    let body = pattern(100_000, 5);
    let (la, lb) = (bind(), bind());
    let nodes = vec![la.local_addr().unwrap(), lb.local_addr().unwrap()];
    let path = path_where(|p| {
        let owners: Vec<_> = (1..5).map(|i| slice_owner(p, i, &nodes).unwrap()).collect();
        owners.contains(&nodes[0]) && owners.contains(&nodes[1])
    });
    let origin = origin_with(&path, &body);
    let a = sliced_node(la, &origin, 20_000, nodes.clone(), WAIT);
    let b = sliced_node(lb, &origin, 20_000, nodes.clone(), WAIT);
    let from_a = a.client().get(&path);
    assert!(from_a.body == body);
    assert_eq!(origin.hits(&path), 5, "one request per slice, the owners' included");
    // A replica the router points at the first node fills from it; each slice comes
    // from its owner, none from the origin.
    let hint = {
        let mut line = Vec::new();
        wire::PeerHint(a.addr).write_field(&mut line);
        String::from_utf8(line).unwrap()
    };
    let from_b = get_with(&mut b.client(), &path, &hint);
    assert!(from_b.body == body, "byte-exact through the other node");
    let from_b_again = b.client().get(&path);
    assert_eq!((cache_status(&from_b_again), from_b_again.body == body), ("HIT", true));
    assert_eq!(origin.hits(&path), 5, "a second node and a second pass cost the origin nothing");
    let (ra, rb) = (load(a.addr), load(b.addr));
    let slices = |r: &serde_json::Value, k: &str| r[k].as_u64().unwrap();
    assert_eq!(slices(&ra, "slices_from_origin") + slices(&rb, "slices_from_origin"), 5);
    assert!(slices(&ra, "slices_from_peers") > 0 && slices(&rb, "slices_from_peers") > 0);
}

#[test]
fn a_slice_asked_of_its_owner_is_never_asked_further() {
    // A node that does not know the address its peers call it by (behind a proxy, or
    // listening on every address) owns no slice by its own count: it asks the owner, which
    // is itself. Were a slice request passed on, it would ask itself again and again
    // until the peer timeout, far longer than the client waits.
    let body = pattern(80_000, 6);
    let listener = bind();
    let me = listener.local_addr().unwrap();
    let elsewhere = bind().local_addr().unwrap();
    let path = path_where(|p| slice_owner(p, 1, &[me, elsewhere]) == Some(me));
    let origin = origin_with(&path, &body);
    let url = OriginUrl::parse(&origin.url()).unwrap();
    let node = TestNode::start_on(listener, move |cfg, me| {
        let mut o = OriginConfig::new(vec![url]);
        o.slice_bytes = 40_000;
        o.peers = vec![me];
        o.own_addr = Some(elsewhere);
        o.peer_timeout = WAIT * 3;
        cfg.origin = Some(o);
    });
    let r = node.client().get(&path);
    assert!(r.body == body);
    assert_eq!(origin.hits(&path), 2, "the first slice, then slice 1 once");
    let report = load(node.addr);
    assert_eq!(report["slices_from_origin"].as_u64(), Some(2), "{report}");
    assert_eq!(report["slices_from_peers"].as_u64(), Some(1), "{report}");
}

#[test]
fn a_slice_owner_dying_mid_slice_is_completed_from_the_origin() {
    let body = pattern(80_000, 7);
    let (me, fake) = (bind(), bind());
    let (me_addr, fake_addr) = (me.local_addr().unwrap(), fake.local_addr().unwrap());
    let path = path_where(|p| slice_owner(p, 1, &[me_addr, fake_addr]) == Some(fake_addr));
    let origin = origin_with(&path, &body);
    let slice = body[40_000..].to_vec();
    let asked = std::thread::spawn(move || {
        let (mut s, _) = fake.accept().unwrap();
        s.set_read_timeout(Some(WAIT)).unwrap();
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") && s.read(&mut byte).unwrap_or(0) == 1 {
            head.push(byte[0]);
        }
        let answer = format!(
            "HTTP/1.1 206 Partial Content\r\nContent-Length: 40000\r\nETag: {ETAG}\r\n\
             Content-Range: bytes 40000-79999/80000\r\n\r\n"
        );
        s.write_all(answer.as_bytes()).unwrap();
        s.write_all(&slice[..15_000]).unwrap();
        String::from_utf8_lossy(&head).to_ascii_lowercase()
    });
    let node = sliced_node(me, &origin, 40_000, vec![me_addr, fake_addr], WAIT);
    let mut c = node.client();
    let r = c.get(&path);
    assert!(r.body == body, "byte-exact: the dead owner's slice from the origin");
    let asked = asked.join().unwrap();
    assert!(asked.contains("x-larder-slice: 1/40000/80000"), "{asked}");
    assert!(asked.contains("x-larder-peer-fill: 1") && asked.contains("if-range: \"v1\""));
    assert_eq!(origin.hits(&path), 2);
    let again = c.get(&path);
    assert_eq!((cache_status(&again), again.body == body), ("HIT", true), "stored");
    assert_eq!(origin.hits(&path), 2);
    let report = load(node.addr);
    assert_eq!(report["peer_fill_failures"].as_u64(), Some(1), "{report}");
    assert_eq!(report["slices_from_origin"].as_u64(), Some(2), "{report}");
}

#[test]
fn an_origin_that_ignores_ranges_is_relayed() {
    let body = pattern(100_000, 8);
    let origin = TestOrigin::start();
    let fields = [("Cache-Control", "max-age=600"), ("ETag", ETAG), ("Accept-Ranges", "bytes")];
    origin.set("/v.bin", Route::ok(&fields, &body));
    let node = alone(&origin, 16_384);
    let mut c = node.client();
    let first = c.get("/v.bin");
    assert!(first.body == body, "byte-exact though each slice came whole");
    let hits = origin.hits("/v.bin");
    let again = c.get("/v.bin");
    assert_eq!((cache_status(&again), again.body == body), ("PASS", true), "relayed");
    assert_eq!(origin.hits("/v.bin"), hits + 1);
    let r = range(&mut c, "/v.bin", "20000-20009");
    assert_eq!(r.status, 200, "relayed whole, as the origin answers");
    assert!(r.body == body);
}

//! A node as a cache in front of an origin the test starts (`testkit::TestOrigin`):
//! the caching rules, coalesced misses, relayed large bodies and origin failures, all on
//! loopback.

mod common;

use common::origin::{cache_status, caching_node, get_with, load};
use common::{pattern, Client, TestNode, WAIT};
use node::origin::OriginConfig;
use std::io::{Read, Write};
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use testkit::{Response, Route, TestOrigin};

/// An address nothing listens on (bound, then released).
fn dead_url() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    format!("http://{}", l.local_addr().unwrap())
}

#[test]
fn fresh_hit_needs_one_origin_request() {
    let origin = TestOrigin::start();
    let body = pattern(5000, 7);
    origin.set("/a.bin", Route::ok(&[("Cache-Control", "max-age=600"), ("X-Kept", "yes")], &body));
    let node = caching_node(&[origin.url()], |_| {});
    let mut c = node.client();
    let first = c.get("/a.bin");
    let second = c.get("/a.bin");
    assert_eq!((first.status, cache_status(&first)), (200, "MISS"));
    assert_eq!((second.status, cache_status(&second)), (200, "HIT"));
    assert_eq!(first.body, body);
    assert_eq!(second.body, body);
    assert_eq!(second.header("x-kept"), Some("yes"), "origin fields are kept");
    assert!(second.header("age").is_some(), "a cached answer says its age");
    assert_eq!(origin.hits("/a.bin"), 1);
    let report = load(node.addr);
    assert_eq!(report["origin_fetches"].as_u64(), Some(1), "{report}");
    assert!(report["origin_bytes"].as_u64().unwrap() > body.len() as u64, "{report}");
    assert_eq!(report["origin_errors"].as_u64(), Some(0), "{report}");
    assert_eq!((report["hits"].as_u64(), report["misses"].as_u64()), (Some(1), Some(1)));
}

const LAST_MODIFIED: &str = "Sun, 06 Nov 1994 08:49:37 GMT";

/// An origin serving `path` with this Cache-Control, ETag and [`LAST_MODIFIED`], a node
/// caching it, and a client of the node.
fn with_validators(
    path: &str,
    cache_control: &str,
    etag: &str,
    body: &[u8],
) -> (TestOrigin, TestNode, Client) {
    let origin = TestOrigin::start();
    let fields =
        [("Cache-Control", cache_control), ("ETag", etag), ("Last-Modified", LAST_MODIFIED)];
    origin.set(path, Route::ok(&fields, body));
    let node = caching_node(&[origin.url()], |_| {});
    let client = node.client();
    (origin, node, client)
}

#[test]
fn stale_entry_revalidated_with_304() {
    let (origin, _node, mut c) = with_validators("/page", "max-age=0", "\"v1\"", b"version one");
    let lm = LAST_MODIFIED;
    assert_eq!(cache_status(&c.get("/page")), "MISS");
    let again = c.get("/page");
    assert_eq!((again.status, cache_status(&again)), (200, "REVALIDATED"));
    assert_eq!(again.body, b"version one");
    assert_eq!(origin.hits("/page"), 2);
    let asked = origin.last_request("/page");
    assert_eq!(testkit::header(&asked, "if-none-match"), Some("\"v1\""));
    assert_eq!(testkit::header(&asked, "if-modified-since"), Some(lm));
    // A changed object (new ETag) replaces the stored one.
    let fields = [("Cache-Control", "max-age=600"), ("ETag", "\"v2\"")];
    origin.set("/page", Route::ok(&fields, b"version two"));
    let changed = c.get("/page");
    assert_eq!((cache_status(&changed), changed.body.as_slice()), ("MISS", &b"version two"[..]));
    assert_eq!(cache_status(&c.get("/page")), "HIT");
    assert_eq!(origin.hits("/page"), 3);
}

#[test]
fn clients_own_validators_get_304_from_the_cache() {
    let (origin, _node, mut c) = with_validators("/c", "max-age=600", "\"e1\"", b"conditional");
    let lm = LAST_MODIFIED;
    assert_eq!(c.get("/c").status, 200);
    c.send(b"GET /c HTTP/1.1\r\nHost: t\r\nIf-None-Match: \"e1\"\r\n\r\n");
    let r = c.response(false);
    assert_eq!((r.status, r.header("etag"), cache_status(&r)), (304, Some("\"e1\""), "HIT"));
    let since = format!("If-Modified-Since: {lm}\r\n");
    assert_eq!(get_with(&mut c, "/c", &since).status, 304);
    let other = get_with(&mut c, "/c", "If-None-Match: \"e0\"\r\n");
    assert_eq!((other.status, other.body.as_slice()), (200, &b"conditional"[..]));
    assert_eq!(origin.hits("/c"), 1, "answered from the cache");
}

#[test]
fn no_store_and_private_are_never_stored() {
    let origin = TestOrigin::start();
    origin.set("/ns", Route::ok(&[("Cache-Control", "no-store, max-age=600")], b"secret"));
    origin.set("/pv", Route::ok(&[("Cache-Control", "private, max-age=600")], b"mine"));
    let node = caching_node(&[origin.url()], |_| {});
    let mut c = node.client();
    for path in ["/ns", "/pv"] {
        for _ in 0..2 {
            let r = c.get(path);
            assert_eq!((r.status, cache_status(&r)), (200, "PASS"), "{path}");
        }
        assert_eq!(origin.hits(path), 2, "{path}");
    }
    assert_eq!(c.get("/ns").body, b"secret");
    assert_eq!(load(node.addr)["cache_bytes"].as_u64(), Some(0), "nothing stored");
}

#[test]
fn vary_keys_on_the_named_request_fields() {
    let origin = TestOrigin::start();
    let fields = [("Cache-Control", "max-age=600"), ("Vary", "Accept-Encoding")];
    origin.set("/v", Route::ok(&fields, b"varied"));
    origin.set("/star", Route::ok(&[("Cache-Control", "max-age=600"), ("Vary", "*")], b"*"));
    let node = caching_node(&[origin.url()], |_| {});
    let mut c = node.client();
    let gzip = "Accept-Encoding: gzip\r\n";
    assert_eq!(cache_status(&get_with(&mut c, "/v", gzip)), "MISS");
    assert_eq!(cache_status(&get_with(&mut c, "/v", "Accept-Encoding: br\r\n")), "MISS");
    assert_eq!(cache_status(&get_with(&mut c, "/v", "")), "MISS");
    assert_eq!(cache_status(&get_with(&mut c, "/v", gzip)), "HIT");
    assert_eq!(cache_status(&get_with(&mut c, "/v", "Accept-Encoding: br\r\n")), "HIT");
    assert_eq!(cache_status(&get_with(&mut c, "/v", "")), "HIT");
    assert_eq!(origin.hits("/v"), 3, "one fetch per distinct value");
    let forwarded = origin.last_request("/v");
    assert_eq!(testkit::header(&forwarded, "accept-encoding"), None, "the last was without");
    for _ in 0..2 {
        assert_eq!(cache_status(&c.get("/star")), "PASS", "Vary: * is never stored");
    }
    assert_eq!(origin.hits("/star"), 2);
}

#[test]
fn default_ttl_applies_without_freshness_information() {
    let origin = TestOrigin::start();
    origin.set("/plain", Route::ok(&[], b"no freshness"));
    origin.set("/moved", Route::ok(&[("Location", "/x")], b"").status(302));
    let long = caching_node(&[origin.url()], |o| o.defaults.ttl = Duration::from_secs(3600));
    let mut c = long.client();
    assert_eq!(cache_status(&c.get("/plain")), "MISS");
    let hit = c.get("/plain");
    assert_eq!((cache_status(&hit), hit.body.as_slice()), ("HIT", &b"no freshness"[..]));
    assert_eq!(origin.hits("/plain"), 1);
    // 302 is not cacheable by default: the default TTL does not apply to it.
    assert_eq!(cache_status(&c.get("/moved")), "PASS");
    assert_eq!(cache_status(&c.get("/moved")), "PASS");
    let zero = caching_node(&[origin.url()], |o| o.defaults.ttl = Duration::ZERO);
    let mut c = zero.client();
    assert_eq!(cache_status(&c.get("/plain")), "MISS");
    assert_eq!(cache_status(&c.get("/plain")), "MISS", "stale at once, no validator");
    assert_eq!(origin.hits("/plain"), 3);
}

#[test]
fn stale_if_error_stands_in_for_a_failed_origin() {
    let origin = TestOrigin::start();
    origin.set("/s", Route::ok(&[("Cache-Control", "max-age=0")], b"stale but useful"));
    let strict = [("Cache-Control", "max-age=0, must-revalidate")];
    origin.set("/strict", Route::ok(&strict, b"must not go stale"));
    let node = caching_node(&[origin.url()], |_| {});
    let mut c = node.client();
    assert_eq!(cache_status(&c.get("/s")), "MISS");
    assert_eq!(cache_status(&c.get("/strict")), "MISS");
    // The origin answers 503: the stale copy stands in.
    origin.set("/s", Route::ok(&[], b"overloaded").status(503));
    let r = c.get("/s");
    assert_eq!((r.status, cache_status(&r)), (200, "STALE"));
    assert_eq!(r.body, b"stale but useful");
    // The origin is gone altogether.
    drop(origin);
    let r = c.get("/s");
    assert_eq!(
        (r.status, cache_status(&r), r.body.as_slice()),
        (200, "STALE", &b"stale but useful"[..])
    );
    let r = c.get("/strict");
    let why = String::from_utf8_lossy(&r.body).into_owned();
    assert_eq!(r.status, 504, "must-revalidate forbids stale, and says 504: {why}");
    assert!(why.contains("cannot connect to origin"), "{why}");
    // Without stale-if-error time, the error shows.
    let origin = TestOrigin::start();
    origin.set("/s", Route::ok(&[("Cache-Control", "max-age=0")], b"x"));
    let node = caching_node(&[origin.url()], |o| o.defaults.stale_if_error = Duration::ZERO);
    let mut c = node.client();
    assert_eq!(c.get("/s").status, 200);
    origin.set("/s", Route::Close);
    assert_eq!(c.get("/s").status, 502);
}

/// GET on a fresh connection that the client closes after, the whole answer read to the
/// server's close: the head, and the body de-chunked when it is chunked.
fn get_to_close(addr: SocketAddr, path: &str, version: &str) -> (Response, Vec<u8>) {
    let mut c = Client::connect(addr);
    c.send(format!("GET {path} {version}\r\nHost: t\r\nConnection: close\r\n\r\n").as_bytes());
    let mut all = Vec::new();
    c.stream.read_to_end(&mut all).unwrap();
    let (head, n) = Response::parse_head(&all).unwrap().expect("a whole head");
    let raw = &all[n..];
    let body = if head.header("transfer-encoding") == Some("chunked") {
        dechunk(raw)
    } else {
        raw.to_vec()
    };
    (head, body)
}

fn dechunk(mut raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for _ in 0..1_000_000 {
        let line_end = raw.windows(2).position(|w| w == b"\r\n").expect("chunk size line");
        let size =
            usize::from_str_radix(std::str::from_utf8(&raw[..line_end]).unwrap(), 16).unwrap();
        raw = &raw[line_end + 2..];
        if size == 0 {
            assert_eq!(raw, b"\r\n", "last chunk, no trailers");
            return out;
        }
        out.extend_from_slice(&raw[..size]);
        assert_eq!(&raw[size..size + 2], b"\r\n");
        raw = &raw[size + 2..];
    }
    panic!("too many chunks");
}

#[test]
fn bodies_are_byte_exact_cached_or_relayed() {
    let origin = TestOrigin::start();
    let small = pattern(40 * 1024, 1);
    let large = pattern(3 * 1024 * 1024 + 17, 2);
    let cc = [("Cache-Control", "max-age=600")];
    origin.set("/small-chunked", Route::ok(&cc, &small).chunked());
    origin.set("/large", Route::ok(&cc, &large));
    origin.set("/large-chunked", Route::ok(&cc, &large).chunked());
    // The test node caches up to 64 KiB per object.
    let node = caching_node(&[origin.url()], |_| {});
    let mut c = node.client();
    assert_eq!(c.get("/small-chunked").body, small);
    let hit = c.get("/small-chunked");
    assert_eq!((cache_status(&hit), hit.body == small), ("HIT", true));
    for _ in 0..2 {
        let r = c.get("/large");
        assert_eq!((r.status, cache_status(&r)), (200, "PASS"));
        assert!(r.body == large, "large body differs");
    }
    assert_eq!(origin.hits("/large"), 2, "too large to store");
    let (head, body) = get_to_close(node.addr, "/large-chunked", "HTTP/1.1");
    assert_eq!(head.header("transfer-encoding"), Some("chunked"));
    assert!(body == large, "re-chunked body differs");
    let (head, body) = get_to_close(node.addr, "/large-chunked", "HTTP/1.0");
    assert_eq!((head.header("transfer-encoding"), head.header("content-length")), (None, None));
    assert!(body == large, "close-delimited body differs");
    // The keep-alive connection still works after relays on others.
    assert_eq!(c.get("/small-chunked").body, small);
    // HEAD: the head of the stored response, no body.
    c.send(b"HEAD /small-chunked HTTP/1.1\r\nHost: t\r\n\r\n");
    let head = c.response(true);
    assert_eq!(head.header("content-length"), Some(small.len().to_string().as_str()));
}

#[test]
fn hundred_concurrent_misses_cause_one_origin_request() {
    let origin = TestOrigin::start();
    let body = pattern(20_000, 9);
    origin.set("/cold", Route::ok(&[("Cache-Control", "max-age=600")], &body));
    origin.hold();
    let node = caching_node(&[origin.url()], |_| {});
    let addr = node.addr;
    let clients: Vec<_> =
        (0..100).map(|_| std::thread::spawn(move || Client::connect(addr).get("/cold"))).collect();
    // Every request is inside the node (the report request makes 101) before the origin
    // may answer, so none can be a hit on an already stored object.
    let deadline = Instant::now() + WAIT;
    while load(addr)["in_flight"].as_u64() < Some(101) {
        assert!(Instant::now() < deadline, "requests never all arrived");
    }
    origin.release();
    for c in clients {
        let r = c.join().unwrap();
        assert_eq!(r.status, 200);
        assert!(r.body == body, "body differs");
    }
    assert_eq!(origin.hits("/cold"), 1);
    assert_eq!(load(addr)["origin_fetches"].as_u64(), Some(1));
}

/// A GET on a raw connection, read until the head and `n` body bytes are in: what a
/// client has received while the origin is still sending.
fn start_get(addr: SocketAddr, path: &str, n: usize) -> (std::net::TcpStream, Vec<u8>, usize) {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(WAIT)).unwrap();
    s.write_all(format!("GET {path} HTTP/1.1\r\nHost: t\r\n\r\n").as_bytes()).unwrap();
    let mut got = Vec::new();
    loop {
        if let Some((_, head)) = Response::parse_head(&got).unwrap() {
            if got.len() >= head + n {
                return (s, got, head);
            }
        }
        let mut chunk = [0u8; 16 * 1024];
        let k = s.read(&mut chunk).expect("read timed out");
        assert!(k > 0, "closed early");
        got.extend_from_slice(&chunk[..k]);
    }
}

/// An origin serving `path` (`len` bytes, fresh for 10 minutes) that is holding its answers
/// after the first `pause` body bytes, a body it sends, and a node caching it.
fn paused_origin(
    path: &str,
    len: usize,
    pause: usize,
    tune: impl FnOnce(&mut OriginConfig),
) -> (TestOrigin, Vec<u8>, TestNode) {
    let origin = TestOrigin::start();
    let body = pattern(len, 4);
    origin.set(path, Route::ok(&[("Cache-Control", "max-age=600")], &body).pause_at(pause));
    origin.hold();
    let node = caching_node(&[origin.url()], tune);
    (origin, body, node)
}

#[test]
fn a_filling_body_streams_to_every_waiting_client() {
    let (origin, body, node) = paused_origin("/growing", 50_000, 10_000, |_| {});
    // Both clients have the head and the first 10,000 bytes while the origin still holds
    // the rest: the body streams to the first and to the one that came after it.
    let (mut first, mut got1, head1) = start_get(node.addr, "/growing", 10_000);
    let (mut second, mut got2, head2) = start_get(node.addr, "/growing", 10_000);
    assert_eq!(origin.hits("/growing"), 1);
    origin.release();
    for (s, got, head) in [(&mut first, &mut got1, head1), (&mut second, &mut got2, head2)] {
        while got.len() < head + body.len() {
            let mut chunk = [0u8; 16 * 1024];
            let k = s.read(&mut chunk).expect("read timed out");
            assert!(k > 0, "closed inside the body");
            got.extend_from_slice(&chunk[..k]);
        }
        let (r, _) = Response::parse_head(got).unwrap().unwrap();
        assert_eq!((r.status, cache_status(&r)), (200, "MISS"));
        assert!(got[head..] == body[..], "streamed body differs");
    }
    let hit = node.client().get("/growing");
    assert_eq!((cache_status(&hit), hit.body == body), ("HIT", true));
    assert_eq!(origin.hits("/growing"), 1);
}

#[test]
fn origin_connections_are_kept_alive_and_a_dropped_one_is_replaced() {
    let origin = TestOrigin::start();
    for path in ["/k1", "/k2", "/k3", "/k4"] {
        origin.set(path, Route::ok(&[("Cache-Control", "max-age=600")], path.as_bytes()));
    }
    let node = caching_node(&[origin.url()], |_| {});
    let mut c = node.client();
    assert_eq!(c.get("/k1").body, b"/k1");
    assert_eq!(c.get("/k2").body, b"/k2");
    assert_eq!(origin.connections(), 1, "both misses on one pooled connection");
    // The origin now closes each connection after one answer, unannounced: /k3 is
    // answered on the pooled connection, which the origin then closes; /k4 finds it dead
    // and is asked again on a fresh one (without the retry it would be a 502).
    origin.close_after_each_answer();
    assert_eq!(c.get("/k3").body, b"/k3");
    let k4 = c.get("/k4");
    assert_eq!((k4.status, k4.body.as_slice()), (200, &b"/k4"[..]));
    assert_eq!(origin.connections(), 2);
    assert_eq!(origin.hits("/k4"), 1, "the request never reached the closed connection's origin");
    assert_eq!(load(node.addr)["origin_errors"].as_u64(), Some(0), "retries are not errors");
}

#[test]
fn an_origin_stalling_mid_body_cuts_the_response_and_stores_nothing() {
    let short = |o: &mut OriginConfig| o.timeout = Duration::from_millis(300);
    let (origin, body, node) = paused_origin("/stall", 30_000, 1000, short);
    let (mut s, mut got, head) = start_get(node.addr, "/stall", 1000);
    // The body never completes: the node gives up on the origin and closes the client
    // connection short of the declared length, instead of leaving it waiting.
    let mut chunk = [0u8; 16 * 1024];
    for _ in 0..1000 {
        let k = s.read(&mut chunk).expect("the node closes, it does not leave the client waiting");
        if k == 0 {
            break;
        }
        got.extend_from_slice(&chunk[..k]);
    }
    assert!(got.len() - head < body.len(), "a cut body: {} bytes", got.len() - head);
    assert_eq!(load(node.addr)["origin_errors"].as_u64(), Some(1));
    // Chunked, the body is read whole before anything is sent: the stall is a 504.
    let route = Route::ok(&[("Cache-Control", "max-age=600")], &body).chunked().pause_at(1000);
    origin.set("/stall-chunked", route);
    let r = node.client().get("/stall-chunked");
    let text = String::from_utf8_lossy(&r.body).into_owned();
    assert_eq!(r.status, 504, "{text}");
    assert_eq!(load(node.addr)["origin_errors"].as_u64(), Some(2));
    origin.release();
    let again = node.client().get("/stall");
    assert_eq!((cache_status(&again), again.body == body), ("MISS", true), "nothing was stored");
}

#[test]
fn origin_failures_answer_502_or_504_with_the_reason() {
    let origin = TestOrigin::start();
    origin.set("/silent", Route::Silent);
    origin.set("/close", Route::Close);
    origin.set("/fine", Route::ok(&[], b"fine"));
    let dead = caching_node(&[dead_url()], |_| {});
    let r = dead.client().get("/x");
    let text = String::from_utf8_lossy(&r.body).into_owned();
    assert_eq!(r.status, 502, "{text}");
    assert!(text.contains("cannot connect to origin"), "{text}");
    let node = caching_node(&[origin.url()], |o| o.timeout = Duration::from_millis(300));
    let mut c = node.client();
    let r = c.get("/silent");
    let text = String::from_utf8_lossy(&r.body).into_owned();
    assert_eq!(r.status, 504, "{text}");
    assert!(text.contains("did not answer within 300 ms"), "{text}");
    let r = c.get("/close");
    assert_eq!(r.status, 502, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(c.get("/fine").body, b"fine", "the connection survives origin errors");
    assert_eq!(load(node.addr)["origin_errors"].as_u64(), Some(2));
    // Origins are tried in order: a dead first one falls through to the next.
    let fallback = caching_node(&[dead_url(), origin.url()], |_| {});
    assert_eq!(fallback.client().get("/fine").body, b"fine");
}

#[test]
fn requests_reach_the_origin_without_hop_by_hop_fields() {
    let origin = TestOrigin::start();
    origin.set("/base/q?x=1", Route::ok(&[("Connection", "close"), ("Keep-Alive", "1")], b"q"));
    let node = caching_node(&[format!("{}/base/", origin.url())], |_| {});
    let mut c = node.client();
    let r = get_with(
        &mut c,
        "/q?x=1",
        "X-Custom: 1\r\nIf-None-Match: \"zz\"\r\nConnection: keep-alive\r\n",
    );
    assert_eq!((r.status, r.body.as_slice()), (200, &b"q"[..]));
    assert_eq!((r.header("keep-alive"), r.header("connection")), (None, None));
    let asked = origin.last_request("/base/q?x=1");
    assert_eq!(testkit::header(&asked, "x-custom"), Some("1"));
    assert_eq!(testkit::header(&asked, "host"), Some(origin.addr.to_string().as_str()));
    assert_eq!(testkit::header(&asked, "if-none-match"), None, "the client's conditions stay here");
    assert_eq!(testkit::header(&asked, "via"), Some("1.1 larder"));
}

#[test]
fn the_load_report_names_the_targets_routers_placed_here() {
    let origin = TestOrigin::start();
    origin.set("/kept", Route::ok(&[("Cache-Control", "max-age=600")], b"kept"));
    origin.set("/never", Route::ok(&[("Cache-Control", "no-store")], b"never"));
    let node = caching_node(&[origin.url()], |_| {});
    let mut c = node.client();
    let (kept, never) = (0x1111_2222_3333_4444u64, 0x5555_6666_7777_8888u64);
    let field = |key: u64| format!("X-Larder-Target: {key:016x} {:016x}\r\n", key ^ 1);
    assert_eq!(get_with(&mut c, "/kept", &field(kept)).status, 200);
    assert_eq!(get_with(&mut c, "/never", &field(never)).status, 200);
    let report: wire::LoadReport = serde_json::from_value(load(node.addr)).expect("a load report");
    let digest = report.holdings.expect("holdings once a router named a target");
    assert!(digest.contains(kept) && digest.contains(kept ^ 1), "the target and its tree");
    assert!(!digest.contains(never), "a response never stored is not held");
}

#[test]
fn the_origins_date_is_kept_stored_and_relayed() {
    let origin = TestOrigin::start();
    // Dated well before now, so the node's own clock could not write the same text.
    let then = std::time::SystemTime::now() - Duration::from_secs(1000);
    let date = http1::format_http_date(then);
    let stored = [("Cache-Control", "max-age=100000"), ("Date", date.as_str())];
    origin.set("/stored", Route::ok(&stored, b"kept"));
    origin.set("/own", Route::ok(&[("Cache-Control", "no-store"), ("Date", &date)], b"own"));
    let node = caching_node(&[origin.url()], |_| {});
    let mut c = node.client();
    for (path, status) in [("/stored", "MISS"), ("/stored", "HIT"), ("/own", "PASS")] {
        let r = c.get(path);
        assert_eq!((cache_status(&r), r.header("date")), (status, Some(date.as_str())), "{path}");
    }
    let age: u64 = c.get("/stored").header("age").unwrap().parse().unwrap();
    assert!(age >= 1000, "the apparent age counts from the origin's Date: {age}");
}

#[test]
fn cdn_cache_control_decides_for_the_node_and_clients_get_cache_control() {
    let origin = TestOrigin::start();
    let fields = [("Cache-Control", "no-store"), ("CDN-Cache-Control", "max-age=600")];
    origin.set("/cdn", Route::ok(&fields, b"for the cdn"));
    let node = caching_node(&[origin.url()], |_| {});
    let mut c = node.client();
    assert_eq!(cache_status(&c.get("/cdn")), "MISS");
    let hit = c.get("/cdn");
    assert_eq!((cache_status(&hit), hit.header("cache-control")), ("HIT", Some("no-store")));
    assert_eq!(origin.hits("/cdn"), 1);
    let off = caching_node(&[origin.url()], |o| o.defaults.targeted = false);
    let mut c = off.client();
    assert_eq!(cache_status(&c.get("/cdn")), "PASS");
}

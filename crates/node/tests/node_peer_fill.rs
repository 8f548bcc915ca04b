//! Peer fill between caching nodes on loopback: a miss a router names a peer for is
//! filled from that peer (only a configured one), a peer fill is never filled from a peer
//! again nor made to wait on itself, and a peer that fails, stalls or dies mid-body gives
//! way to the origin without a client ever getting a mixed body.

mod common;

use common::origin::{cache_status, caching_node, caching_node_at, get_with, load};
use common::{pattern, TestNode, WAIT};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::time::Duration;
use testkit::{Route, TestOrigin};

const ETAG: &str = "\"v1\"";

/// An origin serving `body` at `path` (cacheable, with an ETag).
fn origin_with(path: &str, body: &[u8]) -> TestOrigin {
    let origin = TestOrigin::start();
    origin.set(path, Route::ok(&[("Cache-Control", "max-age=600"), ("ETag", ETAG)], body));
    origin
}

/// A caching node in front of `origin` that may fill from `peers`, waiting `peer_timeout`
/// for one.
fn node_with_peers(origin: &TestOrigin, peers: &[SocketAddr], peer_timeout: Duration) -> TestNode {
    let peers = peers.to_vec();
    caching_node(&[origin.url()], move |o| {
        o.peers = peers;
        o.peer_timeout = peer_timeout;
    })
}

fn peer_field(addr: SocketAddr) -> String {
    let mut line = Vec::new();
    wire::PeerHint(addr).write_field(&mut line);
    String::from_utf8(line).unwrap()
}

#[test]
fn a_miss_is_filled_from_the_named_peer_once() {
    let body = pattern(50_000, 3);
    let origin = origin_with("/o.bin", &body);
    let holder = caching_node(&[origin.url()], |_| {});
    assert_eq!(holder.client().get("/o.bin").body, body);
    assert_eq!(origin.hits("/o.bin"), 1);
    let replica = node_with_peers(&origin, &[holder.addr], WAIT);
    let mut c = replica.client();
    let filled = get_with(&mut c, "/o.bin", &peer_field(holder.addr));
    assert_eq!((filled.status, cache_status(&filled)), (200, "MISS"));
    assert_eq!(filled.body, body, "byte-exact from the peer");
    assert_eq!(filled.header("etag"), Some(ETAG), "the origin's validators kept");
    assert!(filled.header("age").is_some());
    let again = c.get("/o.bin");
    assert_eq!((cache_status(&again), again.body == body), ("HIT", true));
    assert_eq!(origin.hits("/o.bin"), 1, "the origin asked once cluster-wide");
    let report = load(replica.addr);
    assert_eq!(report["peer_fills"].as_u64(), Some(1), "{report}");
    assert_eq!(report["origin_fetches"].as_u64(), Some(0), "{report}");
    let asked = load(holder.addr);
    assert_eq!(asked["hits"].as_u64(), Some(1), "the peer answered from its cache: {asked}");
}

#[test]
fn only_configured_peers_are_asked() {
    let body = pattern(5000, 4);
    let origin = origin_with("/o.bin", &body);
    // Something a request names that the node was not configured with.
    let stranger = origin_with("/o.bin", b"not the origin's object");
    let configured = origin_with("/o.bin", b"unused");
    let node = node_with_peers(&origin, &[configured.addr], WAIT);
    let r = get_with(&mut node.client(), "/o.bin", &peer_field(stranger.addr));
    assert_eq!(r.body, body);
    assert_eq!((stranger.hits("/o.bin"), origin.hits("/o.bin")), (0, 1));
    assert_eq!(load(node.addr)["peer_fills"].as_u64(), Some(0));
}

#[test]
fn a_peer_fill_is_never_filled_from_a_peer_again() {
    let body = pattern(5000, 5);
    let origin = origin_with("/o.bin", &body);
    let other = origin_with("/o.bin", b"a peer's answer");
    let node = node_with_peers(&origin, &[other.addr], WAIT);
    let marked = format!("{}: 1\r\n{}", wire::PEER_FILL_HEADER, peer_field(other.addr));
    let r = get_with(&mut node.client(), "/o.bin", &marked);
    assert_eq!(r.body, body);
    assert_eq!((other.hits("/o.bin"), origin.hits("/o.bin")), (0, 1), "straight to the origin");
}

/// A node a router names as its own peer asks itself: its peer fill must not wait for the
/// fetch that sent it (which waits on it) — without the guard this waits out the peer
/// timeout, far longer than the client waits.
#[test]
fn a_node_naming_itself_does_not_wait_on_itself() {
    let body = pattern(50_000, 6);
    let origin = origin_with("/o.bin", &body);
    let node = caching_node_at(&[origin.url()], |o, me| {
        o.peers = vec![me];
        o.peer_timeout = WAIT * 3;
    });
    let r = get_with(&mut node.client(), "/o.bin", &peer_field(node.addr));
    assert_eq!((r.status, r.body == body), (200, true));
    assert_eq!(origin.hits("/o.bin"), 1);
}

/// How a fake peer ends its answer.
#[derive(Clone, Copy)]
enum PeerEnd {
    /// Sends the head and this many body bytes, then closes: a peer dying mid-body.
    DiesAfter(usize),
    /// Sends nothing at all until the test ends: a stalled peer.
    Silent,
}

/// A fake peer answering one request for an object of `body`'s length with ETag
/// [`ETAG`], ended as `end` says; its address and the request head it read.
fn fake_peer(
    body: Vec<u8>,
    end: PeerEnd,
) -> (SocketAddr, std::thread::JoinHandle<String>, std::sync::mpsc::Sender<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let thread = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        s.set_read_timeout(Some(WAIT)).unwrap();
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") && s.read(&mut byte).unwrap_or(0) == 1 {
            head.push(byte[0]);
        }
        match end {
            PeerEnd::DiesAfter(n) => {
                let answer = format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nETag: {ETAG}\r\n\
                     Cache-Control: max-age=600\r\n\r\n",
                    body.len()
                );
                s.write_all(answer.as_bytes()).unwrap();
                s.write_all(&body[..n]).unwrap();
            }
            PeerEnd::Silent => {
                let _ = done_rx.recv_timeout(WAIT);
            }
        }
        String::from_utf8_lossy(&head).into_owned()
    });
    (addr, thread, done_tx)
}

#[test]
fn a_peer_dying_mid_body_is_completed_from_the_origin() {
    let body = pattern(50_000, 7);
    let origin = origin_with("/o.bin", &body);
    let (peer, asked, _done) = fake_peer(body.clone(), PeerEnd::DiesAfter(20_000));
    let node = node_with_peers(&origin, &[peer], WAIT);
    let mut c = node.client();
    let r = get_with(&mut c, "/o.bin", &peer_field(peer));
    assert_eq!(r.status, 200);
    assert!(r.body == body, "byte-exact: the peer's first bytes, then the origin's rest");
    let asked = asked.join().unwrap().to_ascii_lowercase();
    assert!(asked.contains("x-larder-peer-fill: 1"), "the peer is told: {asked}");
    assert!(!asked.contains("x-larder-peer:"), "and names no peer of its own: {asked}");
    assert_eq!(origin.hits("/o.bin"), 1);
    let resumed = origin.last_request("/o.bin");
    assert_eq!(testkit::header(&resumed, "if-range"), Some(ETAG), "{resumed:?}");
    assert_eq!(testkit::header(&resumed, "range"), Some("bytes=20000-"), "{resumed:?}");
    let again = c.get("/o.bin");
    assert_eq!((cache_status(&again), again.body == body), ("HIT", true), "stored whole");
}

#[test]
fn a_peer_dying_mid_body_of_a_copy_the_origin_changed_is_never_mixed() {
    let body = pattern(50_000, 8);
    let changed = pattern(50_000, 9);
    let origin = TestOrigin::start();
    let fields = [("Cache-Control", "max-age=600"), ("ETag", "\"v2\"")];
    origin.set("/o.bin", Route::ok(&fields, &changed));
    let (peer, _asked, _done) = fake_peer(body.clone(), PeerEnd::DiesAfter(20_000));
    let node = node_with_peers(&origin, &[peer], WAIT);
    let mut s = std::net::TcpStream::connect(node.addr).unwrap();
    s.set_read_timeout(Some(WAIT)).unwrap();
    let request = format!("GET /o.bin HTTP/1.1\r\nHost: t\r\n{}\r\n", peer_field(peer));
    s.write_all(request.as_bytes()).unwrap();
    let mut got = Vec::new();
    s.read_to_end(&mut got).expect("the node ends the cut answer by closing");
    let at = got.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    let head = String::from_utf8_lossy(&got[..at]).to_ascii_lowercase();
    assert!(head.contains("content-length: 50000"), "{head}");
    let sent = &got[at..];
    assert!(sent.len() < body.len(), "cut short, never claimed complete");
    assert_eq!(sent, &body[..sent.len()], "only the peer's copy, nothing of the changed one");
    // Nothing mixed was stored: the next request gets the origin's new copy.
    let fresh = node.client().get("/o.bin");
    assert!(fresh.body == changed, "the changed copy, whole");
}

#[test]
fn a_silent_peer_gives_way_to_the_origin_within_the_peer_timeout() {
    let body = pattern(5000, 10);
    let origin = origin_with("/o.bin", &body);
    let (peer, _asked, done) = fake_peer(Vec::new(), PeerEnd::Silent);
    let node = node_with_peers(&origin, &[peer], Duration::from_millis(200));
    let r = get_with(&mut node.client(), "/o.bin", &peer_field(peer));
    assert!(r.body == body);
    assert_eq!(origin.hits("/o.bin"), 1);
    let report = load(node.addr);
    assert_eq!(report["peer_fill_failures"].as_u64(), Some(1), "{report}");
    assert_eq!(report["peer_fills"].as_u64(), Some(0), "{report}");
    let _ = done.send(());
}

//! Grace (`stale-while-revalidate`): a stale stored object within its window is served at
//! once while one background fetch refreshes it; the next request after the refresh is a
//! hit with the new object. Stale without waiting on a clock: `max-age=0`.

mod common;

use common::origin::{cache_status, caching_node};
use common::{Client, TestNode, WAIT};
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use testkit::{Response, Route, TestOrigin};

/// Poll `done` until it holds, failing after [`WAIT`].
fn until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + WAIT;
    while !done() {
        assert!(Instant::now() < deadline, "gave up waiting for {what}");
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn get(addr: SocketAddr, path: &str) -> Response {
    Client::connect(addr).get(path)
}

/// An origin serving `/g` as version one with `cache_control`, and a node that has stored
/// it; `tune` adjusts the origin settings of the node.
fn stored_stale(
    cache_control: &str,
    tune: impl FnOnce(&mut node::origin::OriginConfig),
) -> (TestOrigin, TestNode) {
    let origin = TestOrigin::start();
    origin.set("/g", Route::ok(&[("Cache-Control", cache_control), ("ETag", "\"g1\"")], b"one"));
    let node = caching_node(&[origin.url()], tune);
    let first = get(node.addr, "/g");
    assert_eq!((cache_status(&first), first.body.as_slice()), ("MISS", &b"one"[..]));
    (origin, node)
}

#[test]
fn stale_within_grace_is_served_at_once_and_refreshed_once() {
    let (origin, node) = stored_stale("max-age=0, stale-while-revalidate=600", |_| {});
    origin.set("/g", Route::ok(&[("Cache-Control", "max-age=600"), ("ETag", "\"g2\"")], b"two"));
    // The refresh is held at the origin: every stale hit meanwhile is answered from the
    // store without waiting for it, and none starts another.
    origin.hold();
    let addr = node.addr;
    let hits: Vec<_> = (0..8).map(|_| std::thread::spawn(move || get(addr, "/g"))).collect();
    for h in hits {
        let r = h.join().unwrap();
        assert_eq!((r.status, cache_status(&r), r.body.as_slice()), (200, "GRACE", &b"one"[..]));
    }
    until("the refresh to reach the origin", || origin.hits("/g") == 2);
    let more = get(addr, "/g");
    assert_eq!((cache_status(&more), more.body.as_slice()), ("GRACE", &b"one"[..]));
    assert_eq!(origin.hits("/g"), 2, "one refresh for every stale hit");
    let asked = origin.last_request("/g");
    assert_eq!(testkit::header(&asked, "if-none-match"), Some("\"g1\""), "conditional");
    origin.release();
    let mut last = more;
    until("the refreshed object", || {
        last = get(addr, "/g");
        cache_status(&last) != "GRACE"
    });
    assert_eq!((cache_status(&last), last.body.as_slice()), ("HIT", &b"two"[..]));
    assert_eq!(origin.hits("/g"), 2);
}

#[test]
fn default_grace_applies_and_revalidation_directives_forbid_it() {
    let grace = |o: &mut node::origin::OriginConfig| {
        o.defaults.stale_while_revalidate = Duration::from_secs(600);
    };
    let (origin, node) = stored_stale("max-age=0", grace);
    let r = get(node.addr, "/g");
    assert_eq!((cache_status(&r), r.body.as_slice()), ("GRACE", &b"one"[..]));
    until("the refresh", || origin.hits("/g") == 2);
    // The response's own zero wins over the default: revalidated before it is served.
    let (origin, node) = stored_stale("max-age=0, stale-while-revalidate=0", grace);
    assert_eq!(cache_status(&get(node.addr, "/g")), "REVALIDATED");
    assert_eq!(origin.hits("/g"), 2);
    for forbids in ["must-revalidate", "no-cache", "proxy-revalidate", "s-maxage=0"] {
        let cc = format!("max-age=0, stale-while-revalidate=600, {forbids}");
        let (origin, node) = stored_stale(&cc, |_| {});
        let r = get(node.addr, "/g");
        assert_eq!((cache_status(&r), r.body.as_slice()), ("REVALIDATED", &b"one"[..]), "{cc}");
        assert_eq!(origin.hits("/g"), 2, "{cc}");
    }
}

//! Purge through the router: `PURGE` on the traffic listener (from `purge_from` networks
//! only) and `POST /purge` on the admin listener reach every caching node, which drop (or,
//! soft, mark stale) the target or every target under a prefix; the answer names on how
//! many nodes it was held.

use std::net::SocketAddr;

use router::config::{NodeConfig, RouterConfig};
use testkit::{Route, TestOrigin};

use crate::caching_nodes::{direct, fresh, CachingNodes};
use crate::support::{Client, RunningRouter};

/// Send `PURGE target` (with `options` as `X-Larder-Purge`) to `addr`: status and body.
async fn purge(addr: SocketAddr, target: &str, options: Option<&str>) -> (u16, String) {
    let mut c = Client::connect(addr).await;
    let field = options.map(|o| format!("X-Larder-Purge: {o}\r\n")).unwrap_or_default();
    c.send_raw(format!("PURGE {target} HTTP/1.1\r\nHost: t\r\n{field}\r\n").as_bytes()).await;
    let r = c.reply(false).await.expect("a reply");
    (r.status, String::from_utf8(r.body).unwrap())
}

/// GET `path` from every node once, so each holds it.
async fn prime(nodes: &[SocketAddr], path: &str) {
    for &addr in nodes {
        direct(addr, path).await;
        assert_eq!(direct(addr, path).await.0, "HIT", "{path} on {addr}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn purge_drops_the_target_on_every_node_that_held_it() {
    let origin = TestOrigin::start();
    for (path, body) in [("/p/a", "a0"), ("/p/b", "b0"), ("/q", "q0")] {
        origin.set(path, fresh(body.as_bytes()));
    }
    let nodes = CachingNodes::start(3, &origin);
    let router = RunningRouter::start(nodes.router_config()).await;

    // Held on two nodes of three: the answer says so, and both fetch the new body next.
    prime(&nodes.addrs[..2], "/p/a").await;
    origin.set("/p/a", fresh(b"a1"));
    assert_eq!(purge(router.addr, "/p/a", None).await, (200, "purged on 2 of 3 nodes\n".into()));
    for &addr in &nodes.addrs[..2] {
        assert_eq!(direct(addr, "/p/a").await, ("MISS".into(), b"a1".to_vec()));
    }
    assert_eq!(purge(router.addr, "/nothing", None).await.1, "purged on 0 of 3 nodes\n");

    // By prefix: /p/a and /p/b go, /q stays.
    for path in ["/p/a", "/p/b", "/q"] {
        prime(&nodes.addrs, path).await;
    }
    origin.set("/p/b", fresh(b"b1"));
    assert_eq!(purge(router.addr, "/p/*", None).await, (200, "purged on 3 of 3 nodes\n".into()));
    for &addr in &nodes.addrs {
        assert_eq!(direct(addr, "/p/a").await.0, "MISS");
        assert_eq!(direct(addr, "/p/b").await, ("MISS".into(), b"b1".to_vec()));
        assert_eq!(direct(addr, "/q").await.0, "HIT");
    }

    // The admin API does the same, the query of a wire::Invalidation.
    let mut c = Client::connect(router.admin).await;
    c.send_raw(b"POST /purge?target=/q HTTP/1.1\r\nHost: a\r\n\r\n").await;
    let r = c.reply(false).await.expect("a reply");
    assert_eq!((r.status, r.body.as_slice()), (200, &b"purged on 3 of 3 nodes\n"[..]));
    assert_eq!(direct(nodes.addrs[0], "/q").await.0, "MISS");
    let mut c = Client::connect(router.admin).await;
    c.send_raw(b"POST /purge?target=q HTTP/1.1\r\nHost: a\r\n\r\n").await;
    assert_eq!(c.reply(false).await.expect("a reply").status, 400);

    assert_eq!(purge(router.addr, "/p/a", Some("sideways")).await.0, 400);
    router.stop().await;

    // A router whose purge_from leaves out 127.0.0.1 refuses, and nothing is dropped.
    let mut config = nodes.router_config();
    config.purge_from = vec!["192.0.2.0/24".parse().unwrap()];
    let router = RunningRouter::start(config).await;
    prime(&nodes.addrs, "/q").await;
    assert_eq!(purge(router.addr, "/q", None).await.0, 403);
    assert_eq!(direct(nodes.addrs[0], "/q").await.0, "HIT");
    router.stop().await;
    nodes.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn soft_purge_revalidates_and_still_stands_in_for_errors() {
    let origin = TestOrigin::start();
    let with_etag = [("Cache-Control", "max-age=600, stale-if-error=600"), ("ETag", "\"e1\"")];
    origin.set("/s", Route::ok(&with_etag, b"s0"));
    let plain = [("Cache-Control", "max-age=600, stale-if-error=600")];
    origin.set("/t", Route::ok(&plain, b"t0"));
    let nodes = CachingNodes::start(2, &origin);
    let router = RunningRouter::start(nodes.router_config()).await;
    prime(&nodes.addrs, "/s").await;
    prime(&nodes.addrs, "/t").await;

    let soft = Some("soft");
    assert_eq!(purge(router.addr, "/s", soft).await, (200, "purged on 2 of 2 nodes\n".into()));
    for &addr in &nodes.addrs {
        assert_eq!(direct(addr, "/s").await, ("REVALIDATED".into(), b"s0".to_vec()));
        assert_eq!(direct(addr, "/s").await.0, "HIT");
    }

    // Soft-purged, then the origin fails: the stale copy answers.
    assert_eq!(purge(router.addr, "/t", soft).await.0, 200);
    origin.set("/t", Route::ok(&plain, b"broken").status(500));
    for &addr in &nodes.addrs {
        assert_eq!(direct(addr, "/t").await, ("STALE".into(), b"t0".to_vec()));
    }
    router.stop().await;
    nodes.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn purge_answers_502_when_no_node_can_be_told() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let config = RouterConfig { nodes: vec![NodeConfig::new(closed)], ..RouterConfig::default() };
    let router = RunningRouter::start(config).await;
    let (status, body) = purge(router.addr, "/a", None).await;
    assert_eq!((status, body.as_str()), (502, "purged on 0 of 1 nodes, 1 unreachable\n"));
    router.stop().await;
}

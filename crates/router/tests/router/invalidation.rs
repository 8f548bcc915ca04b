//! Invalidation through the router: caching larder nodes in front of one test origin all
//! hold a target; an unsafe request for it through the router, answered by one node,
//! drops it on every node (the one that answered drops its own, the router tells the
//! others). And a client cannot reach the nodes' invalidation path through the router.

use std::time::Instant;

use testkit::TestOrigin;

use crate::caching_nodes::{direct, fresh, CachingNodes};
use crate::support::{Client, RunningRouter, LIMIT};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unsafe_request_through_the_router_invalidates_every_node() {
    let origin = TestOrigin::start();
    origin.set("/obj?v", fresh(b"v0"));
    let nodes = CachingNodes::start(3, &origin);
    let router = RunningRouter::start(nodes.router_config()).await;
    for &addr in &nodes.addrs {
        direct(addr, "/obj?v").await;
        assert_eq!(direct(addr, "/obj?v").await, ("HIT".into(), b"v0".to_vec()));
    }
    for (i, method) in ["POST", "PUT", "DELETE"].iter().enumerate() {
        let new = format!("v{}", i + 1).into_bytes();
        origin.set("/obj?v", fresh(&new));
        let mut c = Client::connect(router.addr).await;
        let raw = format!("{method} /obj?v HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\nx=1");
        c.send_raw(raw.as_bytes()).await;
        let r = c.reply(false).await.expect("a reply");
        assert_eq!((r.status, r.body.as_slice()), (200, new.as_slice()), "{method}");
        assert_eq!(origin.last_body("/obj?v"), Some((method.to_string(), b"x=1".to_vec())));
        // The answering node dropped its copy before answering; the others hear from the
        // router after the answer: each is asked until it fetches the new body.
        for &addr in &nodes.addrs {
            let deadline = Instant::now() + LIMIT;
            loop {
                let (how, body) = direct(addr, "/obj?v").await;
                if body == new {
                    assert_eq!(how, "MISS", "{method}: node {addr}");
                    break;
                }
                assert_eq!(how, "HIT", "{method}: node {addr} still holds the old copy");
                assert!(Instant::now() < deadline, "{method}: node {addr} was never told");
                tokio::task::yield_now().await;
            }
        }
    }
    let mut c = Client::connect(router.addr).await;
    let inv = wire::Invalidation::exact("/obj?v");
    c.send_raw(format!("POST {} HTTP/1.1\r\nHost: t\r\n\r\n", inv.request_target()).as_bytes())
        .await;
    assert_eq!(c.reply(false).await.expect("a reply").status, 403, "a client may not invalidate");
    router.stop().await;
    nodes.stop();
}

//! Locality policies through the real router: `lard` keeps a target on its node until
//! LARD's thresholds are crossed; `lard-r` adds a node to a hot target's server set.
//! Gated back-ends hold responses, so the in-flight load is exact, not timed.

use crate::support::{admin_json, config, Backend, BackendOptions, Client, RunningRouter};

async fn gated(name: &str) -> Backend {
    Backend::start_with(name, BackendOptions { gated: true, ..Default::default() }).await
}

/// Send GET `path` on a fresh connection; wait until one of `backends` holds it and
/// return that backend's index and the connection (its reply comes after release).
async fn hold(router: &RunningRouter, backends: &[&Backend], path: &str) -> (usize, Client) {
    let mut client = Client::connect(router.addr).await;
    client.send_raw(format!("GET {path} HTTP/1.1\r\nHost: t\r\n\r\n").as_bytes()).await;
    let arrivals: Vec<_> = backends.iter().map(|b| Box::pin(b.arrival())).collect();
    let (arrived, index, _) = futures_select_all(arrivals).await;
    assert_eq!(arrived, path);
    (index, client)
}

/// The first of several futures to finish (tokio's select over a list).
async fn futures_select_all<F: std::future::Future + Unpin>(
    mut futures: Vec<F>,
) -> (F::Output, usize, Vec<F>) {
    std::future::poll_fn(move |cx| {
        for i in 0..futures.len() {
            if let std::task::Poll::Ready(v) = std::pin::Pin::new(&mut futures[i]).poll(cx) {
                let rest = std::mem::take(&mut futures);
                return std::task::Poll::Ready((v, i, rest));
            }
        }
        std::task::Poll::Pending
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lard_keeps_a_target_on_its_node_until_the_thresholds_are_crossed() {
    let (x, y) = (gated("x").await, gated("y").await);
    let mut cfg = config(&[&x, &y], "lard");
    cfg.policy.t_low = 1.0;
    cfg.policy.t_high = 2.0;
    let router = RunningRouter::start(cfg).await;
    let backends = [&x, &y];

    // Loads 0, 1, 2 on the target's node: never above T_high, the target stays.
    let (home, c1) = hold(&router, &backends, "/a.html").await;
    let (second, c2) = hold(&router, &backends, "/a.html").await;
    let (third, c3) = hold(&router, &backends, "/a.html").await;
    assert_eq!((second, third), (home, home), "below T_high the target stays put");
    // Load 3 > T_high while the other node is below T_low: the target moves.
    let (fourth, c4) = hold(&router, &backends, "/a.html").await;
    assert_ne!(fourth, home, "above T_high with an idle node, the target moves");

    x.release(10);
    y.release(10);
    let names = ["x", "y"];
    for (mut c, want) in [(c1, home), (c2, home), (c3, home), (c4, fourth)] {
        let reply = c.reply(false).await.unwrap();
        assert_eq!(reply.node(), names[want]);
    }
    // Once moved it stays on its new node.
    let mut c = Client::connect(router.addr).await;
    assert_eq!(c.get("/a.html").await.node(), names[fourth]);
    let stats = admin_json(router.admin, "/stats").await;
    assert_eq!(stats["policy"]["name"], "lard");
    assert_eq!(stats["policy"]["reassignments"], 1);
    router.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lard_r_adds_a_node_for_a_hot_target_under_load() {
    let (x, y, z) = (gated("x").await, gated("y").await, gated("z").await);
    let mut cfg = config(&[&x, &y, &z], "lard-r");
    cfg.policy.t_low = 1.0;
    cfg.policy.t_high = 2.0;
    let router = RunningRouter::start(cfg).await;
    let backends = [&x, &y, &z];

    let (home, c1) = hold(&router, &backends, "/hot.html").await;
    let (_, c2) = hold(&router, &backends, "/hot.html").await;
    let (_, c3) = hold(&router, &backends, "/hot.html").await;
    let (replica, c4) = hold(&router, &backends, "/hot.html").await;
    assert_ne!(replica, home, "the hot target gained a second node");

    let targets = router.handle.targets(10);
    let hot = &targets["targets"][0];
    assert_eq!(hot["path"], "/hot.html");
    assert_eq!(hot["nodes"].as_array().unwrap().len(), 2, "{targets}");
    let stats = admin_json(router.admin, "/stats").await;
    assert_eq!(stats["policy"]["replications"], 1);

    for b in backends {
        b.release(10);
    }
    for mut c in [c1, c2, c3, c4] {
        assert_eq!(c.reply(false).await.unwrap().status, 200);
    }
    router.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lard_r_names_the_first_node_to_a_replica_with_peer_fill() {
    let (x, y, z) = (gated("x").await, gated("y").await, gated("z").await);
    let mut cfg = config(&[&x, &y, &z], "lard-r");
    cfg.policy.t_low = 1.0;
    cfg.policy.t_high = 2.0;
    cfg.peer_fill = true;
    let router = RunningRouter::start(cfg).await;
    let backends = [&x, &y, &z];

    let (home, c1) = hold(&router, &backends, "/hot.html").await;
    let (_, c2) = hold(&router, &backends, "/hot.html").await;
    let (_, c3) = hold(&router, &backends, "/hot.html").await;
    let (replica, c4) = hold(&router, &backends, "/hot.html").await;
    assert_ne!(replica, home, "the hot target gained a second node");
    for b in backends {
        b.release(10);
    }
    for mut c in [c1, c2, c3, c4] {
        assert_eq!(c.reply(false).await.unwrap().status, 200);
    }
    let peer = |seen: &crate::support::Seen| seen.header(wire::PEER_HEADER).map(str::to_string);
    let at_home: Vec<_> = backends[home].seen().iter().map(peer).collect();
    assert!(at_home.iter().all(Option::is_none), "the first node fills itself: {at_home:?}");
    let at_replica: Vec<_> = backends[replica].seen().iter().map(peer).collect();
    let named = backends[home].addr.to_string();
    assert_eq!(at_replica, vec![Some(named)], "the replica is told the first node");
    router.stop().await;
}

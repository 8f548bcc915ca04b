//! Faults under load that the other files do not cover: a node slowed down (answering,
//! but a piece at a time), a node restarted on its port while clients keep going, and a
//! router stopped with many requests in flight. A node killed under load is in
//! `failover`, a hung node in `bad_nodes`, reloads under load in `under_load`; real
//! processes stopped with SIGSTOP, SIGHUP and SIGTERM are `bench/faults.sh`'s.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tokio::task::JoinSet;

use crate::fake::{FakeNode, Script};
use crate::support::{
    admin_json, config, health_checked_config, stats_until, Backend, BackendOptions, Client,
    RunningRouter, LIMIT,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slowed_node_is_waited_for_and_not_failed() {
    let body = vec![b's'; 20_000];
    let mut reply =
        format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len()).into_bytes();
    reply.extend_from_slice(&body);
    let slow = FakeNode::start(Script::Trickle(reply, 20)).await;
    let mut c = config(&[], "rr");
    c.nodes.push(router::NodeConfig { name: "slow".into(), ..router::NodeConfig::new(slow.addr) });
    c.health.fall = 1;
    let router = RunningRouter::start(c).await;
    for i in 0..3 {
        // The node closes after each answer (no Connection header, the body framed by
        // length: the router sees the end and connects afresh).
        let mut client = Client::connect(router.addr).await;
        let got = client.get(&format!("/s{i}")).await;
        assert_eq!(got.status, 200, "request {i}");
        assert!(got.body == body, "request {i}: the body arrived whole");
    }
    let stats = admin_json(router.admin, "/stats").await;
    assert_eq!(stats["nodes"][0]["up"], true, "a slow node is not a failed one: {stats}");
    router.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_restarted_on_its_port_under_load_fails_no_get_and_gets_traffic_again() {
    let a = Backend::start("a").await;
    let mut b = Backend::start("b").await;
    let b_addr = b.addr;
    let c = health_checked_config(&[&a, &b], "rr");
    let router = RunningRouter::start(c).await;
    let stop = Arc::new(AtomicBool::new(false));
    let mut clients = JoinSet::new();
    for k in 0..4 {
        let (addr, stop) = (router.addr, stop.clone());
        clients.spawn(async move {
            let mut client = Client::connect(addr).await;
            let (mut failed, mut served_by_b) = (Vec::new(), 0usize);
            // Bounded: the test stops the clients long before this many requests.
            for i in 0..200_000 {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                let path = format!("/r/{k}/{i}");
                let reply = client.get(&path).await;
                if reply.status != 200 || !reply.body.ends_with(path.as_bytes()) {
                    failed.push((path, reply.status));
                }
                served_by_b += usize::from(reply.node() == "b");
            }
            (failed, served_by_b)
        });
    }
    // Traffic on both, then b dies (its pooled connections with it) and comes back.
    let b_serving = |s: &serde_json::Value| s["nodes"][1]["requests"].as_u64() > Some(50);
    assert!(stats_until(&router, b_serving).await, "b serves before the restart");
    b.kill().await;
    assert!(stats_until(&router, |s| s["nodes"][1]["up"] == false).await, "b taken down");
    let back = Backend::start_on("b", b_addr).await;
    assert!(stats_until(&router, |s| s["nodes"][1]["up"] == true).await, "b back up");
    let mut waited = 0;
    while back.seen().len() < 100 {
        assert!(waited < 1000, "the restarted b gets traffic again");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        waited += 1;
    }
    stop.store(true, Ordering::SeqCst);
    while let Some(r) = tokio::time::timeout(LIMIT, clients.join_next()).await.unwrap() {
        let (failed, _) = r.unwrap();
        assert!(failed.is_empty(), "{} failed, e.g. {:?}", failed.len(), failed.first());
    }
    router.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_router_stopped_with_many_requests_in_flight_answers_them_all() {
    const IN_FLIGHT: usize = 16;
    let a = Backend::start_with("a", BackendOptions { gated: true, ..Default::default() }).await;
    let router = RunningRouter::start(config(&[&a], "rr")).await;
    let mut idle = Client::connect(router.addr).await;
    a.release(1);
    assert_eq!(idle.get("/warm").await.status, 200);
    assert_eq!(a.arrival().await, "/warm");
    let mut busy = Vec::new();
    for i in 0..IN_FLIGHT {
        let mut client = Client::connect(router.addr).await;
        client.send_raw(format!("GET /held/{i} HTTP/1.1\r\nHost: t\r\n\r\n").as_bytes()).await;
        busy.push(client);
    }
    for _ in 0..IN_FLIGHT {
        a.arrival().await;
    }
    let stopping = tokio::spawn(router.stop());
    // The idle connection closing says the drain has begun: only then the answers go.
    assert!(idle.closed().await, "an idle keep-alive connection is closed at once");
    a.release(IN_FLIGHT);
    for (i, client) in busy.iter_mut().enumerate() {
        let reply = client.reply(false).await.expect("the request in flight is answered");
        assert_eq!(reply.status, 200, "request {i}");
        assert!(reply.body.ends_with(format!("/held/{i}").as_bytes()));
        assert_eq!(reply.header("connection"), Some("close"), "then the connection closes");
    }
    tokio::time::timeout(LIMIT, stopping).await.unwrap().unwrap();
}

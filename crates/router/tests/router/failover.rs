//! A node killed in the middle of 10,000 GETs: every GET still succeeds. Requests that
//! were in flight on the dead node, or were sent to it before it was ejected, fail there
//! before any response byte and are retried once on another node.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::support::{admin_json, config, Backend, Client, RunningRouter, LIMIT};

const TOTAL: usize = 10_000;
const CLIENTS: usize = 8;
const KILL_AFTER: usize = 3_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_a_node_mid_run_fails_no_get() {
    let a = Backend::start("a").await;
    let b = Backend::start("b").await;
    let mut c = Backend::start("c").await;
    let router = RunningRouter::start(config(&[&a, &b, &c], "rr")).await;
    let done = Arc::new(AtomicUsize::new(0));
    let reached_kill = Arc::new(tokio::sync::Notify::new());

    let mut clients = tokio::task::JoinSet::new();
    for k in 0..CLIENTS {
        let (addr, done, reached_kill) = (router.addr, done.clone(), reached_kill.clone());
        clients.spawn(async move {
            let mut client = Client::connect(addr).await;
            let mut failures = Vec::new();
            for i in 0..TOTAL / CLIENTS {
                let path = format!("/f/{k}/{i}");
                let reply = client.get(&path).await;
                if reply.status != 200 || !reply.body.ends_with(path.as_bytes()) {
                    failures.push((path, reply.status));
                }
                if done.fetch_add(1, Ordering::SeqCst) + 1 == KILL_AFTER {
                    reached_kill.notify_one();
                }
            }
            failures
        });
    }
    tokio::time::timeout(LIMIT, reached_kill.notified()).await.expect("progress");
    let before_kill = c.seen().len();
    c.kill().await;

    let mut failures = Vec::new();
    while let Some(result) = tokio::time::timeout(LIMIT, clients.join_next()).await.unwrap() {
        failures.extend(result.unwrap());
    }
    assert!(failures.is_empty(), "{} failed, e.g. {:?}", failures.len(), &failures[..1]);
    assert_eq!(done.load(Ordering::SeqCst), TOTAL);
    assert!(before_kill > 0, "the killed node had been serving");
    let served = a.seen().len() + b.seen().len() + c.seen().len();
    assert!(served >= TOTAL, "every GET was served by some node ({served})");

    let stats = admin_json(router.admin, "/stats").await;
    let node_c = &stats["nodes"][2];
    assert_eq!(node_c["name"], "c");
    assert_eq!(node_c["up"], false, "the dead node was ejected");
    router.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_with_a_body_moves_on_when_the_connect_fails() {
    let a = Backend::start("a").await;
    let mut b = Backend::start("b").await;
    let router = RunningRouter::start(config(&[&a, &b], "rr")).await;
    b.kill().await;
    let mut client = Client::connect(router.addr).await;
    for i in 0..2 {
        let body = format!("upload {i}");
        let raw = format!(
            "POST /p{i} HTTP/1.1\r\nHost: t\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        client.send_raw(raw.as_bytes()).await;
        let reply = client.reply(false).await.unwrap();
        assert_eq!((reply.status, reply.node()), (200, "a"), "nothing was sent to b, so it moved");
    }
    let bodies: Vec<Vec<u8>> = a.seen().into_iter().map(|s| s.body).collect();
    assert_eq!(bodies, vec![b"upload 0".to_vec(), b"upload 1".to_vec()]);
    router.stop().await;
}

//! Nodes that misbehave: a malformed response is a 502 (never "no node available") and
//! still leaves an access-log line; a node that hangs holds a request no longer than the
//! upstream timeout, and a GET it held is answered by another node.

use crate::fake::{FakeNode, Script};
use crate::support::{config, Backend, Client, RunningRouter};

/// A config whose only node is `node`.
fn only(node: &FakeNode) -> router::RouterConfig {
    let mut c = router::RouterConfig {
        nodes: vec![router::NodeConfig::new(node.addr)],
        ..router::RouterConfig::default()
    };
    c.timeouts.drain = std::time::Duration::from_millis(5_000);
    c
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_response_is_a_502() {
    for garbage in [&b"garbage\r\n\r\n"[..], b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n"] {
        let node = FakeNode::start(Script::Reply(garbage.to_vec())).await;
        let router = RunningRouter::start(only(&node)).await;
        let mut client = Client::connect(router.addr).await;
        let reply = client.get("/x").await;
        assert_eq!(reply.status, 502, "{}", String::from_utf8_lossy(garbage));
        assert!(!node.received().is_empty());
        router.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_chunk_size_in_a_response_still_leaves_an_access_log_line() {
    let dir = testkit::TempDir::new("router-bad-chunk");
    let log = dir.0.join("access.log");
    let node = FakeNode::start(Script::Reply(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\nzz\r\n".to_vec(),
    ))
    .await;
    let mut c = only(&node);
    c.access_log = Some(log.to_string_lossy().into_owned());
    let router = RunningRouter::start(c).await;
    let mut client = Client::connect(router.addr).await;
    client.send_raw(b"GET /bad-chunk HTTP/1.1\r\nHost: t\r\n\r\n").await;
    assert!(client.reply(false).await.is_none(), "the response is cut off");
    router.stop().await;
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("\"GET /bad-chunk HTTP/1.1\" 200 "), "{text:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_node_holds_a_request_no_longer_than_the_upstream_timeout() {
    let hung = FakeNode::start(Script::Hang).await;
    let good = Backend::start("good").await;
    let mut c = config(&[&good], "rr");
    c.nodes.insert(0, router::NodeConfig::new(hung.addr));
    c.timeouts.upstream_response = std::time::Duration::from_millis(300);
    let router = RunningRouter::start(c).await;
    // rr sends one of the first two GETs to the hung node: both are answered by the other.
    let mut client = Client::connect(router.addr).await;
    for i in 0..2 {
        let reply = client.get(&format!("/g{i}")).await;
        assert_eq!((reply.status, reply.header("x-larder-node")), (200, Some("good")), "GET {i}");
    }
    router.stop().await;

    // A POST cannot be sent twice, and a GET finds no other node: the silence is a 504.
    let mut c = only(&hung);
    c.timeouts.upstream_response = std::time::Duration::from_millis(300);
    let router = RunningRouter::start(c).await;
    let mut client = Client::connect(router.addr).await;
    client.send_raw(b"POST /p HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\nhi").await;
    assert_eq!(client.reply(false).await.map(|r| r.status), Some(504));
    let mut client = Client::connect(router.addr).await;
    assert_eq!(client.get("/g").await.status, 504);
    router.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_held_by_a_node_that_health_checks_take_down_moves_on() {
    let hung = FakeNode::start(Script::HangFrom("/stuck")).await;
    let good = Backend::start("good").await;
    let mut c = config(&[&good], "rr");
    c.nodes.insert(0, router::NodeConfig::new(hung.addr));
    c.health.path = Some("/health".to_string());
    c.health.interval = std::time::Duration::from_millis(50);
    c.health.timeout = std::time::Duration::from_millis(100);
    c.health.fall = 2;
    // The upstream timeout alone would hold the request past the test's own limit.
    c.timeouts.upstream_response = std::time::Duration::from_millis(120_000);
    let router = RunningRouter::start(c).await;
    // rr sends one of these to the fake node, which then stops answering anything: its
    // health checks fail, it is taken down, and the GET it held goes to the other node.
    let mut client = Client::connect(router.addr).await;
    for i in 0..2 {
        let reply = client.get(&format!("/stuck-{i}")).await;
        assert_eq!((reply.status, reply.header("x-larder-node")), (200, Some("good")), "GET {i}");
    }
    router.stop().await;
}

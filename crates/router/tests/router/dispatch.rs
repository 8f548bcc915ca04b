//! Per-request dispatch on keep-alive connections, header rewriting, bodies.

use std::collections::HashMap;

use crate::support::{config, Backend, Client, RunningRouter};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_request_on_one_connection_is_dispatched_on_its_own() {
    let (a, b) = (Backend::start("a").await, Backend::start("b").await);
    let router = RunningRouter::start(config(&[&a, &b], "hash")).await;
    let mut client = Client::connect(router.addr).await;
    let mut placed = HashMap::new();
    for i in 0..16 {
        let r = client.get(&format!("/t{i}.html")).await;
        assert_eq!(r.status, 200);
        assert_eq!(r.body, format!("{} /t{i}.html", r.node()).into_bytes());
        placed.insert(i, r.node().to_string());
    }
    for i in 0..16 {
        let r = client.get(&format!("/t{i}.html")).await;
        assert_eq!(r.node(), placed[&i], "a target stays on its node");
    }
    let used: std::collections::HashSet<_> = placed.values().collect();
    assert_eq!(used.len(), 2, "one client connection reached both nodes: {placed:?}");
    assert!(a.connections() >= 1 && b.connections() >= 1);
    assert_eq!(a.seen().len() + b.seen().len(), 32);
    router.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hop_by_hop_headers_go_and_forwarding_headers_come() {
    let a = Backend::start("a").await;
    let router = RunningRouter::start(config(&[&a], "rr")).await;
    let mut client = Client::connect(router.addr).await;
    client
        .send_raw(
            b"GET /h HTTP/1.1\r\nHost: test\r\nConnection: keep-alive, X-Private\r\n\
              X-Private: secret\r\nKeep-Alive: timeout=9\r\nTE: trailers\r\nUpgrade: h2c\r\n\
              Proxy-Authorization: x\r\nX-Forwarded-For: 203.0.113.9\r\nVia: 1.1 edge\r\n\r\n",
        )
        .await;
    let reply = client.reply(false).await.unwrap();
    assert_eq!(reply.status, 200);
    assert_eq!(reply.node(), "a");
    assert_eq!(reply.header("via"), Some("1.1 larder"));
    assert_eq!(reply.header("keep-alive"), None, "the back-end's Keep-Alive is hop-by-hop");
    let seen = &a.seen()[0];
    for h in ["connection", "x-private", "keep-alive", "te", "upgrade", "proxy-authorization"] {
        assert_eq!(seen.header(h), None, "{h} must not be forwarded");
    }
    assert_eq!(seen.header("x-forwarded-for"), Some("203.0.113.9, 127.0.0.1"));
    assert_eq!(seen.header("via"), Some("1.1 edge, 1.1 larder"));
    assert_eq!(seen.header("host"), Some("test"));
    router.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_stream_both_ways() {
    let a = Backend::start("a").await;
    let router = RunningRouter::start(config(&[&a], "rr")).await;
    let mut client = Client::connect(router.addr).await;

    // A chunked upload, re-encoded canonically (extensions and trailers dropped).
    client
        .send_raw(
            b"POST /up HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n\
              5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: 1\r\n\r\n",
        )
        .await;
    assert_eq!(client.reply(false).await.unwrap().status, 200);
    // A Content-Length upload that waits for 100 Continue, in two pieces.
    client
        .send_raw(
            b"PUT /put HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\nExpect: 100-continue\r\n\r\n",
        )
        .await;
    let mut interim = [0u8; 25];
    client.read_exact(&mut interim).await;
    assert_eq!(&interim, b"HTTP/1.1 100 Continue\r\n\r\n");
    client.send_raw(b"0123456789").await;
    assert_eq!(client.reply(false).await.unwrap().status, 200);
    let seen = a.seen();
    assert_eq!(seen[0].body, b"hello world");
    assert_eq!(seen[0].header("transfer-encoding"), Some("chunked"));
    assert_eq!(seen[1].body, b"0123456789");
    assert_eq!(seen[1].header("expect"), None);

    // A response far larger than the router's buffers, then the connection goes on.
    let big = 3 * 1024 * 1024 + 7;
    let r = client.get(&format!("/big/{big}")).await;
    assert_eq!(r.body.len(), big);
    let r = client.get("/after").await;
    assert_eq!(r.body, b"a /after");
    // HEAD keeps the announced length and sends no body.
    client.send_raw(b"HEAD /big/100 HTTP/1.1\r\nHost: t\r\n\r\n").await;
    let r = client.reply(true).await.unwrap();
    assert_eq!((r.status, r.header("content-length")), (200, Some("100")));
    // An HTTP/1.0 client without keep-alive gets its answer, then the close.
    client.send_raw(b"GET /old HTTP/1.0\r\n\r\n").await;
    let r = client.reply(false).await.unwrap();
    assert_eq!(r.header("connection"), Some("close"));
    assert!(client.closed().await);
    router.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_host_in_key_each_site_is_placed_on_its_own() {
    let (a, b) = (Backend::start("a").await, Backend::start("b").await);
    let sites: Vec<String> = (0..12).map(|i| format!("site{i}.test")).collect();
    for host_in_key in [false, true] {
        let mut c = config(&[&a, &b], "hash");
        c.mapping.host_in_key = host_in_key;
        let router = RunningRouter::start(c).await;
        let mut client = Client::connect(router.addr).await;
        let mut used = std::collections::HashSet::new();
        for host in &sites {
            for _ in 0..2 {
                let head = format!("GET /index.html HTTP/1.1\r\nHost: {host}\r\n\r\n");
                client.send_raw(head.as_bytes()).await;
                let r = client.reply(false).await.unwrap();
                assert_eq!(r.status, 200);
                used.insert(r.node().to_string());
            }
        }
        let want = if host_in_key { 2 } else { 1 };
        assert_eq!(used.len(), want, "host_in_key = {host_in_key}: one path on 12 sites");
        router.stop().await;
    }
}

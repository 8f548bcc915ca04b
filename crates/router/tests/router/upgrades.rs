//! Protocol upgrades (WebSocket handshakes) through the router: the request reaches the
//! node with its `Upgrade`, the node's `101` comes back, and then both directions are
//! tunnelled byte-exact (bytes sent right behind the handshake included) until a side
//! closes or the router drains; a node that does not upgrade answers as usual, and a
//! router with upgrades off refuses them with 501.

use std::net::SocketAddr;
use std::time::Duration;

use router::config::{NodeConfig, RouterConfig};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::support::{stats_until, RunningRouter, LIMIT};

const HANDSHAKE: &[u8] = b"GET /chat HTTP/1.1\r\nHost: t\r\nConnection: Upgrade\r\n\
    Upgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
    Sec-WebSocket-Version: 13\r\n\r\n";

/// A node that answers an upgrade request with 101 and then echoes every byte, or with a
/// plain 200 when `upgrades` is false; each connection's request head goes to `heads`.
async fn echo_node(upgrades: bool) -> (SocketAddr, tokio::sync::mpsc::UnboundedReceiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            let tx = tx.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let end = loop {
                    let mut chunk = [0u8; 4096];
                    let n = match conn.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => n,
                    };
                    buf.extend_from_slice(&chunk[..n]);
                    if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        break at + 4;
                    }
                };
                let _ = tx.send(String::from_utf8_lossy(&buf[..end]).into_owned());
                if !upgrades {
                    let _ = conn.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nno").await;
                    return;
                }
                let answer = b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\
                    Connection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n";
                if conn.write_all(answer).await.is_err()
                    || conn.write_all(&buf[end..]).await.is_err()
                {
                    return;
                }
                let (mut r, mut w) = conn.split();
                let _ = tokio::io::copy(&mut r, &mut w).await;
                let _ = w.shutdown().await;
            });
        }
    });
    (addr, rx)
}

fn router_config(node: SocketAddr) -> RouterConfig {
    let mut c = RouterConfig {
        nodes: vec![NodeConfig { name: "ws".into(), ..NodeConfig::new(node) }],
        node_header: true,
        ..RouterConfig::default()
    };
    c.timeouts.drain = Duration::from_millis(5_000);
    c
}

/// Read a response head off `s` (bounded): the head, and the bytes read past it.
async fn read_head(s: &mut TcpStream) -> (String, Vec<u8>) {
    let mut buf = Vec::new();
    loop {
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let rest = buf.split_off(at + 4);
            return (String::from_utf8(buf).unwrap(), rest);
        }
        let mut chunk = [0u8; 4096];
        let n = tokio::time::timeout(LIMIT, s.read(&mut chunk)).await.expect("a head").unwrap();
        assert!(n > 0, "closed before a head: {:?}", String::from_utf8_lossy(&buf));
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// Read exactly `n` bytes (after `have`), bounded.
async fn read_exact(s: &mut TcpStream, mut have: Vec<u8>, n: usize) -> Vec<u8> {
    while have.len() < n {
        let mut chunk = vec![0u8; 64 * 1024];
        let got = tokio::time::timeout(LIMIT, s.read(&mut chunk)).await.expect("echo").unwrap();
        assert!(got > 0, "closed after {} of {n} bytes", have.len());
        have.extend_from_slice(&chunk[..got]);
    }
    have
}

/// True once `s` reads its end (bounded).
async fn ends(s: &mut TcpStream) -> bool {
    let mut chunk = [0u8; 64];
    matches!(tokio::time::timeout(LIMIT, s.read(&mut chunk)).await, Ok(Ok(0) | Err(_)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_websocket_is_tunnelled_byte_exact_both_ways_until_the_client_closes() {
    let (node, mut heads) = echo_node(true).await;
    let router = RunningRouter::start(router_config(node)).await;
    let mut s = TcpStream::connect(router.addr).await.unwrap();
    // The first frame goes right behind the handshake, before the 101 came back.
    s.write_all(&[HANDSHAKE, b"early"].concat()).await.unwrap();
    let (head, rest) = read_head(&mut s).await;
    assert!(head.starts_with("HTTP/1.1 101 "), "{head}");
    assert!(head.contains("Upgrade: websocket\r\n") && head.contains("Connection: upgrade\r\n"));
    assert!(head.contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"), "{head}");
    let seen = heads.recv().await.unwrap();
    assert!(seen.contains("Upgrade: websocket\r\n") && seen.contains("Sec-WebSocket-Key: "));
    assert_eq!(read_exact(&mut s, rest, 5).await, b"early");

    // Messages from 1 byte to 1 MiB, each echoed whole while the next waits.
    for (i, size) in [1usize, 125, 65_536, 1 << 20].into_iter().enumerate() {
        let message: Vec<u8> = (0..size).map(|j| (j * 31 + i) as u8).collect();
        let (mut r, mut w) = s.split();
        let send = async { w.write_all(&message).await.unwrap() };
        let mut got = Vec::new();
        let receive = async {
            while got.len() < size {
                let mut chunk = vec![0u8; 64 * 1024];
                let n = tokio::time::timeout(LIMIT, r.read(&mut chunk)).await.unwrap().unwrap();
                assert!(n > 0, "tunnel closed");
                got.extend_from_slice(&chunk[..n]);
            }
        };
        tokio::join!(send, receive);
        assert!(got == message, "message of {size} bytes differs");
    }
    // The client closes its half: the node sees the end, closes, and so does the tunnel.
    s.shutdown().await.unwrap();
    assert!(ends(&mut s).await, "the tunnel closed after the client did");
    let done = |s: &serde_json::Value| s["nodes"][0]["in_flight"] == 0;
    assert!(stats_until(&router, done).await, "no longer in flight once closed");
    router.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drain_closes_an_open_tunnel() {
    let (node, _heads) = echo_node(true).await;
    let router = RunningRouter::start(router_config(node)).await;
    let mut s = TcpStream::connect(router.addr).await.unwrap();
    s.write_all(HANDSHAKE).await.unwrap();
    let (head, _) = read_head(&mut s).await;
    assert!(head.starts_with("HTTP/1.1 101 "), "{head}");
    let stats = crate::support::admin_json(router.admin, "/stats").await;
    assert_eq!(stats["nodes"][0]["in_flight"], 1, "a tunnel is in flight: {stats}");
    let stopping = tokio::spawn(router.stop());
    assert!(ends(&mut s).await, "the drain ended the tunnel");
    tokio::time::timeout(LIMIT, stopping).await.expect("the router stopped").unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_that_does_not_upgrade_answers_as_usual_and_upgrades_can_be_turned_off() {
    let (node, _heads) = echo_node(false).await;
    let router = RunningRouter::start(router_config(node)).await;
    let mut s = TcpStream::connect(router.addr).await.unwrap();
    s.write_all(HANDSHAKE).await.unwrap();
    let (head, rest) = read_head(&mut s).await;
    assert!(head.starts_with("HTTP/1.1 200 "), "{head}");
    assert_eq!(read_exact(&mut s, rest, 2).await, b"no");
    router.stop().await;

    let mut off = router_config(node);
    off.limits.upgrades = false;
    let router = RunningRouter::start(off).await;
    let mut s = TcpStream::connect(router.addr).await.unwrap();
    s.write_all(HANDSHAKE).await.unwrap();
    let (head, _) = read_head(&mut s).await;
    assert!(head.starts_with("HTTP/1.1 501 "), "{head}");
    router.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_tunnel_is_closed() {
    let (node, _heads) = echo_node(true).await;
    let mut c = router_config(node);
    c.timeouts.tunnel_idle = Duration::from_millis(100);
    let router = RunningRouter::start(c).await;
    let mut s = TcpStream::connect(router.addr).await.unwrap();
    s.write_all(HANDSHAKE).await.unwrap();
    let (head, _) = read_head(&mut s).await;
    assert!(head.starts_with("HTTP/1.1 101 "), "{head}");
    assert!(ends(&mut s).await, "the idle tunnel was closed");
    let done = |s: &serde_json::Value| s["nodes"][0]["in_flight"] == 0;
    assert!(stats_until(&router, done).await, "no longer in flight once closed");
    router.stop().await;
}

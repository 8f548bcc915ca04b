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

/// An HTTP/2 client of `router` by prior knowledge, once the router's settings say it
/// takes extended CONNECT (RFC 8441).
async fn h2_extended_connect_client(router: SocketAddr) -> h2::client::SendRequest<bytes::Bytes> {
    let tcp = TcpStream::connect(router).await.unwrap();
    let (send, connection) = h2::client::handshake(tcp).await.unwrap();
    tokio::spawn(connection);
    let mut send = tokio::time::timeout(LIMIT, send.ready()).await.unwrap().unwrap();
    // The server's SETTINGS arrive with its first frames: a round trip makes sure.
    let ping = http::Request::get("http://t/settle").body(()).unwrap();
    let (answer, _) = send.send_request(ping, true).unwrap();
    let _ = tokio::time::timeout(LIMIT, answer).await.unwrap();
    assert!(send.is_extended_connect_protocol_enabled(), "the router offers extended CONNECT");
    send
}

/// Open a WebSocket over one HTTP/2 stream (extended CONNECT).
async fn h2_websocket(
    send: &h2::client::SendRequest<bytes::Bytes>,
) -> (http::response::Parts, h2::SendStream<bytes::Bytes>, h2::RecvStream) {
    let mut send = send.clone().ready().await.unwrap();
    let mut request = http::Request::builder()
        .method("CONNECT")
        .uri("http://t/chat")
        .header("sec-websocket-version", "13")
        .body(())
        .unwrap();
    request.extensions_mut().insert(h2::ext::Protocol::from_static("websocket"));
    let (response, stream) = send.send_request(request, false).unwrap();
    let (parts, recv) = tokio::time::timeout(LIMIT, response).await.unwrap().unwrap().into_parts();
    (parts, stream, recv)
}

/// Read `n` bytes of a stream (bounded), giving the window back as they come.
async fn h2_read(recv: &mut h2::RecvStream, n: usize) -> Vec<u8> {
    let mut got = Vec::new();
    while got.len() < n {
        let data = tokio::time::timeout(LIMIT, recv.data()).await.expect("echo").expect("open");
        let data = data.unwrap();
        recv.flow_control().release_capacity(data.len()).unwrap();
        got.extend_from_slice(&data);
    }
    got
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_websocket_over_an_http2_stream_is_tunnelled_byte_exact_both_ways() {
    let (node, mut heads) = echo_node(true).await;
    let router = RunningRouter::start(router_config(node)).await;
    let client = h2_extended_connect_client(router.addr).await;
    let (parts, mut up, mut down) = h2_websocket(&client).await;
    assert_eq!(parts.status, 200, "the node's 101 is the stream's 200");
    assert!(parts.headers.get("sec-websocket-accept").is_none());
    assert!(parts.headers.get("connection").is_none() && parts.headers.get("upgrade").is_none());
    heads.recv().await.unwrap(); // the settling request
    let seen = heads.recv().await.unwrap();
    assert!(seen.starts_with("GET /chat HTTP/1.1\r\n"), "{seen}");
    assert!(seen.contains("upgrade: websocket\r\n") || seen.contains("Upgrade: websocket\r\n"));
    assert!(seen.to_ascii_lowercase().contains("sec-websocket-key: "), "{seen}");
    for size in [1usize, 100, 16 * 1024, 100_000, 1 << 20] {
        let message: Vec<u8> = (0..size).map(|i| (i * 7 + size) as u8).collect();
        up.send_data(bytes::Bytes::from(message.clone()), false).unwrap();
        assert!(h2_read(&mut down, size).await == message, "{size} bytes echoed byte-exact");
    }
    // The client ends its side; the node's echo ends, and so does the stream.
    up.send_data(bytes::Bytes::new(), true).unwrap();
    // (An empty DATA frame may carry the end.)
    let ended = async {
        while let Some(data) = down.data().await {
            assert!(data.expect("a clean end, not a reset").is_empty(), "nothing after the echo");
        }
    };
    tokio::time::timeout(LIMIT, ended).await.expect("the stream ends");
    router.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http2_websocket_to_a_node_that_does_not_upgrade_is_refused_with_502() {
    let (node, _heads) = echo_node(false).await;
    let router = RunningRouter::start(router_config(node)).await;
    let client = h2_extended_connect_client(router.addr).await;
    let (parts, _up, _down) = h2_websocket(&client).await;
    assert_eq!(parts.status, 502, "a 200 without a switch is no tunnel");
    router.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drain_ends_an_http2_websocket() {
    let (node, _heads) = echo_node(true).await;
    let mut c = router_config(node);
    // Longer than the test waits: the tunnel must end by the drain, not by its deadline.
    c.timeouts.drain = LIMIT * 4;
    let router = RunningRouter::start(c).await;
    let client = h2_extended_connect_client(router.addr).await;
    let (parts, mut up, mut down) = h2_websocket(&client).await;
    assert_eq!(parts.status, 200);
    up.send_data(bytes::Bytes::from_static(b"ping"), false).unwrap();
    assert_eq!(h2_read(&mut down, 4).await, b"ping");
    let stopping = tokio::spawn(router.stop());
    // Ended cleanly, as an HTTP/1.1 tunnel's connection is closed (its FIN): the stream's
    // end, perhaps on an empty DATA frame.
    let ended = async {
        while let Some(data) = down.data().await {
            assert!(data.expect("a clean end, not a reset").is_empty(), "nothing after the echo");
        }
    };
    tokio::time::timeout(LIMIT, ended).await.expect("the drain ends the tunnel");
    tokio::time::timeout(LIMIT, stopping).await.expect("the router stopped").unwrap();
}

//! HTTP/2 at the front door: by prior knowledge on the plain listener and by ALPN `h2` on
//! the TLS one, bodies byte-exact both ways, concurrent streams of one connection on
//! different nodes, the same error statuses as HTTP/1.1, and a Rapid Reset client cut
//! off while another is served.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use h2::client::SendRequest;
use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

use crate::fake::{FakeNode, Script};
use crate::support::{
    admin_json, config, pattern, Backend, BackendOptions, Client, RunningRouter, LIMIT,
};
use crate::tls::{text, tls_file};

const SIZES: [usize; 5] = [0, 1, 64 * 1024, 1 << 20, 8 << 20];

/// An HTTP/2 client over `io`, its connection driven by a task of its own.
async fn h2_client<T>(io: T) -> SendRequest<Bytes>
where
    T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    h2_connection(io).await.0
}

/// [`h2_client`], with the task that ends with the connection.
async fn h2_connection<T>(io: T) -> (SendRequest<Bytes>, JoinHandle<Result<(), h2::Error>>)
where
    T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let handshake = h2::client::Builder::new()
        .initial_window_size(1 << 20)
        .initial_connection_window_size(4 << 20)
        .handshake(io);
    let (send, connection) = tokio::time::timeout(LIMIT, handshake).await.unwrap().unwrap();
    (send, tokio::spawn(connection))
}

pub(crate) async fn prior_knowledge(addr: SocketAddr) -> SendRequest<Bytes> {
    h2_client(TcpStream::connect(addr).await.unwrap()).await
}

/// A TLS client trusting the test CA and offering `h2` only.
pub(crate) async fn over_tls(addr: SocketAddr) -> SendRequest<Bytes> {
    let tls = testkit::h2_client_config(&tls_file("first-ca.pem"));
    let tcp = TcpStream::connect(addr).await.unwrap();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(tls));
    let name = ServerName::try_from("localhost").unwrap();
    let stream = connector.connect(name, tcp).await.unwrap();
    assert_eq!(stream.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
    h2_client(stream).await
}

/// A response as the client got it.
pub(crate) struct Got {
    pub status: u16,
    pub headers: http::HeaderMap,
    pub body: Vec<u8>,
}

/// Send `method path` with `body` (none when empty) and read the whole response.
pub(crate) async fn fetch(send: &SendRequest<Bytes>, method: &str, path: &str, body: &[u8]) -> Got {
    let exchange = async {
        let mut send = send.clone().ready().await.unwrap();
        let request = http::Request::builder()
            .method(method)
            .uri(format!("http://localhost{path}"))
            .body(())
            .unwrap();
        let (response, mut stream) = send.send_request(request, body.is_empty()).unwrap();
        if !body.is_empty() {
            // h2 holds what the window does not take yet and sends it as it opens.
            stream.send_data(Bytes::copy_from_slice(body), true).unwrap();
        }
        let (parts, mut recv) = response.await.unwrap().into_parts();
        let mut got = Vec::new();
        while let Some(chunk) = recv.data().await {
            let chunk = chunk.unwrap();
            recv.flow_control().release_capacity(chunk.len()).unwrap();
            got.extend_from_slice(&chunk);
        }
        Got { status: parts.status.as_u16(), headers: parts.headers, body: got }
    };
    tokio::time::timeout(LIMIT, exchange).await.expect("response in time")
}

fn tls_router_config(backends: &[&Backend]) -> router::RouterConfig {
    let mut c = config(backends, "rr");
    c.tls.cert = text(&tls_file("localhost.pem"));
    c.tls.key = text(&tls_file("localhost.key"));
    c.limits.max_body_bytes = 16 << 20;
    c
}

async fn downloads_and_uploads_are_byte_exact(send: &SendRequest<Bytes>, backend: &Backend) {
    for size in SIZES {
        let got = fetch(send, "GET", &format!("/pattern/{size}"), b"").await;
        assert_eq!(got.status, 200);
        assert_eq!(got.body.len(), size);
        assert!(got.body == pattern(size), "download of {size} bytes is byte-exact");
        assert!(got.headers.get("connection").is_none() && got.headers.get("keep-alive").is_none());
        assert_eq!(got.headers.get("x-larder-node").unwrap(), "b1");
    }
    for size in SIZES {
        let body = pattern(size);
        let got = fetch(send, "POST", &format!("/up/{size}"), &body).await;
        assert_eq!(got.status, 200, "{}", String::from_utf8_lossy(&got.body));
        let seen = backend.seen();
        let at_node = seen.iter().rev().find(|s| s.target == format!("/up/{size}")).unwrap();
        assert!(at_node.body == body, "upload of {size} bytes arrives byte-exact");
        assert_eq!(at_node.header("host"), Some("localhost"), ":authority is Host");
        assert!(at_node.header("via").unwrap().contains("larder"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prior_knowledge_and_alpn_carry_bodies_byte_exact_both_ways() {
    let backend = Backend::start("b1").await;
    let router = RunningRouter::start_tls(tls_router_config(&[&backend])).await;

    let plain = prior_knowledge(router.addr).await;
    downloads_and_uploads_are_byte_exact(&plain, &backend).await;
    let tls = over_tls(router.tls.unwrap()).await;
    downloads_and_uploads_are_byte_exact(&tls, &backend).await;

    // HTTP/1.1 on both listeners goes on as before.
    let mut client = Client::connect(router.addr).await;
    assert_eq!(client.get("/pattern/10").await.status, 200);
    let stats = admin_json(router.admin, "/stats").await;
    let protocols = &stats["protocols"];
    assert_eq!(protocols["http2_requests"], 20, "{protocols}");
    assert_eq!(protocols["http1_requests"], 1, "{protocols}");
    assert_eq!(protocols["http2_connections"], 2, "{protocols}");
    router.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_over_the_limit_is_refused_with_413() {
    let backend = Backend::start("b1").await;
    let mut c = config(&[&backend], "rr");
    c.limits.max_body_bytes = 1000;
    let router = RunningRouter::start(c).await;
    let send = prior_knowledge(router.addr).await;
    assert_eq!(fetch(&send, "POST", "/up", &pattern(2000)).await.status, 413);
    assert_eq!(fetch(&send, "POST", "/up", &pattern(1000)).await.status, 200);
    assert_eq!(fetch(&send, "GET", "/.larder/invalidate", b"").await.status, 403);
    assert!(backend.seen().iter().all(|s| s.body.len() == 1000));
    router.stop().await;
}

/// The nodes' own paths (load report, metrics, invalidation) are refused from clients on
/// both protocols: what they tell (each node's load and contents) is not for the
/// internet, and no node is asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_nodes_own_paths_are_refused_from_clients() {
    let backend = Backend::start("b1").await;
    let router = RunningRouter::start(config(&[&backend], "rr")).await;
    let send = prior_knowledge(router.addr).await;
    let internal =
        [wire::LOAD_REPORT_PATH, "/.larder/metrics", "/.larder/load?x=1", wire::INVALIDATE_PATH];
    for path in internal {
        assert_eq!(fetch(&send, "GET", path, b"").await.status, 403, "HTTP/2 {path}");
        let mut client = Client::connect(router.addr).await;
        assert_eq!(client.get(path).await.status, 403, "HTTP/1.1 {path}");
    }
    let mut client = Client::connect(router.addr).await;
    assert_eq!(client.get("/.larder").await.status, 200, "only the prefix is the nodes'");
    assert_eq!(fetch(&send, "GET", "/pattern/10", b"").await.status, 200);
    let seen = backend.seen();
    assert_eq!(seen.len(), 2, "{:?}", seen.iter().map(|s| &s.target).collect::<Vec<_>>());
    assert!(seen.iter().all(|s| !s.target.starts_with(wire::INTERNAL_PATH_PREFIX)));
    router.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_of_one_connection_run_at_once_on_different_nodes() {
    let gated = BackendOptions { gated: true, ..BackendOptions::default() };
    let b1 = Backend::start_with("b1", gated.clone()).await;
    let b2 = Backend::start_with("b2", gated).await;
    let router = RunningRouter::start(config(&[&b1, &b2], "rr")).await;
    let send = prior_knowledge(router.addr).await;
    let (s1, s2) = (send.clone(), send.clone());
    let first = tokio::spawn(async move { fetch(&s1, "GET", "/a", b"").await });
    let second = tokio::spawn(async move { fetch(&s2, "GET", "/b", b"").await });
    // Both requests are at their nodes before either is answered.
    let arrived = [b1.arrival().await, b2.arrival().await];
    assert!(arrived.contains(&"/a".to_string()) && arrived.contains(&"/b".to_string()));
    b1.release(1);
    b2.release(1);
    let (first, second) = (first.await.unwrap(), second.await.unwrap());
    assert_eq!((first.status, second.status), (200, 200));
    let node = |g: &Got| g.headers.get("x-larder-node").unwrap().to_str().unwrap().to_string();
    assert_ne!(node(&first), node(&second));
    router.stop().await;
}

/// A router whose only node is a closed port.
async fn router_of_a_dead_node() -> RunningRouter {
    let dead = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = dead.local_addr().unwrap();
    drop(dead);
    let c = router::RouterConfig {
        nodes: vec![router::NodeConfig::new(addr)],
        ..router::RouterConfig::default()
    };
    RunningRouter::start(c).await
}

async fn status_over_h2(router: &RunningRouter) -> u16 {
    fetch(&prior_knowledge(router.addr).await, "GET", "/x", b"").await.status
}

async fn status_over_h1(router: &RunningRouter) -> u16 {
    Client::connect(router.addr).await.get("/x").await.status
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_node_gets_the_same_statuses_as_on_http_1_1() {
    // The failed connect: 502, and the node is taken down; then no node: 503.
    let router = router_of_a_dead_node().await;
    assert_eq!(status_over_h2(&router).await, 502);
    assert_eq!((status_over_h1(&router).await, status_over_h2(&router).await), (503, 503));
    router.stop().await;
    let router = router_of_a_dead_node().await;
    assert_eq!(status_over_h1(&router).await, 502);
    assert_eq!(status_over_h2(&router).await, 503);
    router.stop().await;
}

/// One HTTP/2 frame's bytes.
fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let len = payload.len() as u32;
    let mut f = vec![(len >> 16) as u8, (len >> 8) as u8, len as u8, kind, flags];
    f.extend_from_slice(&stream.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

const HEADERS: u8 = 0x1;
const RST_STREAM: u8 = 0x3;
const SETTINGS: u8 = 0x4;
const GOAWAY: u8 = 0x7;
const CANCEL: u32 = 0x8;
const ENHANCE_YOUR_CALM: u32 = 0xb;

/// The GOAWAY error code the router sent before closing, if any; reads until the end of
/// the connection (bounded in bytes and time).
async fn goaway_then_close(stream: &mut TcpStream) -> Option<u32> {
    let mut got = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    let read = async {
        while got.len() < 64 << 20 {
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => got.extend_from_slice(&chunk[..n]),
            }
        }
    };
    tokio::time::timeout(LIMIT, read).await.expect("the router closes the connection");
    let mut at = 0;
    let mut reason = None;
    while at + 9 <= got.len() {
        let len =
            usize::from(got[at]) << 16 | usize::from(got[at + 1]) << 8 | usize::from(got[at + 2]);
        let payload = &got[at + 9..(at + 9 + len).min(got.len())];
        if got[at + 3] == GOAWAY && payload.len() >= 8 {
            reason = Some(u32::from_be_bytes(payload[4..8].try_into().unwrap()));
        }
        at += 9 + len;
    }
    reason
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rapid_reset_client_is_cut_off_calms_down_and_another_is_served() {
    let backend = Backend::start("b1").await;
    let router = RunningRouter::start(calming_config(&backend)).await;
    let mut attacker = TcpStream::connect(router.addr).await.unwrap();
    // GET / on http://localhost, in HPACK: three static-table entries and a literal.
    let mut block = vec![0x82, 0x86, 0x84, 0x01, 9];
    block.extend_from_slice(b"localhost");
    let mut burst = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    burst.extend(frame(SETTINGS, 0, 0, &[]));
    for i in 0..2_000u32 {
        let id = 2 * i + 1;
        // END_STREAM | END_HEADERS, then cancelled at once.
        burst.extend(frame(HEADERS, 0x5, id, &block));
        burst.extend(frame(RST_STREAM, 0, id, &CANCEL.to_be_bytes()));
    }
    // The router may close before it has read everything: a failed write is fine.
    let _ = tokio::time::timeout(LIMIT, attacker.write_all(&burst)).await;
    assert_eq!(goaway_then_close(&mut attacker).await, Some(ENHANCE_YOUR_CALM));
    the_abuser_calms_down_and_another_is_served(&router, "/still").await;
    router.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drain_lets_the_open_stream_finish_then_closes_with_goaway() {
    let gated = BackendOptions { gated: true, ..BackendOptions::default() };
    let backend = Backend::start_with("b1", gated).await;
    let router = RunningRouter::start(config(&[&backend], "rr")).await;
    let addr = router.addr;
    let (send, connection) = h2_connection(TcpStream::connect(addr).await.unwrap()).await;
    let s = send.clone();
    let pending = tokio::spawn(async move { fetch(&s, "GET", "/slow", b"").await });
    assert_eq!(backend.arrival().await, "/slow");
    let stopping = tokio::spawn(router.stop());
    // The listener closes just before the drain is raised.
    let mut closed = false;
    for _ in 0..2_000 {
        if TcpStream::connect(addr).await.is_err() {
            closed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(closed, "the router stopped listening");
    backend.release(1);
    let got = tokio::time::timeout(LIMIT, pending).await.unwrap().unwrap();
    assert_eq!((got.status, got.body.as_slice()), (200, &b"b1 /slow"[..]));
    // Closed by GOAWAY (no error), not cut.
    let ended = tokio::time::timeout(LIMIT, connection).await.expect("closed in time").unwrap();
    assert!(ended.is_ok(), "{ended:?}");
    tokio::time::timeout(LIMIT, stopping).await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ping_flood_closes_its_connection_and_another_client_is_served() {
    const PING: u8 = 0x6;
    let backend = Backend::start("b1").await;
    let router = RunningRouter::start(calming_config(&backend)).await;
    let mut flooder = TcpStream::connect(router.addr).await.unwrap();
    let mut burst = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    burst.extend(frame(SETTINGS, 0, 0, &[]));
    for i in 0..1_000u64 {
        burst.extend(frame(PING, 0, 0, &i.to_be_bytes()));
    }
    let _ = tokio::time::timeout(LIMIT, flooder.write_all(&burst)).await;
    // Closed (the read ends), whatever it answered before.
    goaway_then_close(&mut flooder).await;
    the_abuser_calms_down_and_another_is_served(&router, "/calm").await;
    router.stop().await;
}

/// After a client on 127.0.0.1 was cut off for abuse: its address's next connection gets
/// no answer and is closed when the calm-down ends (`http2.calm_down_ms`, short in these
/// tests: [`calming_config`]), and a client on another address (127.0.0.2) is served
/// `path` by node `b1`.
fn calming_config(backend: &Backend) -> router::RouterConfig {
    let mut c = config(&[backend], "rr");
    // Long enough that the next connection, however slow the machine, comes within it.
    c.http2.calm_down = Duration::from_secs(4);
    c
}

async fn the_abuser_calms_down_and_another_is_served(router: &RunningRouter, path: &str) {
    let mut again = TcpStream::connect(router.addr).await.unwrap();
    // Any request would be answered by a router that let the address in.
    let _ = again.write_all(b"GET /x HTTP/1.1\r\nHost: t\r\n\r\n").await;
    let mut got = [0u8; 64];
    let read = tokio::time::timeout(LIMIT, again.read(&mut got)).await.expect("closed");
    assert!(matches!(read, Ok(0) | Err(_)), "the abuser's address gets nothing: {read:?}");

    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.2:0".parse().unwrap()).unwrap();
    let send = h2_client(socket.connect(router.addr).await.unwrap()).await;
    let got = fetch(&send, "GET", path, b"").await;
    assert_eq!((got.status, got.body.as_slice()), (200, format!("b1 {path}").as_bytes()));
}

/// A node that answers every request with `reply`, a router in front of it, and an
/// HTTP/2 client of the router.
async fn scripted_node_behind_a_router(
    reply: &[u8],
) -> (FakeNode, RunningRouter, SendRequest<Bytes>) {
    let node = FakeNode::start(Script::Reply(reply.to_vec())).await;
    let router = RunningRouter::start(router::RouterConfig {
        nodes: vec![router::NodeConfig::new(node.addr)],
        ..router::RouterConfig::default()
    })
    .await;
    let send = prior_knowledge(router.addr).await;
    (node, router, send)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_nodes_response_trailers_reach_the_client_as_http2_trailers() {
    let (_node, router, send) = scripted_node_behind_a_router(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: grpc-status\r\n\r\n\
          5\r\nhello\r\n0\r\nGrpc-Status: 0\r\nX-Checksum: abc\r\nContent-Length: 9\r\n\r\n",
    )
    .await;
    let exchange = async {
        let mut send = send.ready().await.unwrap();
        let request = http::Request::get("http://localhost/t").body(()).unwrap();
        let (response, _) = send.send_request(request, true).unwrap();
        let (parts, mut recv) = response.await.unwrap().into_parts();
        let mut body = Vec::new();
        while let Some(chunk) = recv.data().await {
            body.extend_from_slice(&chunk.unwrap());
        }
        (parts.status, body, recv.trailers().await.unwrap())
    };
    let (status, body, trailers) = tokio::time::timeout(LIMIT, exchange).await.unwrap();
    assert_eq!(status, 200);
    assert_eq!(body, b"hello");
    let trailers = trailers.expect("the node's trailers are passed on");
    assert_eq!(trailers.get("grpc-status").unwrap(), "0");
    assert_eq!(trailers.get("x-checksum").unwrap(), "abc");
    assert!(trailers.get("content-length").is_none(), "a framing field is never a trailer");
    router.stop().await;
}

/// Send `bytes` as a connection's first and only bytes, and read what comes back until
/// the router closes (bounded in bytes and by the test's time limit, however long the
/// router lingers); the close must be an orderly end, not a reset.
async fn answer_then_close(addr: SocketAddr, bytes: &[u8]) -> Vec<u8> {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(bytes).await.unwrap();
    let mut got = Vec::new();
    let read = async {
        let mut chunk = [0u8; 4096];
        while got.len() < 1 << 20 {
            match stream.read(&mut chunk).await.expect("an orderly close, not a reset") {
                0 => return,
                n => got.extend_from_slice(&chunk[..n]),
            }
        }
        panic!("no end to the answer");
    };
    tokio::time::timeout(LIMIT, read).await.expect("the router closes at once after its answer");
    got
}

/// The status and body of the one HTTP/1.1 response in `got`, which must be whole.
fn whole_response(got: &[u8]) -> (u16, &[u8]) {
    let text = String::from_utf8_lossy(got);
    let end = got.windows(4).position(|w| w == b"\r\n\r\n").expect("a whole head") + 4;
    let status = text[9..12].parse().unwrap();
    let length: usize = text[..end]
        .lines()
        .find_map(|l| l.strip_prefix("Content-Length: "))
        .expect("a length")
        .parse()
        .unwrap();
    assert_eq!(got.len(), end + length, "the whole response and nothing after it: {text}");
    (status, &got[end..])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invalid_preface_is_closed_at_once_and_a_bad_http1_request_still_gets_its_400() {
    let backend = Backend::start("b1").await;
    let mut c = config(&[&backend], "rr");
    // Far beyond the test's own limit: the client must see the end without waiting it out.
    c.timeouts.linger = Duration::from_secs(3_600);
    let router = RunningRouter::start(c.clone()).await;
    // Neither an HTTP/1 request line nor the HTTP/2 preface: closed, no HTTP/1.1 answer
    // (an HTTP/2 client would read one as a broken frame).
    let got = answer_then_close(router.addr, b"INVALID CONNECTION PREFACE\r\n\r\n").await;
    assert!(got.is_empty(), "{}", String::from_utf8_lossy(&got));
    // An HTTP/1.1 client that got its request wrong still gets the whole 400, then the end.
    let got = answer_then_close(router.addr, b"GET /a b HTTP/1.1\r\nHost: x\r\n\r\n").await;
    assert_eq!(whole_response(&got).0, 400);
    let got = answer_then_close(router.addr, b"GET / HTTP/1.1\r\nHost: x\r\nBad Name: 1\r\n\r\n");
    assert_eq!(whole_response(&got.await).0, 400);
    assert!(backend.seen().is_empty());
    router.stop().await;

    // Without HTTP/2 there is no preface to get wrong: a 400 as to any request.
    c.http2.enabled = false;
    let router = RunningRouter::start(c).await;
    let got = answer_then_close(router.addr, b"INVALID CONNECTION PREFACE\r\n\r\n").await;
    let (status, body) = whole_response(&got);
    assert_eq!((status, body), (400, &b"malformed request: bad protocol version\n"[..]));
    router.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_nodes_early_hints_reach_the_client_ahead_of_its_response() {
    let (_node, router, send) = scripted_node_behind_a_router(
        b"HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n\
          HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
    )
    .await;
    let exchange = async {
        let mut send = send.ready().await.unwrap();
        let request = http::Request::get("http://localhost/page").body(()).unwrap();
        let (mut response, _) = send.send_request(request, true).unwrap();
        let hint = std::future::poll_fn(|cx| response.poll_informational(cx)).await;
        let hint = hint.expect("an interim response").unwrap();
        let (parts, mut recv) = response.await.unwrap().into_parts();
        let body = recv.data().await.unwrap().unwrap();
        (hint, parts.status, body)
    };
    let (hint, status, body) = tokio::time::timeout(LIMIT, exchange).await.unwrap();
    assert_eq!(hint.status(), 103);
    assert_eq!(hint.headers().get("link").unwrap(), "</a.css>; rel=preload");
    assert_eq!((status.as_u16(), &body[..]), (200, &b"ok"[..]));
    router.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_access_log_names_each_request_s_protocol() {
    let backend = Backend::start("b1").await;
    let path =
        std::env::temp_dir().join(format!("larder-route-h2-access-{}.log", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let mut c = config(&[&backend], "rr");
    c.access_log = Some(path.to_str().unwrap().to_string());
    let router = RunningRouter::start(c).await;
    let send = prior_knowledge(router.addr).await;
    assert_eq!(fetch(&send, "GET", "/over-h2", b"").await.status, 200);
    assert_eq!(status_over_h1(&router).await, 200);
    router.stop().await; // flushes the log
    let text = std::fs::read_to_string(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(lines.iter().any(|l| l.contains("] \"GET /over-h2 HTTP/2.0\" 200 ")), "{text}");
    assert!(lines.iter().any(|l| l.contains("] \"GET /x HTTP/1.1\" 200 ")), "{text}");
}

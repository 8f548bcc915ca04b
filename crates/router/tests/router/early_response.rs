//! Request bodies the node does not want: a node that answers before the body is in
//! (an early 413) is relayed, never counted as failed; the router's own body limit
//! refuses an oversized body before anything is forwarded.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::fake::{FakeNode, Script};
use crate::support::{config, Backend, Client, Response, RunningRouter, LIMIT};

const EARLY_413: &[u8] =
    b"HTTP/1.1 413 Content Too Large\r\nContent-Length: 9\r\nConnection: close\r\n\r\ntoo large";

/// Send `request` from a task of its own (the router may stop reading it), and read the
/// response head that comes back meanwhile.
async fn upload(addr: std::net::SocketAddr, request: Vec<u8>) -> Option<Response> {
    let stream = tokio::time::timeout(LIMIT, TcpStream::connect(addr)).await.unwrap().unwrap();
    let (mut read, mut write) = stream.into_split();
    let writer = tokio::spawn(async move {
        let _ = write.write_all(&request).await;
        write
    });
    let mut buf = Vec::new();
    let reply = tokio::time::timeout(LIMIT, async {
        let mut chunk = [0u8; 4096];
        loop {
            if let Ok(Some((reply, _))) = Response::parse_head(&buf) {
                return Some(reply);
            }
            match read.read(&mut chunk).await {
                Ok(0) | Err(_) => return None,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
    })
    .await
    .expect("a reply in time");
    writer.abort();
    reply
}

/// A POST with a `Content-Length` body of `len` bytes.
fn post(len: usize) -> Vec<u8> {
    let mut raw =
        format!("POST /up HTTP/1.1\r\nHost: t\r\nContent-Length: {len}\r\n\r\n").into_bytes();
    raw.resize(raw.len() + len, b'z');
    raw
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_early_413_from_a_node_is_relayed_and_the_node_is_not_failed() {
    let scripts = [
        ("stalls", Script::AnswerEarlyAndStall(EARLY_413.to_vec())),
        ("closes", Script::AnswerEarlyAndClose(EARLY_413.to_vec())),
    ];
    for (name, script) in scripts {
        let node = FakeNode::start(script).await;
        let backend = Backend::start("unused").await;
        let mut c = config(&[&backend], "rr");
        c.nodes = vec![router::NodeConfig::new(node.addr)];
        c.limits.max_body_bytes = 64 << 20;
        c.timeouts.body = std::time::Duration::from_millis(5_000);
        let router = RunningRouter::start(c).await;
        // health.fall is 3: three failures in a row would eject the only node.
        for i in 0..4 {
            let reply = upload(router.addr, post(16 << 20)).await;
            let status = reply.map(|r| r.status);
            assert_eq!(status, Some(413), "{name}: upload {i}");
        }
        let mut client = Client::connect(router.addr).await;
        assert_eq!(client.get("/after").await.status, 413, "{name}: the node is still in");
        router.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_over_the_router_limit_is_refused_before_anything_is_forwarded() {
    let backend = Backend::start("rec").await;
    let router = RunningRouter::start(config(&[&backend], "rr")).await;
    let limit = router::RouterConfig::default().limits.max_body_bytes as usize;
    assert!(limit > 0, "the router bounds request bodies by default");
    let reply = upload(router.addr, post(limit + 1)).await;
    assert_eq!(reply.map(|r| r.status), Some(413));
    assert_eq!(backend.connections(), 0, "nothing was forwarded");

    // A chunked body is cut off as it streams past the limit, and never completes upstream.
    let head = "POST /up HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n";
    let mut chunked = head.as_bytes().to_vec();
    let piece = 64 * 1024;
    for _ in 0..(limit / piece + 2) {
        chunked.extend_from_slice(format!("{piece:x}\r\n").as_bytes());
        chunked.extend(std::iter::repeat_n(b'z', piece));
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    let reply = upload(router.addr, chunked).await;
    assert_eq!(reply.map(|r| r.status), Some(413));
    assert!(backend.seen().is_empty(), "the cut-off body never completed a request");
    router.stop().await;
}

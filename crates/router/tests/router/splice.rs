//! Bodies arrive byte-exact whichever way the router moves them: spliced socket to socket
//! (`splice_min_bytes` 1: every body of known length) or copied through its buffers
//! (`splice_min_bytes` 0), for every framing a response and a request body can have.

use crate::fake::{FakeNode, Script};
use crate::support::{config, Backend, Client, RunningRouter};

/// Bytes no two positions of which repeat in step, so a lost, doubled or reordered piece
/// shows.
fn pattern(len: usize) -> Vec<u8> {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// `body` as a chunked message body, in chunks of `size`.
fn chunked(body: &[u8], size: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for piece in body.chunks(size) {
        out.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
        out.extend_from_slice(piece);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"0\r\n\r\n");
    out
}

const LEN: usize = 300_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_response_framing_is_relayed_byte_exact_spliced_or_copied() {
    let body = pattern(LEN);
    let framings: [(&str, Vec<u8>); 3] = [
        (
            "content-length",
            format!("HTTP/1.1 200 OK\r\nContent-Length: {LEN}\r\n\r\n").into_bytes(),
        ),
        ("chunked", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec()),
        ("close-delimited", b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n".to_vec()),
    ];
    for splice_min in [0, 1, 100_000] {
        for (name, head) in &framings {
            let mut reply = head.clone();
            if *name == "chunked" {
                reply.extend_from_slice(&chunked(&body, 7_000));
            } else {
                reply.extend_from_slice(&body);
            }
            let node = FakeNode::start(Script::Reply(reply)).await;
            let backend = Backend::start("unused").await;
            let mut c = config(&[&backend], "rr");
            c.nodes = vec![router::NodeConfig::new(node.addr)];
            c.tuning.splice_min_bytes = splice_min;
            let router = RunningRouter::start(c).await;
            let mut client = Client::connect(router.addr).await;
            let got = client.get("/big").await;
            assert_eq!(got.status, 200, "{name}, splice from {splice_min}");
            assert!(got.body == body, "{name}, splice from {splice_min}: body differs");
            router.stop().await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_bodies_reach_the_node_byte_exact_spliced_or_copied() {
    let body = pattern(LEN);
    for splice_min in [0, 1] {
        let backend = Backend::start("n").await;
        let mut c = config(&[&backend], "rr");
        c.tuning.splice_min_bytes = splice_min;
        let router = RunningRouter::start(c).await;
        let mut client = Client::connect(router.addr).await;
        let mut raw =
            format!("POST /cl HTTP/1.1\r\nHost: t\r\nContent-Length: {LEN}\r\n\r\n").into_bytes();
        raw.extend_from_slice(&body);
        raw.extend_from_slice(
            b"POST /ch HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n",
        );
        raw.extend_from_slice(&chunked(&body, 5_000));
        client.send_raw(&raw).await;
        assert_eq!(client.reply(false).await.expect("a reply").status, 200);
        assert_eq!(client.reply(false).await.expect("a reply").status, 200);
        let seen = backend.seen();
        assert_eq!(seen.len(), 2, "splice from {splice_min}");
        for s in &seen {
            assert!(s.body == body, "{} spliced from {splice_min}: body differs", s.target);
        }
        router.stop().await;
    }
}

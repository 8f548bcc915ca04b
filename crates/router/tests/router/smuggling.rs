//! Request smuggling: every ambiguous or malformed message is answered 400 by the router
//! and nothing of it reaches the back-end (which records every request and connection).

use crate::support::{config, Backend, Client, RunningRouter};

/// Each vector hides a second request (`GET /smuggled`) that a confused hop would see.
const VECTORS: &[(&str, &str)] = &[
    (
        "CL.TE",
        "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n\
         0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n",
    ),
    (
        "TE.CL",
        "POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\nContent-Length: 40\r\n\r\n\
         0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n",
    ),
    (
        "two different Content-Length",
        "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\nContent-Length: 37\r\n\r\n\
         GET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n",
    ),
    (
        "two equal Content-Length",
        "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\nContent-Length: 0\r\n\r\n\
         GET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n",
    ),
    (
        "Content-Length list",
        "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 0, 37\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n",
    ),
    (
        "Content-Length with sign",
        "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: +0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n",
    ),
    (
        "negative Content-Length",
        "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: -1\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n",
    ),
    (
        "Content-Length overflow",
        "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 18446744073709551616\r\n\r\n\
         GET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n",
    ),
    (
        "last coding not chunked",
        "POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked, identity\r\n\r\n\
         0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n",
    ),
    (
        "chunked in a second Transfer-Encoding line, then another coding",
        "POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: x\r\n\r\n\
         0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n",
    ),
    (
        "chunked twice",
        "POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked, chunked\r\n\r\n\
         0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n",
    ),
    (
        "xchunked",
        "POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: xchunked\r\n\r\n\
         0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n",
    ),
    (
        "Transfer-Encoding in HTTP/1.0",
        "POST / HTTP/1.0\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n\
         0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n",
    ),
    (
        "obs-fold hiding Transfer-Encoding",
        "POST / HTTP/1.1\r\nHost: t\r\nX-A: a\r\n Transfer-Encoding: chunked\r\n\r\n\
         0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n",
    ),
    (
        "obs-fold in Transfer-Encoding",
        "POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding:\r\n chunked\r\n\r\n\
         0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n",
    ),
    (
        "space before the colon",
        "POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding : chunked\r\n\r\n\
         0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n",
    ),
    (
        "bare CR in a value",
        "POST / HTTP/1.1\r\nHost: t\r\nX-A: a\rTransfer-Encoding: chunked\r\n\r\n\
         0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n",
    ),
    (
        "invalid header name",
        "POST / HTTP/1.1\r\nHost: t\r\nContent Length: 0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n",
    ),
    (
        "NUL in a value",
        "GET / HTTP/1.1\r\nHost: t\r\nX-A: a\0b\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n",
    ),
    (
        "two Host fields",
        "GET / HTTP/1.1\r\nHost: t\r\nHost: u\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n",
    ),
    (
        "chunk size with 0x",
        "POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n\
         0x0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n",
    ),
    (
        "chunk size not hex",
        "POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n\
         g\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n",
    ),
    (
        "chunk size overflow",
        "POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n\
         10000000000000000\r\nGET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n",
    ),
    (
        "chunk size line ended by bare LF",
        "POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n\
         1\nA\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n",
    ),
    (
        "chunk data longer than its size",
        "POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n\
         1\r\nAB\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n",
    ),
    (
        "negative chunk size",
        "POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n\
         -1\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n",
    ),
];

/// Send `parts` (a chunked upload that goes wrong part way) on one connection: the router
/// answers 400 and closes, and the upload never completes a request at the back-end,
/// while a well-formed request after it goes through.
async fn refused_mid_body(parts: &[&[u8]]) {
    let backend = Backend::start("rec").await;
    let router = RunningRouter::start(config(&[&backend], "rr")).await;
    let mut client = Client::connect(router.addr).await;
    for part in parts {
        client.send_raw(part).await;
    }
    assert_eq!(client.reply(false).await.map(|r| r.status), Some(400));
    assert!(client.closed().await);
    let mut client = Client::connect(router.addr).await;
    assert_eq!(client.get("/fine").await.status, 200);
    let seen: Vec<_> = backend.seen().into_iter().map(|s| s.target).collect();
    assert_eq!(seen, vec!["/fine".to_string()], "the cut-off upload never completed");
    router.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trailer_line_without_a_colon_is_refused_and_never_forwarded() {
    refused_mid_body(&[b"POST /up HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n\
        3\r\nabc\r\n0\r\nno-colon\r\n\r\n"])
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn smuggling_vectors_are_refused_and_never_forwarded() {
    assert!(VECTORS.len() >= 15);
    let backend = Backend::start("rec").await;
    let router = RunningRouter::start(config(&[&backend], "rr")).await;
    for (name, raw) in VECTORS {
        let mut client = Client::connect(router.addr).await;
        client.send_raw(raw.as_bytes()).await;
        let reply = client.reply(false).await;
        let status = reply.as_ref().map(|r| r.status);
        assert_eq!(status, Some(400), "{name}: {reply:?}");
        assert!(client.closed().await, "{name}: the connection must close after a 400");
    }
    assert!(backend.seen().is_empty(), "forwarded: {:?}", backend.seen());
    assert_eq!(backend.connections(), 0, "the router never even connected");

    // The same router forwards a well-formed request, so the silence above means something.
    let mut client = Client::connect(router.addr).await;
    assert_eq!(client.get("/fine").await.status, 200);
    assert_eq!(backend.seen().len(), 1);
    router.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_chunk_later_in_the_body_never_completes_a_request_upstream() {
    // The first chunk is fine and is forwarded; the second is malformed.
    refused_mid_body(&[
        b"POST /up HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n",
        b"zz\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n",
    ])
    .await;
}

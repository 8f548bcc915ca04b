//! TLS from the router to nodes given as `https://`: bodies byte-exact both ways over
//! pooled TLS connections, health checks and load reports over TLS, and a node whose
//! certificate does not check out answered with 502 at once (never a hang), the reason in
//! the router's log.

use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::support::{
    admin_json, config, stats_until, Backend, BackendOptions, Client, RunningRouter,
};
use crate::tls::{text, tls_file};

/// A back-end speaking TLS with the test certificate for `localhost` (first test CA).
async fn tls_backend(name: &str) -> Backend {
    let chain = CertificateDer::pem_file_iter(tls_file("localhost.pem"))
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_file(tls_file("localhost.key")).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let server = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .unwrap();
    let options =
        BackendOptions { tls: Some(Arc::new(server)), cpu_pct: Some(42.0), ..Default::default() };
    Backend::start_with(name, options).await
}

/// A router config with `backend` as `https://localhost:PORT` checked against `ca`.
fn tls_node_config(backend: &Backend, server_name: &str, ca: &str) -> router::RouterConfig {
    let mut c = config(&[backend], "rr");
    c.nodes[0].server_name = Some(server_name.to_string());
    c.node_tls.ca = text(&tls_file(ca));
    c
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tls_node_relays_bodies_byte_exact_over_pooled_connections() {
    let backend = tls_backend("secure").await;
    let mut c = tls_node_config(&backend, "localhost", "first-ca.pem");
    c.nodes[0].load_report = true;
    c.load.poll = std::time::Duration::from_millis(20);
    c.health.path = Some("/health".to_string());
    c.health.interval = std::time::Duration::from_millis(20);
    let router = RunningRouter::start(c).await;
    let mut client = Client::connect(router.addr).await;

    let reply = client.get("/big/300000").await;
    assert_eq!((reply.status, reply.node()), (200, "secure"));
    assert!(reply.body.len() == 300_000 && reply.body.iter().all(|&b| b == b'x'));
    let reply = client.get("/small").await;
    assert_eq!(reply.body, b"secure /small");

    // An upload: sent while the router watches the TLS session for an early answer.
    let body: Vec<u8> = (0..200_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let head = format!("POST /up HTTP/1.1\r\nHost: t\r\nContent-Length: {}\r\n\r\n", body.len());
    client.send_raw(head.as_bytes()).await;
    client.send_raw(&body).await;
    assert_eq!(client.reply(false).await.unwrap().status, 200);
    let seen = backend.seen().into_iter().find(|s| s.target == "/up").unwrap();
    assert!(seen.body == body, "the upload arrived byte-exact");

    // The load report came over TLS too, and health checks keep the node up.
    let reported = |s: &serde_json::Value| s["nodes"][0]["cpu_pct"] == 42.0;
    assert!(stats_until(&router, reported).await, "a load report over TLS");
    assert_eq!(admin_json(router.admin, "/stats").await["nodes"][0]["up"], true);
    router.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_certificate_that_does_not_check_out_is_a_502_not_a_hang() {
    let backend = tls_backend("secure").await;
    // Signed by a CA the router does not trust; then valid, but for another name.
    for (name, ca) in [("localhost", "second-ca.pem"), ("other.test", "first-ca.pem")] {
        let mut c = tls_node_config(&backend, name, ca);
        c.timeouts.upstream_connect = std::time::Duration::from_millis(60_000);
        let router = RunningRouter::start(c).await;
        let mut client = Client::connect(router.addr).await;
        let reply = client.get("/x").await;
        assert_eq!(reply.status, 502, "{name} with {ca}");
        router.stop().await;
    }
    assert!(backend.seen().is_empty(), "no request reached the node");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_ca_files_and_tls_nodes_without_one_are_refused_clearly() {
    let backend = Backend::start("b").await;
    let missing = tls_node_config(&backend, "localhost", "missing-ca.pem");
    let err = router::Router::new(missing).err().expect("refused").to_string();
    assert!(err.contains("missing-ca.pem"), "{err}");
    let not_a_cert = tls_node_config(&backend, "localhost", "localhost.key");
    let err = router::Router::new(not_a_cert).err().expect("refused").to_string();
    assert!(err.contains("localhost.key") && err.contains("no certificate"), "{err}");
    let mut no_ca = tls_node_config(&backend, "localhost", "first-ca.pem");
    no_ca.node_tls.ca.clear();
    let err = router::Router::new(no_ca).err().expect("refused").to_string();
    assert!(err.contains("CA file"), "{err}");
}

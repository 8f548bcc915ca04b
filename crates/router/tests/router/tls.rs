//! TLS at the front door: certificates by SNI, ALPN http/1.1, TLS 1.2 and 1.3, and a
//! reload that serves a renewed certificate to new clients while connections already up
//! go on. The certificates under `tests/tls/` were made once with openssl for these tests
//! (P-256, valid for a hundred years): `localhost` and `other.test` signed by the "first"
//! test CA, a renewed `localhost` signed by the "second".

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;

use crate::support::{config, Backend, RunningRouter, LIMIT};

pub fn tls_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tls").join(name)
}

pub fn text(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// A client trusting only the test CA `ca`, speaking `versions`, offering http/1.1.
fn client(
    ca: &str,
    versions: &[&'static rustls::SupportedProtocolVersion],
) -> tokio_rustls::TlsConnector {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(CertificateDer::from_pem_file(tls_file(ca)).unwrap()).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(versions)
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    tokio_rustls::TlsConnector::from(Arc::new(config))
}

async fn handshake(
    addr: SocketAddr,
    name: &'static str,
    ca: &str,
) -> std::io::Result<TlsStream<TcpStream>> {
    let tcp = TcpStream::connect(addr).await?;
    let connector = client(ca, rustls::ALL_VERSIONS);
    tokio::time::timeout(LIMIT, connector.connect(ServerName::try_from(name).unwrap(), tcp))
        .await
        .expect("handshake in time")
}

/// GET `path` on `stream` (keep-alive) and return the body; the test back-end answers
/// with a Content-Length body.
async fn get(stream: &mut TlsStream<TcpStream>, path: &str) -> String {
    let request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut got = Vec::new();
    let mut chunk = [0u8; 4096];
    let read = async {
        loop {
            if let Ok(Some((reply, len))) = testkit::Response::parse_head(&got) {
                let want: usize = reply.header("content-length").unwrap().parse().unwrap();
                if got.len() >= len + want {
                    assert_eq!(reply.status, 200);
                    return String::from_utf8(got[len..len + want].to_vec()).unwrap();
                }
            }
            let n = stream.read(&mut chunk).await.unwrap();
            assert!(n > 0, "closed: {}", String::from_utf8_lossy(&got));
            got.extend_from_slice(&chunk[..n]);
        }
    };
    tokio::time::timeout(LIMIT, read).await.expect("reply in time")
}

fn tls_config(backend: &Backend, cert: &Path, key: &Path) -> router::RouterConfig {
    let mut c = config(&[backend], "rr");
    c.tls.cert = text(cert);
    c.tls.key = text(key);
    c.tls.sni = vec![router::SniCertificate {
        names: vec!["other.test".to_string()],
        cert: text(&tls_file("other.pem")),
        key: text(&tls_file("other.key")),
    }];
    c
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_clients_get_the_certificate_they_name_over_tls_1_2_and_1_3() {
    let backend = Backend::start("b1").await;
    let c = tls_config(&backend, &tls_file("localhost.pem"), &tls_file("localhost.key"));
    let router = RunningRouter::start_tls(c).await;
    let tls = router.tls.unwrap();

    let mut stream = handshake(tls, "localhost", "first-ca.pem").await.unwrap();
    let (_, session) = stream.get_ref();
    assert_eq!(session.alpn_protocol(), Some(&b"http/1.1"[..]));
    assert_eq!(session.protocol_version(), Some(rustls::ProtocolVersion::TLSv1_3));
    assert_eq!(get(&mut stream, "/a").await, "b1 /a");
    assert_eq!(get(&mut stream, "/b").await, "b1 /b", "keep-alive over TLS");

    // The name decides the certificate: other.test's is valid only for that name.
    let mut other = handshake(tls, "other.test", "first-ca.pem").await.unwrap();
    assert_eq!(get(&mut other, "/c").await, "b1 /c");

    let tcp = TcpStream::connect(tls).await.unwrap();
    let connector = client("first-ca.pem", &[&rustls::version::TLS12]);
    let mut old = connector.connect(ServerName::try_from("localhost").unwrap(), tcp).await.unwrap();
    assert_eq!(old.get_ref().1.protocol_version(), Some(rustls::ProtocolVersion::TLSv1_2));
    assert_eq!(get(&mut old, "/d").await, "b1 /d");

    // Plain HTTP stays on its own listener.
    let mut plain = crate::support::Client::connect(router.addr).await;
    assert_eq!(plain.get("/e").await.status, 200);
    router.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_serves_a_renewed_certificate_and_keeps_connections_up() {
    let dir = testkit::TempDir::new("router-tls-reload");
    let (cert, key) = (dir.0.join("cert.pem"), dir.0.join("key.pem"));
    std::fs::copy(tls_file("localhost.pem"), &cert).unwrap();
    std::fs::copy(tls_file("localhost.key"), &key).unwrap();
    let backend = Backend::start("b1").await;
    let c = tls_config(&backend, &cert, &key);
    let router = RunningRouter::start_tls(c.clone()).await;
    let tls = router.tls.unwrap();
    let mut before = handshake(tls, "localhost", "first-ca.pem").await.unwrap();
    assert_eq!(get(&mut before, "/1").await, "b1 /1");

    std::fs::copy(tls_file("renewed.pem"), &cert).unwrap();
    std::fs::copy(tls_file("renewed.key"), &key).unwrap();
    router.handle.reload(c).unwrap();
    let mut after = handshake(tls, "localhost", "second-ca.pem").await.unwrap();
    assert_eq!(get(&mut after, "/2").await, "b1 /2");
    assert!(handshake(tls, "localhost", "first-ca.pem").await.is_err(), "the old one is gone");
    assert_eq!(get(&mut before, "/3").await, "b1 /3", "a connection from before goes on");
    router.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_certificate_files_are_refused_with_their_names() {
    let backend = Backend::start("b1").await;
    let missing = tls_file("missing.pem");
    let c = tls_config(&backend, &missing, &tls_file("localhost.key"));
    let err = router::Router::new(c).err().expect("refused").to_string();
    assert!(err.contains("missing.pem"), "{err}");
    let c = tls_config(&backend, &tls_file("localhost.pem"), &tls_file("other.key"));
    let err = router::Router::new(c).err().expect("a key of another certificate").to_string();
    assert!(err.contains("localhost.pem"), "{err}");
}

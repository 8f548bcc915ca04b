//! The floor under an idle HTTP/2 connection: a bare server on the `h2` crate (and, with
//! `--tls`, rustls as the router uses it), answering every request with 1 KB and holding
//! nothing else per connection. `bench/h2-idle-floor.sh` measures its memory per idle
//! connection with the same clients as `bench/idle-connections.sh` measures the router,
//! so the router's figure can be read against what the libraries alone cost.
//!
//! ```sh
//! cargo run --release -p router --example h2_idle_floor -- [--tls CERT KEY]
//! ```
//!
//! Prints `listening on 127.0.0.1:PORT` once it accepts (a free port on loopback).

use std::sync::Arc;

use bytes::Bytes;
use rustls::pki_types::pem::PemObject;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;

const BODY: [u8; 1024] = [b'x'; 1024];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let tls = match args.as_slice() {
        [] => None,
        [flag, cert, key] if flag == "--tls" => Some(acceptor(cert, key)?),
        _ => return Err("usage: h2_idle_floor [--tls CERT KEY]".into()),
    };
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    runtime.block_on(serve(tls))
}

async fn serve(tls: Option<tokio_rustls::TlsAcceptor>) -> Result<(), Box<dyn std::error::Error>> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    println!("listening on {}", listener.local_addr()?);
    loop {
        let (tcp, _) = listener.accept().await?;
        let tls = tls.clone();
        tokio::spawn(async move {
            match tls {
                None => connection(tcp).await,
                Some(acceptor) => {
                    if let Ok(stream) = acceptor.accept(tcp).await {
                        connection(stream).await;
                    }
                }
            }
        });
    }
}

/// One connection: every stream answered with 1 KB, until the client goes.
async fn connection<T: AsyncRead + AsyncWrite + Unpin>(io: T) {
    let Ok(mut conn) = h2::server::handshake(io).await else { return };
    while let Some(Ok((_request, mut respond))) = conn.accept().await {
        let response = http::Response::builder()
            .header("content-length", BODY.len())
            .body(())
            .expect("a static response head");
        if let Ok(mut send) = respond.send_response(response, false) {
            let _ = send.send_data(Bytes::from_static(&BODY), true);
        }
    }
}

fn acceptor(
    cert: &str,
    key: &str,
) -> Result<tokio_rustls::TlsAcceptor, Box<dyn std::error::Error>> {
    let certs =
        rustls::pki_types::CertificateDer::pem_file_iter(cert)?.collect::<Result<Vec<_>, _>>()?;
    let key = rustls::pki_types::PrivateKeyDer::from_pem_file(key)?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(certs, key)?;
    // As the router: resumption by stateless tickets, no session cache.
    config.ticketer = rustls::crypto::ring::Ticketer::new()?;
    config.alpn_protocols = vec![b"h2".to_vec()];
    Ok(tokio_rustls::TlsAcceptor::from(Arc::new(config)))
}

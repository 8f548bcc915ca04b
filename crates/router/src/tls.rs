//! TLS at the front door: the server side of rustls (on ring), built from PEM files.
//!
//! One default certificate and any number chosen by the name the client asks for (SNI);
//! ALPN `http/1.1` (and `h2`); TLS 1.2 and 1.3; resumption by stateless tickets. The built [`rustls::ServerConfig`] lives in the
//! cluster's settings, so a reload (SIGHUP) that reads new files is used by every handshake
//! after it, while connections already up keep the session they have.

use std::collections::HashMap;
use std::sync::Arc;

use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;

use crate::config::TlsConfig;
use crate::RouterError;

/// The ALPN name of HTTP/2 over TLS.
pub(crate) const ALPN_H2: &[u8] = b"h2";

/// The server configuration `tls` describes, or why it cannot be built (a file missing or
/// unreadable, no certificate in it, a key that does not match). With `http2`, ALPN
/// offers `h2` first, so clients that speak it choose it.
pub(crate) fn server_config(
    tls: &TlsConfig,
    http2: bool,
) -> Result<Arc<rustls::ServerConfig>, RouterError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut by_name = HashMap::new();
    for sni in &tls.sni {
        let key = certified(&sni.cert, &sni.key, &provider)?;
        for name in &sni.names {
            by_name.insert(name.to_ascii_lowercase(), key.clone());
        }
    }
    let resolver = ByName { default: certified(&tls.cert, &tls.key, &provider)?, by_name };
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| tls_error("protocol versions", e))?
        .with_no_client_auth()
        .with_cert_resolver(Arc::new(resolver));
    // Resumption by stateless tickets (keys rotated by rustls every six hours) rather than
    // a server-side session cache: a burst of new clients then leaves no per-session
    // entries behind in the router's memory.
    config.ticketer =
        rustls::crypto::ring::Ticketer::new().map_err(|e| tls_error("session tickets", e))?;
    config.alpn_protocols = if http2 {
        vec![ALPN_H2.to_vec(), b"http/1.1".to_vec()]
    } else {
        vec![b"http/1.1".to_vec()]
    };
    Ok(Arc::new(config))
}

/// A certificate chain and its key from two PEM files.
fn certified(
    cert: &str,
    key: &str,
    provider: &CryptoProvider,
) -> Result<Arc<CertifiedKey>, RouterError> {
    let chain = CertificateDer::pem_file_iter(cert)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| tls_error(&format!("certificate {cert}"), e))?;
    if chain.is_empty() {
        return Err(RouterError::Config(format!("tls: no certificate in {cert}")));
    }
    let private = PrivateKeyDer::from_pem_file(key)
        .map_err(|e| tls_error(&format!("private key {key}"), e))?;
    let certified = CertifiedKey::from_der(chain, private, provider)
        .map_err(|e| tls_error(&format!("{cert} with {key}"), e))?;
    Ok(Arc::new(certified))
}

fn tls_error(what: &str, e: impl std::fmt::Display) -> RouterError {
    RouterError::Config(format!("tls: {what}: {e}"))
}

/// The certificate for the name a client asks for, else the default one.
#[derive(Debug)]
struct ByName {
    default: Arc<CertifiedKey>,
    by_name: HashMap<String, Arc<CertifiedKey>>,
}

impl ResolvesServerCert for ByName {
    fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        let named = hello.server_name().and_then(|n| self.by_name.get(&n.to_ascii_lowercase()));
        Some(named.unwrap_or(&self.default).clone())
    }
}

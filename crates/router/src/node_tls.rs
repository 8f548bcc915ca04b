//! TLS to nodes: the client side of rustls (on ring), trusting the CA certificates of one
//! PEM file. Built with the cluster's settings, so a reload re-reads the file; connections
//! already pooled keep the session they have.

use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;

use crate::RouterError;

/// The client configuration that checks node certificates against the CAs in `ca_file`,
/// or why it cannot be built (the file missing or unreadable, no certificate in it, a
/// certificate that is not a CA's).
pub(crate) fn client_config(ca_file: &str) -> Result<Arc<rustls::ClientConfig>, RouterError> {
    let bad = |why: String| RouterError::Config(format!("node_tls: CA file {ca_file}: {why}"));
    let certs = CertificateDer::pem_file_iter(ca_file)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| bad(e.to_string()))?;
    if certs.is_empty() {
        return Err(bad("no certificate in it".to_string()));
    }
    let mut roots = rustls::RootCertStore::empty();
    for cert in certs {
        roots.add(cert).map_err(|e| bad(e.to_string()))?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| bad(e.to_string()))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

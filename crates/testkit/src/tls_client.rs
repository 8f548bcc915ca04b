//! A TLS client configuration for tests that speak HTTP/2 to a larder listener.

use std::path::Path;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;

/// A client that trusts only the certificate authority in the PEM file `ca` and offers
/// ALPN `h2` alone, so a handshake that does not choose HTTP/2 shows at once.
pub fn h2_client_config(ca: &Path) -> rustls::ClientConfig {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(CertificateDer::from_pem_file(ca).expect("a CA certificate in PEM")).unwrap();
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let mut tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("the default protocol versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    tls.alpn_protocols = vec![b"h2".to_vec()];
    tls
}

//! `larder up --tls`'s certificate: generated at start, self-signed, valid for the names a
//! client on this machine uses (`localhost`, the loopback addresses, the TLS listener's
//! address), written as PEM files into the run's directory, so a client trusts it by
//! `curl --cacert <its file>` and it goes away with the run.

use std::net::IpAddr;
use std::path::{Path, PathBuf};

use crate::error::{Context, Result};

/// The PEM files of a generated certificate and its key.
#[derive(Clone, Debug)]
pub struct SelfSigned {
    /// The certificate, also the one a client trusts (`--cacert`).
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// Generate a certificate valid for `localhost`, 127.0.0.1, ::1 and `ip`, and write it
/// and its key into `dir` (`tls-cert.pem`, `tls-key.pem`, the key readable by its owner
/// only).
pub fn create(dir: &Path, ip: IpAddr) -> Result<SelfSigned> {
    let mut names = vec!["localhost".to_string(), "127.0.0.1".to_string(), "::1".to_string()];
    if !ip.is_unspecified() && !names.contains(&ip.to_string()) {
        names.push(ip.to_string());
    }
    let generated = rcgen::generate_simple_self_signed(names)?;
    let (cert, key) = (dir.join("tls-cert.pem"), dir.join("tls-key.pem"));
    std::fs::write(&cert, generated.cert.pem())
        .with_context(|| format!("writing {}", cert.display()))?;
    write_private(&key, generated.signing_key.serialize_pem().as_bytes())?;
    Ok(SelfSigned { cert, key })
}

/// Write `bytes` to a new file at `path` that only its owner may read.
fn write_private(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("writing {}", path.display()))?;
    file.write_all(bytes).with_context(|| format!("writing {}", path.display()))
}

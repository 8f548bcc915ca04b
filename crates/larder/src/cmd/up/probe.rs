//! "Does it answer?": one HTTP/1.1 GET over a plain socket, retried until a deadline.
//! A process that has reported its bound address answers at once; the retries cover a
//! listener that is bound but whose accept loop is not running yet.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use anyhow::bail;

use super::signals::Signals;

/// Longest wait for one attempt's connect, write or read.
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(2);
/// Pause between attempts (cut short by a stop request).
const RETRY_PAUSE: Duration = Duration::from_millis(50);

/// Waits until `GET path` on `addr` answers 200. Ok(false): a stop was requested first.
pub fn answers(
    addr: SocketAddr,
    path: &str,
    deadline: Instant,
    signals: &Signals,
) -> anyhow::Result<bool> {
    loop {
        let last = match status(addr, path) {
            Ok(200) => return Ok(true),
            Ok(code) => format!("status {code}"),
            Err(e) => e.to_string(),
        };
        if Instant::now() >= deadline {
            bail!("GET http://{addr}{path} did not answer 200 in time (last: {last})");
        }
        if signals.stop_requested(RETRY_PAUSE) {
            return Ok(false);
        }
    }
}

/// The status code of `GET path` on `addr`.
fn status(addr: SocketAddr, path: &str) -> std::io::Result<u16> {
    let mut s = TcpStream::connect_timeout(&addr, ATTEMPT_TIMEOUT)?;
    s.set_read_timeout(Some(ATTEMPT_TIMEOUT))?;
    s.set_write_timeout(Some(ATTEMPT_TIMEOUT))?;
    write!(s, "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n")?;
    // "HTTP/1.1 200" is 12 bytes; read until the status code is in.
    let mut head = [0u8; 12];
    s.read_exact(&mut head)?;
    std::str::from_utf8(&head[9..])
        .ok()
        .and_then(|code| code.parse().ok())
        .filter(|_| head.starts_with(b"HTTP/1."))
        .ok_or_else(|| std::io::Error::other("not an HTTP/1.x response"))
}

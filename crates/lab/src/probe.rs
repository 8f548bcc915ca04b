//! "Does it answer?": one HTTP/1.1 GET over a plain socket, retried until a deadline.
//! [`fetch`] also reads small answers (load reports). A process that has reported its
//! bound address answers at once; the retries cover a listener that is bound but whose
//! accept loop is not running yet.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use crate::error::{LabError, Result};
use crate::signals::Signals;

/// Longest wait for one attempt's connect, write or read.
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(2);
/// Pause between attempts (cut short by a stop request).
const RETRY_PAUSE: Duration = Duration::from_millis(50);
/// Longest response [`fetch`] reads (load reports and stats are a few KB).
const MAX_RESPONSE_BYTES: u64 = 1 << 20;

/// Waits until `GET path` on `addr` answers 200. Ok(false): a stop was requested first.
pub fn answers(addr: SocketAddr, path: &str, deadline: Instant, signals: &Signals) -> Result<bool> {
    loop {
        let last = match status(addr, path) {
            Ok(200) => return Ok(true),
            Ok(code) => format!("status {code}"),
            Err(e) => e.to_string(),
        };
        if Instant::now() >= deadline {
            return Err(LabError::Child(format!(
                "GET http://{addr}{path} did not answer 200 in time (last: {last})"
            )));
        }
        if signals.stop_requested(RETRY_PAUSE) {
            return Ok(false);
        }
    }
}

/// The status code of `GET path` on `addr`.
fn status(addr: SocketAddr, path: &str) -> std::io::Result<u16> {
    fetch(addr, path).map(|(code, _)| code)
}

/// Status code and body of `GET path` on `addr` (the body is read to the end: the request
/// asks the server to close). Bounded by [`ATTEMPT_TIMEOUT`] per socket operation.
pub fn fetch(addr: SocketAddr, path: &str) -> std::io::Result<(u16, Vec<u8>)> {
    let mut s = TcpStream::connect_timeout(&addr, ATTEMPT_TIMEOUT)?;
    s.set_read_timeout(Some(ATTEMPT_TIMEOUT))?;
    s.set_write_timeout(Some(ATTEMPT_TIMEOUT))?;
    write!(s, "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n")?;
    let mut response = Vec::new();
    s.take(MAX_RESPONSE_BYTES).read_to_end(&mut response)?;
    let bad = || std::io::Error::other("not an HTTP/1.x response");
    // "HTTP/1.1 200 …": the status code is bytes 9..12.
    let code = response
        .get(9..12)
        .filter(|_| response.starts_with(b"HTTP/1."))
        .and_then(|c| std::str::from_utf8(c).ok())
        .and_then(|c| c.parse().ok())
        .ok_or_else(bad)?;
    let body_at = response.windows(4).position(|w| w == b"\r\n\r\n").ok_or_else(bad)? + 4;
    Ok((code, response.split_off(body_at)))
}

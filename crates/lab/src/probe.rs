//! "Does it answer?": one HTTP/1.1 GET over a plain socket, retried until a deadline
//! ([`answers`]: 200; [`until`]: whatever the caller accepts, as a router that has heard
//! from every node). [`fetch`] also reads small answers (load reports, `/stats`). A process that has reported its
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
/// The response head [`fetch`] accepts (the response as a whole is bounded already).
const HEAD_LIMITS: http1::ResponseLimits =
    http1::ResponseLimits { max_head_bytes: usize::MAX, max_fields: 64 };

/// Waits until `GET path` on `addr` answers 200. Ok(false): a stop was requested first.
pub fn answers(addr: SocketAddr, path: &str, deadline: Instant, signals: &Signals) -> Result<bool> {
    until(
        addr,
        path,
        deadline,
        signals,
        |answer| match answer {
            Ok((200, _)) => Ok(()),
            Ok((code, _)) => Err(format!("status {code}")),
            Err(e) => Err(e.to_string()),
        },
        |last| format!("GET http://{addr}{path} did not answer 200 in time (last: {last})"),
    )
}

/// Fetches `GET path` on `addr` (see [`fetch`]) until `accept` takes the answer, every
/// [`RETRY_PAUSE`]. Ok(false): a stop was requested first. At `deadline`, an error
/// saying `late(why)`, where `why` is `accept`'s reason for refusing the last answer.
pub fn until(
    addr: SocketAddr,
    path: &str,
    deadline: Instant,
    signals: &Signals,
    mut accept: impl FnMut(std::io::Result<(u16, Vec<u8>)>) -> std::result::Result<(), String>,
    late: impl FnOnce(&str) -> String,
) -> Result<bool> {
    loop {
        let why = match accept(fetch(addr, path)) {
            Ok(()) => return Ok(true),
            Err(why) => why,
        };
        if Instant::now() >= deadline {
            return Err(LabError::Child(late(&why)));
        }
        if signals.stop_requested(RETRY_PAUSE) {
            return Ok(false);
        }
    }
}

/// Status code and body of `GET path` on `addr` (the body is read to the end: the request
/// asks the server to close). Bounded by [`ATTEMPT_TIMEOUT`] per socket operation. The
/// request and the head's parse are `http1`'s, as for every larder client.
pub fn fetch(addr: SocketAddr, path: &str) -> std::io::Result<(u16, Vec<u8>)> {
    let mut s = TcpStream::connect_timeout(&addr, ATTEMPT_TIMEOUT)?;
    s.set_read_timeout(Some(ATTEMPT_TIMEOUT))?;
    s.set_write_timeout(Some(ATTEMPT_TIMEOUT))?;
    s.write_all(&http1::get_request(&addr.to_string(), path, None, true))?;
    let mut response = Vec::new();
    s.take(MAX_RESPONSE_BYTES).read_to_end(&mut response)?;
    let (code, body_at) = {
        let mut slots = http1::HeaderSlots::new();
        let head = http1::parse_response_head(&response, &mut slots, &HEAD_LIMITS)
            .map_err(std::io::Error::other)?
            .ok_or_else(|| std::io::Error::other("connection closed within the response head"))?;
        (head.status, head.len)
    };
    Ok((code, response.split_off(body_at)))
}

#[cfg(test)]
mod tests {
    use super::fetch;
    use std::io::{Read, Write};
    use std::net::TcpListener;

    /// A server that answers one connection with `response`, then closes it; what it
    /// received comes back from the thread.
    fn answer_once(
        response: &'static [u8],
    ) -> (std::net::SocketAddr, std::thread::JoinHandle<Vec<u8>>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let server = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut got = Vec::new();
            let mut buf = [0u8; 1024];
            while !got.ends_with(b"\r\n\r\n") {
                let n = s.read(&mut buf).unwrap();
                got.extend_from_slice(&buf[..n]);
            }
            s.write_all(response).unwrap();
            got
        });
        (addr, server)
    }

    #[test]
    fn fetch_gives_the_status_and_the_body_after_the_head() {
        let (addr, server) = answer_once(b"HTTP/1.1 503 Busy\r\nContent-Length: 2\r\n\r\nno");
        assert_eq!(fetch(addr, "/x").unwrap(), (503, b"no".to_vec()));
        let request = String::from_utf8(server.join().unwrap()).unwrap();
        assert_eq!(
            request,
            format!("GET /x HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n")
        );
        let (addr, _server) = answer_once(b"SSH-2.0-OpenSSH\r\n\r\n");
        assert!(fetch(addr, "/").is_err(), "not an HTTP/1.x response");
    }
}

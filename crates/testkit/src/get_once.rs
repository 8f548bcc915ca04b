//! The simplest client a test of a whole program needs: one GET, read to the close.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// GET `path` from `addr` (`host:port`) with `Connection: close` and return the whole
/// raw response (head and body) as text; every read gives up after `wait`.
pub fn get_once(addr: &str, path: &str, wait: Duration) -> String {
    String::from_utf8_lossy(&get_once_bytes(addr, path, wait)).into_owned()
}

/// The same, the response's bytes exactly as received.
pub fn get_once_bytes(addr: &str, path: &str, wait: Duration) -> Vec<u8> {
    let mut s = TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect {addr}: {e}"));
    s.set_read_timeout(Some(wait)).unwrap();
    s.write_all(&http1::get_request(addr, path, None, true)).unwrap();
    let mut resp = Vec::new();
    s.read_to_end(&mut resp).unwrap();
    resp
}

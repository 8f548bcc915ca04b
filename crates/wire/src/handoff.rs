//! Connection handoff on one host: a router that has read a client's first request passes
//! the client's socket to the node that should serve it, over the Unix socket the node
//! advertises in its load report ([`crate::LoadReport::handoff_socket`]). The descriptor
//! travels beside the first bytes of a [`Handoff`] message (SCM_RIGHTS); the message
//! carries what the node cannot learn from the socket: the bytes the router already read
//! (the first request and anything pipelined after it) and the client's address as the
//! router saw it.
//!
//! The exchange, four steps so that a client is never served twice, and a node that
//! refuses, hangs or dies before it serves costs no request:
//! 1. router → node: [`Handoff`] with the descriptor;
//! 2. node → router: [`HandoffStep::Adopt`] (it will serve the connection once told, and
//!    has not touched it) or [`HandoffStep::Refuse`] (full, too large, not a TCP socket);
//! 3. router → node: [`HandoffStep::Commit`]. A node that reads end of stream instead
//!    (the router gave up waiting for step 2 and relays the request itself) drops its
//!    copy unread; a node that reads the commit serves the connection, always;
//! 4. node → router: [`HandoffStep::Started`], sent before the node reads or writes the
//!    connection. Only then does the router let its copy go. End of stream instead means
//!    the node died before serving: the router relays the request. (No answer within
//!    the router's bound after a commit leaves the connection to the node.)
//!
//! Layout of a [`Handoff`], integers big-endian: version (1 byte), address family (4 or
//! 6), the client's IP (4 or 16 bytes), its port (2 bytes), the length of the bytes
//! (4 bytes), the bytes.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// The version of the message layout this crate writes and reads.
pub const HANDOFF_VERSION: u8 = 1;

/// The largest message header (version, family, IPv6 address, port, length).
pub const HANDOFF_HEADER_MAX: usize = 1 + 1 + 16 + 2 + 4;

/// What a router tells a node about a client connection it passes on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Handoff {
    /// The client's address, for the node's access log and its own view of the client.
    pub client: SocketAddr,
    /// The bytes the router read from the client and did not answer: the node serves the
    /// connection starting from these, then reads the socket.
    pub bytes: Vec<u8>,
}

/// One byte of the exchange after the message (steps 2 and 3 above).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum HandoffStep {
    /// Node → router: the node takes the connection once committed.
    Adopt,
    /// Node → router: the node will not take it; the router serves the request itself.
    Refuse,
    /// Router → node: the connection is the node's from now on.
    Commit,
    /// Node → router: the node is about to serve the connection.
    Started,
}

/// Why a message could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HandoffError {
    /// A layout this crate does not know.
    Version(u8),
    /// An address family other than 4 or 6.
    Family(u8),
    /// The bytes would exceed the receiver's limit.
    TooLarge { len: usize, max: usize },
}

impl fmt::Display for HandoffError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HandoffError::Version(v) => write!(f, "handoff message version {v} is not supported"),
            HandoffError::Family(v) => write!(f, "handoff message address family {v} is unknown"),
            HandoffError::TooLarge { len, max } => {
                write!(f, "handoff message carries {len} bytes, more than the limit of {max}")
            }
        }
    }
}

impl std::error::Error for HandoffError {}

impl HandoffStep {
    /// The byte on the wire.
    pub fn byte(self) -> u8 {
        match self {
            HandoffStep::Adopt => b'A',
            HandoffStep::Refuse => b'R',
            HandoffStep::Commit => b'C',
            HandoffStep::Started => b'S',
        }
    }

    /// The step a byte stands for, if any.
    pub fn from_byte(b: u8) -> Option<HandoffStep> {
        match b {
            b'A' => Some(HandoffStep::Adopt),
            b'R' => Some(HandoffStep::Refuse),
            b'C' => Some(HandoffStep::Commit),
            b'S' => Some(HandoffStep::Started),
            _ => None,
        }
    }
}

impl Handoff {
    /// Append the message to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.push(HANDOFF_VERSION);
        match self.client.ip() {
            IpAddr::V4(ip) => {
                out.push(4);
                out.extend_from_slice(&ip.octets());
            }
            IpAddr::V6(ip) => {
                out.push(6);
                out.extend_from_slice(&ip.octets());
            }
        }
        out.extend_from_slice(&self.client.port().to_be_bytes());
        out.extend_from_slice(&(self.bytes.len() as u32).to_be_bytes());
        out.extend_from_slice(&self.bytes);
    }

    /// Read a message from the start of `buf`, refusing one whose bytes exceed `max`
    /// (checked as soon as the header is in, before the bytes are waited for).
    /// `Ok(None)`: `buf` holds only part of it; `Ok(Some((message, used)))` otherwise.
    pub fn decode(buf: &[u8], max: usize) -> Result<Option<(Handoff, usize)>, HandoffError> {
        let Some(&version) = buf.first() else { return Ok(None) };
        if version != HANDOFF_VERSION {
            return Err(HandoffError::Version(version));
        }
        let Some(&family) = buf.get(1) else { return Ok(None) };
        let ip_len = match family {
            4 => 4,
            6 => 16,
            other => return Err(HandoffError::Family(other)),
        };
        let header = 2 + ip_len + 2 + 4;
        let Some(head) = buf.get(..header) else { return Ok(None) };
        let ip_bytes = &head[2..2 + ip_len];
        let ip = match <[u8; 4]>::try_from(ip_bytes) {
            Ok(v4) => IpAddr::V4(Ipv4Addr::from(v4)),
            Err(_) => {
                let v6: [u8; 16] = ip_bytes.try_into().map_err(|_| HandoffError::Family(6))?;
                IpAddr::V6(Ipv6Addr::from(v6))
            }
        };
        let port = u16::from_be_bytes([head[2 + ip_len], head[3 + ip_len]]);
        let len_at = 4 + ip_len;
        let len = u32::from_be_bytes([
            head[len_at],
            head[len_at + 1],
            head[len_at + 2],
            head[len_at + 3],
        ]) as usize;
        if len > max {
            return Err(HandoffError::TooLarge { len, max });
        }
        let Some(bytes) = buf.get(header..header + len) else { return Ok(None) };
        let client = SocketAddr::new(ip, port);
        Ok(Some((Handoff { client, bytes: bytes.to_vec() }, header + len)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encoded(m: &Handoff) -> Vec<u8> {
        let mut out = Vec::new();
        m.encode(&mut out);
        out
    }

    #[test]
    fn round_trips_both_families() {
        for client in ["192.0.2.7:51234", "[2001:db8::1]:443"] {
            let m = Handoff {
                client: client.parse().unwrap(),
                bytes: b"GET / HTTP/1.1\r\nHost: a\r\n\r\nGET /b HTTP/1.1\r\n".to_vec(),
            };
            let buf = encoded(&m);
            assert_eq!(Handoff::decode(&buf, 1024), Ok(Some((m.clone(), buf.len()))));
            // Trailing bytes are not the message's.
            let mut more = buf.clone();
            more.extend_from_slice(b"xyz");
            assert_eq!(Handoff::decode(&more, 1024), Ok(Some((m, buf.len()))));
        }
    }

    #[test]
    fn every_prefix_is_incomplete() {
        let m = Handoff { client: "[::1]:9".parse().unwrap(), bytes: vec![7; 40] };
        let buf = encoded(&m);
        for n in 0..buf.len() {
            assert_eq!(Handoff::decode(&buf[..n], 1024), Ok(None), "prefix of {n} bytes");
        }
    }

    #[test]
    fn refuses_unknown_layouts_and_oversized_bytes() {
        let m = Handoff { client: "10.0.0.1:80".parse().unwrap(), bytes: vec![1; 100] };
        let mut buf = encoded(&m);
        // The size is refused from the header alone, before the bytes arrive.
        assert_eq!(
            Handoff::decode(&buf[..HANDOFF_HEADER_MAX - 12], 99),
            Err(HandoffError::TooLarge { len: 100, max: 99 })
        );
        assert!(Handoff::decode(&buf, 100).unwrap().is_some());
        buf[1] = 5;
        assert_eq!(Handoff::decode(&buf, 100), Err(HandoffError::Family(5)));
        buf[0] = 2;
        assert_eq!(Handoff::decode(&buf, 100), Err(HandoffError::Version(2)));
    }

    #[test]
    fn steps_are_distinct_bytes() {
        let steps =
            [HandoffStep::Adopt, HandoffStep::Refuse, HandoffStep::Commit, HandoffStep::Started];
        for step in steps {
            assert_eq!(HandoffStep::from_byte(step.byte()), Some(step));
        }
        assert_eq!(HandoffStep::from_byte(0), None);
    }
}

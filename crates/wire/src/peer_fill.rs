//! Peer fill: a caching node that misses on a target another node holds or is filling
//! asks that node before the origin, so a target replicated on several nodes costs the
//! origin one fetch cluster-wide.
//!
//! Two fields, both written and read here:
//! - `X-Larder-Peer: <ip:port>` ([`PeerHint`]): a router names, on a request it sends to
//!   a replica of a target, the node the target was placed on first (it holds the target
//!   or is filling it). The router removes one a client sent; a node asks only peers it
//!   was configured with, whatever the field names.
//! - `X-Larder-Peer-Fill: 1` ([`PEER_FILL_HEADER`]): a node marks the request it sends a
//!   peer, and a marked request is never sent on to another peer (nor made to wait for a
//!   fetch that is itself waiting on a peer), so two nodes naming each other cannot loop.

use std::net::SocketAddr;

use crate::field_line::push_field_line;

/// The field naming the peer to fill from.
pub const PEER_HEADER: &str = "X-Larder-Peer";

/// The field marking a node's request to a peer.
pub const PEER_FILL_HEADER: &str = "X-Larder-Peer-Fill";

/// The node a router names as the one to fill a target from.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct PeerHint(pub SocketAddr);

impl PeerHint {
    /// The whole header line, `X-Larder-Peer: <ip:port>\r\n`, appended to `out`.
    pub fn write_field(&self, out: &mut Vec<u8>) {
        use std::io::Write;
        push_field_line(out, PEER_HEADER, |out| {
            // Writing into a Vec cannot fail.
            let _ = write!(out, "{}", self.0);
        });
    }

    /// Read a header value; `None` unless it is one socket address.
    pub fn parse(value: &[u8]) -> Option<PeerHint> {
        let text = std::str::from_utf8(value.trim_ascii()).ok()?;
        text.parse().ok().map(PeerHint)
    }
}

/// The header line marking a node's request to a peer, `X-Larder-Peer-Fill: 1`, without
/// its CRLF: the name and the value.
pub const PEER_FILL_FIELD: (&str, &[u8]) = (PEER_FILL_HEADER, b"1");

/// Whether a request carrying `value` in [`PEER_FILL_HEADER`] is a peer fill (any value
/// is: a marked request must never fill from a peer again).
pub fn is_peer_fill(value: Option<&[u8]>) -> bool {
    value.is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_and_read_back() {
        for addr in ["127.0.0.1:8081", "[::1]:9000"] {
            let hint = PeerHint(addr.parse().unwrap());
            let mut out = Vec::new();
            hint.write_field(&mut out);
            assert_eq!(out, format!("X-Larder-Peer: {addr}\r\n").as_bytes());
            let value = &out[PEER_HEADER.len() + 2..out.len() - 2];
            assert_eq!(PeerHint::parse(value), Some(hint));
        }
        assert_eq!(
            PeerHint::parse(b" 10.0.0.1:80 "),
            Some(PeerHint("10.0.0.1:80".parse().unwrap()))
        );
    }

    #[test]
    fn anything_else_is_ignored() {
        for bad in [&b""[..], b"example.com:80", b"10.0.0.1", b"10.0.0.1:80 10.0.0.2:80", b"\xff"] {
            assert_eq!(PeerHint::parse(bad), None, "{bad:?}");
        }
        assert!(is_peer_fill(Some(b"1")) && is_peer_fill(Some(b"")) && !is_peer_fill(None));
    }
}

//! Bounds on what a peer may send in a message head: a client's request head, an
//! upstream's response head.

/// Limits applied while parsing a request head. The defaults match what common servers
/// accept (nginx allows 8 KiB lines and 32 KiB of headers), so real clients never hit them
/// while a hostile one cannot make the server buffer without end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Bytes of the whole head (request line and header fields, up to the blank line).
    pub max_header_bytes: usize,
    /// Number of header fields.
    pub max_headers: usize,
    /// Bytes of the request target (the URI in the request line).
    pub max_uri_len: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_header_bytes: 16 * 1024, max_headers: 64, max_uri_len: 8 * 1024 }
    }
}

/// Limits applied while parsing a response head, so a client reading from a server it
/// does not control (an origin, a node, whatever a benchmark points at) buffers a bounded
/// amount. There is no default: each client knows its own (a configured one, or its
/// buffer's size).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResponseLimits {
    /// Bytes of the whole head (status line and header fields, up to the blank line);
    /// `usize::MAX` when the caller's buffer already bounds it.
    pub max_head_bytes: usize,
    /// Number of header fields.
    pub max_fields: usize,
}

//! Who polls a node's load report: each router (and each distributor of `larder up
//! --peers`) picks a random id when it starts and names it on every poll, so a node can
//! say how many routers place targets on it ([`crate::LoadReport::routers`]). A router
//! that learns it is alone has no placement to agree with.
//!
//! `X-Larder-Poller: <id>`, 16 lowercase hex digits. A node that does not know it
//! ignores it; a poll without it (an operator's, an experiment's) is not counted.

use crate::field_line::push_field_line;
use crate::target_hint::{parse_hex, push_hex};

/// The header's name.
pub const POLLER_HEADER: &str = "X-Larder-Poller";

/// One polling process's id, random per start.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct PollerId(pub u64);

impl PollerId {
    /// The whole header line, `X-Larder-Poller: <id>\r\n`, appended to `out`.
    pub fn write_field(&self, out: &mut Vec<u8>) {
        push_field_line(out, POLLER_HEADER, |out| push_hex(out, self.0));
    }

    /// Read a header value; `None` unless it is exactly one 16-digit hex number.
    pub fn parse(value: &[u8]) -> Option<PollerId> {
        let value = value.trim_ascii();
        if value.len() != 16 {
            return None;
        }
        parse_hex(value).map(PollerId)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_and_read_back_and_anything_else_is_ignored() {
        let id = PollerId(0x00ab_cdef_0123_4567);
        let mut out = Vec::new();
        id.write_field(&mut out);
        assert_eq!(out, b"X-Larder-Poller: 00abcdef01234567\r\n");
        let value = &out[POLLER_HEADER.len() + 2..out.len() - 2];
        assert_eq!(PollerId::parse(value), Some(id));
        assert_eq!(PollerId::parse(b" 00ABCDEF01234567 "), Some(id), "hex in any case");
        for bad in
            [&b""[..], b"abc", b"00abcdef012345678", b"00abcdef0123456g", b"-0abcdef01234567"]
        {
            assert_eq!(PollerId::parse(bad), None, "{bad:?}");
        }
    }
}

//! The target a router placed a request by, told to the node in a request header, so the
//! node can say in its [`crate::TargetDigest`] which targets it holds without knowing how
//! the router maps URLs to targets.
//!
//! `X-Larder-Target: <key> <tree>`, both 16 lowercase hex digits: the target's key and its
//! subtree's key (HACC places subtrees). The router writes it on every request it sends
//! (and removes one a client sent); a node that does not know it ignores it.

use crate::field_line::push_field_line;
use crate::percent::{hex_value, LOWER_HEX};

/// The header's name.
pub const TARGET_HINT_HEADER: &str = "X-Larder-Target";

/// A target's key and its subtree's key.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct TargetHint {
    pub key: u64,
    pub tree: u64,
}

impl TargetHint {
    /// The whole header line, `X-Larder-Target: <key> <tree>\r\n`, appended to `out`.
    pub fn write_field(&self, out: &mut Vec<u8>) {
        push_field_line(out, TARGET_HINT_HEADER, |out| self.write_value(out));
    }

    /// The header's value, `<key> <tree>`, appended to `out`.
    pub fn write_value(&self, out: &mut Vec<u8>) {
        push_hex(out, self.key);
        out.push(b' ');
        push_hex(out, self.tree);
    }

    /// Read a header value; `None` unless it is exactly two 16-digit hex numbers.
    pub fn parse(value: &[u8]) -> Option<TargetHint> {
        let value = value.trim_ascii();
        if value.len() != 33 || value[16] != b' ' {
            return None;
        }
        Some(TargetHint { key: parse_hex(&value[..16])?, tree: parse_hex(&value[17..])? })
    }
}

/// `v` as 16 lowercase hex digits, appended to `out`.
pub(crate) fn push_hex(out: &mut Vec<u8>, v: u64) {
    out.extend((0..16).rev().map(|i| LOWER_HEX[((v >> (4 * i)) & 0xf) as usize]));
}

/// Hex digits read as one number; `None` on anything else.
pub(crate) fn parse_hex(digits: &[u8]) -> Option<u64> {
    digits.iter().try_fold(0u64, |v, &d| Some(v << 4 | u64::from(hex_value(d)?)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_and_read_back() {
        let hint = TargetHint { key: 0x0123_4567_89ab_cdef, tree: u64::MAX };
        let mut out = Vec::new();
        hint.write_field(&mut out);
        assert_eq!(out, b"X-Larder-Target: 0123456789abcdef ffffffffffffffff\r\n");
        let value = &out[TARGET_HINT_HEADER.len() + 2..out.len() - 2];
        assert_eq!(TargetHint::parse(value), Some(hint));
        assert_eq!(TargetHint::parse(b" 0123456789abcdef ffffffffffffffff "), Some(hint));
        let mut alone = Vec::new();
        hint.write_value(&mut alone);
        assert_eq!(alone, value, "the value alone is the field's");
    }

    #[test]
    fn anything_else_is_ignored() {
        for bad in [
            &b""[..],
            b"12",
            b"0123456789abcdefffffffffffffffff0",
            b"0123456789abcdeg ffffffffffffffff",
        ] {
            assert_eq!(TargetHint::parse(bad), None, "{bad:?}");
        }
    }
}

//! Hex digits and `%XX` escapes (RFC 3986 §2.1), the one decoder behind every caller.
//!
//! Callers differ in what a decoded byte may be (an encoded `/` refused by the file
//! server, an encoded NUL by the mapper, only safe literals in docroot names), so the
//! decoder yields each byte with where it came from and whether it was escaped, and each
//! caller applies its own rules and error type. It never allocates: callers push into
//! buffers they reuse.

/// Upper-case hex digits, the canonical spelling of `%XX`.
pub const UPPER_HEX: &[u8; 16] = b"0123456789ABCDEF";

/// Lower-case hex digits (as `\xhh` escapes in access logs are spelled).
pub const LOWER_HEX: &[u8; 16] = b"0123456789abcdef";

/// The value of one hex digit, either case.
#[inline]
pub const fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Append `%XX` (upper-case hex) for `b`.
#[inline]
pub fn push_escaped(b: u8, out: &mut String) {
    out.push('%');
    out.push(UPPER_HEX[usize::from(b >> 4)] as char);
    out.push(UPPER_HEX[usize::from(b & 0xf)] as char);
}

/// One decoded byte of a percent-encoded string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unit {
    /// Where it starts in the input (the `%` of an escape).
    pub at: usize,
    pub byte: u8,
    /// Whether it was written as `%XX`.
    pub escaped: bool,
}

/// A `%` not followed by two hex digits, at byte `at` of the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BadEscape {
    pub at: usize,
}

/// The decoded bytes of `raw`, in order; stops after the first malformed escape.
pub fn units(raw: &[u8]) -> Units<'_> {
    Units { raw, i: 0 }
}

/// Iterator returned by [`units`].
#[derive(Clone, Debug)]
pub struct Units<'a> {
    raw: &'a [u8],
    i: usize,
}

impl Iterator for Units<'_> {
    type Item = Result<Unit, BadEscape>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let at = self.i;
        let b = *self.raw.get(at)?;
        if b != b'%' {
            self.i += 1;
            return Some(Ok(Unit { at, byte: b, escaped: false }));
        }
        let hi = self.raw.get(at + 1).copied().and_then(hex_value);
        let lo = self.raw.get(at + 2).copied().and_then(hex_value);
        match (hi, lo) {
            (Some(hi), Some(lo)) => {
                self.i += 3;
                Some(Ok(Unit { at, byte: hi << 4 | lo, escaped: true }))
            }
            _ => {
                self.i = self.raw.len();
                Some(Err(BadEscape { at }))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(raw: &str) -> Result<Vec<(u8, bool)>, BadEscape> {
        units(raw.as_bytes()).map(|u| u.map(|u| (u.byte, u.escaped))).collect()
    }

    #[test]
    fn hex_digits() {
        assert_eq!(
            (hex_value(b'0'), hex_value(b'a'), hex_value(b'F')),
            (Some(0), Some(10), Some(15))
        );
        assert_eq!((hex_value(b'g'), hex_value(b'%')), (None, None));
    }

    #[test]
    fn decodes_with_origin() {
        assert_eq!(
            decode("a%2Fb%2f").unwrap(),
            [(b'a', false), (b'/', true), (b'b', false), (b'/', true)]
        );
        let at: Vec<usize> = units(b"%41b").map(|u| u.unwrap().at).collect();
        assert_eq!(at, [0, 3]);
        assert_eq!(decode(""), Ok(vec![]));
    }

    #[test]
    fn malformed_escapes_end_decoding() {
        assert_eq!(decode("a%"), Err(BadEscape { at: 1 }));
        assert_eq!(decode("a%4"), Err(BadEscape { at: 1 }));
        assert_eq!(decode("%zz%41"), Err(BadEscape { at: 0 }));
        assert_eq!(units(b"%zzabc").count(), 1);
    }

    #[test]
    fn escapes_upper_case() {
        let mut s = String::new();
        for b in [b'/', 0xe9, 0] {
            push_escaped(b, &mut s);
        }
        assert_eq!(s, "%2F%E9%00");
    }
}

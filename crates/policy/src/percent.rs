//! Percent-decoding of raw path segments and their canonical re-encoding (RFC 3986 §6.2.2).
//!
//! The mapper decodes each segment fully, so `/%61` and `/a` are one target (as the file
//! server sees them), then re-encodes it in one canonical spelling: unreserved
//! characters, sub-delims, `:` and `@` literal, everything else (including a decoded `/`,
//! `%`, `?`, `#`, spaces and non-ASCII) as `%XX` with upper-case hex. The canonical path
//! is therefore plain ASCII, maps to itself, and an encoded `/` stays a literal `%2F`
//! inside its segment instead of becoming a separator.

use crate::mapper::TargetError;

/// Decode one raw segment (`raw` starts at byte `at` of the request target) into `out`.
/// Rejects malformed escapes and an encoded NUL; the caller checks UTF-8.
pub(crate) fn decode_segment(raw: &[u8], at: usize, out: &mut Vec<u8>) -> Result<(), TargetError> {
    out.clear();
    let mut i = 0;
    while i < raw.len() {
        let b = raw[i];
        if b != b'%' {
            out.push(b);
            i += 1;
            continue;
        }
        let hi = raw.get(i + 1).copied().and_then(hex_value);
        let lo = raw.get(i + 2).copied().and_then(hex_value);
        let (Some(hi), Some(lo)) = (hi, lo) else {
            return Err(TargetError::BadEscape { at: at + i });
        };
        let decoded = hi << 4 | lo;
        if decoded == 0 {
            return Err(TargetError::EncodedNul { at: at + i });
        }
        out.push(decoded);
        i += 3;
    }
    Ok(())
}

/// Append the canonical spelling of a decoded segment to `out`.
pub(crate) fn encode_segment(decoded: &str, out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for &b in decoded.as_bytes() {
        if is_literal(b) {
            out.push(b as char);
        } else {
            out.push('%');
            out.push(HEX[usize::from(b >> 4)] as char);
            out.push(HEX[usize::from(b & 0xf)] as char);
        }
    }
}

/// Characters a canonical path segment spells literally: unreserved, sub-delims, `:`, `@`.
pub(crate) fn is_literal(b: u8) -> bool {
    LITERAL[usize::from(b)]
}

/// [`is_literal`] as a table: it runs for every byte of every mapped path.
const LITERAL: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = c.is_ascii_alphanumeric()
            || matches!(c, b'-' | b'.' | b'_' | b'~')
            || matches!(c, b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b',' | b';')
            || matches!(c, b'=' | b':' | b'@');
        b += 1;
    }
    table
};

fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canonical(raw: &str) -> Result<String, TargetError> {
        let mut bytes = Vec::new();
        decode_segment(raw.as_bytes(), 0, &mut bytes)?;
        let mut out = String::new();
        encode_segment(std::str::from_utf8(&bytes).unwrap(), &mut out);
        Ok(out)
    }

    #[test]
    fn decodes_then_spells_canonically() {
        assert_eq!(canonical("%61b%7e").unwrap(), "ab~");
        assert_eq!(canonical("a%2fb").unwrap(), "a%2Fb");
        assert_eq!(canonical("%C3%A9").unwrap(), "%C3%A9");
        assert_eq!(canonical("100%25").unwrap(), "100%25");
        assert_eq!(canonical("a+b=c").unwrap(), "a+b=c");
    }

    #[test]
    fn rejects_malformed_escapes_and_nul() {
        assert_eq!(canonical("a%"), Err(TargetError::BadEscape { at: 1 }));
        assert_eq!(canonical("a%4"), Err(TargetError::BadEscape { at: 1 }));
        assert_eq!(canonical("%zz"), Err(TargetError::BadEscape { at: 0 }));
        assert_eq!(canonical("ab%00"), Err(TargetError::EncodedNul { at: 2 }));
    }
}

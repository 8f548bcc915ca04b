//! The canonical percent-encoding of a decoded path segment (RFC 3986 §6.2.2).
//!
//! The mapper decodes each segment fully (with `wire::percent`), so `/%61` and `/a` are one target (as the file
//! server sees them), then re-encodes it in one canonical spelling: unreserved
//! characters, sub-delims, `:` and `@` literal, everything else (including a decoded `/`,
//! `%`, `?`, `#`, spaces and non-ASCII) as `%XX` with upper-case hex. The canonical path
//! is therefore plain ASCII, maps to itself, and an encoded `/` stays a literal `%2F`
//! inside its segment instead of becoming a separator.

/// Append the canonical spelling of a decoded segment to `out`.
pub(crate) fn encode_segment(decoded: &str, out: &mut String) {
    for &b in decoded.as_bytes() {
        if is_literal(b) {
            out.push(b as char);
        } else {
            wire::percent::push_escaped(b, out);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn canonical(raw: &str) -> String {
        let bytes: Vec<u8> =
            wire::percent::units(raw.as_bytes()).map(|u| u.unwrap().byte).collect();
        let mut out = String::new();
        encode_segment(std::str::from_utf8(&bytes).unwrap(), &mut out);
        out
    }

    #[test]
    fn decodes_then_spells_canonically() {
        assert_eq!(canonical("%61b%7e"), "ab~");
        assert_eq!(canonical("a%2fb"), "a%2Fb");
        assert_eq!(canonical("%C3%A9"), "%C3%A9");
        assert_eq!(canonical("100%25"), "100%25");
        assert_eq!(canonical("a+b=c"), "a+b=c");
    }
}

//! Request path → a relative path that cannot leave the document root.
//!
//! Everything is decided on the decoded bytes, once: percent escapes are decoded, and then
//! any NUL, backslash, control byte, encoded slash, invalid (including overlong) UTF-8 or
//! dot segment refuses the request. Refusing is simpler to get right than normalising, and
//! no legitimate static URL needs any of these.

/// A request path proven safe to join onto the docroot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SafePath {
    /// Segments joined by `/`, no leading slash; empty for the root.
    pub rel: String,
    /// Whether the URL ended in `/` (a directory URL).
    pub trailing_slash: bool,
}

/// Why a path was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("the path does not start with /")]
    NotAbsolute,
    #[error("malformed percent escape")]
    BadEscape,
    #[error("encoded slash in the path")]
    EncodedSlash,
    #[error("NUL, backslash or control byte in the path")]
    ForbiddenByte,
    #[error("the path is not valid UTF-8")]
    BadUtf8,
    #[error("dot segment in the path")]
    DotSegment,
}

/// Decode and check `path` (the target without its query).
pub fn sanitize(path: &str) -> Result<SafePath, PathError> {
    let raw = path.as_bytes();
    if raw.first() != Some(&b'/') {
        return Err(PathError::NotAbsolute);
    }
    let mut decoded = Vec::with_capacity(raw.len());
    for unit in wire::percent::units(raw) {
        let unit = unit.map_err(|_| PathError::BadEscape)?;
        if unit.escaped && unit.byte == b'/' {
            return Err(PathError::EncodedSlash);
        }
        decoded.push(unit.byte);
    }
    if decoded.iter().any(|&b| b == 0 || b == b'\\' || b < 0x20 || b == 0x7f) {
        return Err(PathError::ForbiddenByte);
    }
    let text = String::from_utf8(decoded).map_err(|_| PathError::BadUtf8)?;
    let mut rel = String::with_capacity(text.len());
    for seg in text.split('/').filter(|s| !s.is_empty()) {
        if seg == "." || seg == ".." {
            return Err(PathError::DotSegment);
        }
        if !rel.is_empty() {
            rel.push('/');
        }
        rel.push_str(seg);
    }
    Ok(SafePath { rel, trailing_slash: text.ends_with('/') })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_paths() {
        let p = sanitize("/a//b/c.html").unwrap();
        assert_eq!(p.rel, "a/b/c.html");
        assert!(!p.trailing_slash);
        let p = sanitize("/").unwrap();
        assert_eq!(p.rel, "");
        assert!(p.trailing_slash);
        assert_eq!(sanitize("/h%C3%A9llo%20w").unwrap().rel, "héllo w");
        assert_eq!(sanitize("/...").unwrap().rel, "...");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
        /// Whatever the input, an accepted path is plain segments that stay below the root.
        #[test]
        fn accepted_paths_stay_inside(
            parts in proptest::collection::vec(
                proptest::sample::select(vec![
                    "a", "..", ".", "%2e", "%2E%2e", "%2f", "%5c", "\\", "%00", "%c0%ae", "/",
                    "//", "b.txt", "%41", "%", "%e2%82%ac", "é", "..%2f",
                ]),
                0..8,
            )
        ) {
            let path = format!("/{}", parts.concat());
            if let Ok(safe) = sanitize(&path) {
                let root = std::path::Path::new("/srv/root");
                let joined = root.join(&safe.rel);
                proptest::prop_assert!(joined.starts_with(root));
                for seg in safe.rel.split('/') {
                    proptest::prop_assert!(seg != ".." && seg != ".");
                    proptest::prop_assert!(!seg.contains('\\') && !seg.contains('\0'));
                }
                proptest::prop_assert!(joined.components().all(|c| matches!(
                    c,
                    std::path::Component::RootDir | std::path::Component::Normal(_)
                )));
            }
        }
    }

    #[test]
    fn refusals() {
        use PathError::*;
        let cases = [
            ("a", NotAbsolute),
            ("/%zz", BadEscape),
            ("/%2", BadEscape),
            ("/..%2fx", EncodedSlash),
            ("/%2F", EncodedSlash),
            ("/a%00b", ForbiddenByte),
            ("/a\\b", ForbiddenByte),
            ("/%5c", ForbiddenByte),
            ("/%0d%0a", ForbiddenByte),
            ("/%c0%ae%c0%ae/x", BadUtf8),
            ("/%e0%80%ae", BadUtf8),
            ("/%ff", BadUtf8),
            ("/../x", DotSegment),
            ("/%2e%2e/x", DotSegment),
            ("/.%2E/x", DotSegment),
            ("/a/./b", DotSegment),
            ("/a/..", DotSegment),
        ];
        for (p, e) in cases {
            assert_eq!(sanitize(p), Err(e), "{p}");
        }
    }
}

//! A docroot for a workload: every target as a file of its size under a directory, so a
//! plain static server (nginx, Apache, larder's node) can serve a log's requests.
//!
//! Mapping a request target to a file must be safe (never leave the directory) and
//! reversible (distinct targets never share a file). A target `/a/b?q=1` is split at
//! its first `?`; the path part at `/` into segments; the query (with a leading `?`) is
//! appended to the last segment. Each segment is then percent-encoded: bytes outside
//! `A-Z a-z 0-9 - _ .` become `%XX` (so `?`, `%`, `/`, `\`, NUL and non-ASCII can never
//! act on the file system), a segment that is exactly `.` or `..` is written `%2E` /
//! `%2E%2E`, and an empty segment (`/a//b`, a trailing `/`) becomes [`EMPTY_SEGMENT`],
//! a name encoding cannot produce. An encoded segment longer than a file name may be
//! (long query strings are common) is cut into several levels, every level after the
//! first starting with [`CONTINUATION`], again a prefix encoding cannot produce. Decoding
//! each name, gluing continuations to their predecessor and joining with `/` gives back
//! the target; [`target_of`] refuses any name it would not have produced.
//!
//! A plain server decodes the URL once before looking up the file, so the URL for the
//! file is its relative path with `%` written as `%25` ([`served_url`]).
//!
//! File contents are the target path and a newline, repeated and cut to the size
//! ([`fill`]), so anyone can check a served body without the docroot.

use crate::error::TraceError;
use crate::workload::Workload;
use serde::Serialize;
use std::fs;
use std::io::{self, Write};
use std::path::Path;

/// The file name used for an empty path segment (a directory index such as `/docs/`).
pub const EMPTY_SEGMENT: &str = "%index";

/// Prefix of a file name that continues the previous one (a long segment cut in pieces).
pub const CONTINUATION: &str = "%+";

/// Encoded bytes per piece of a long segment: with [`CONTINUATION`], within the usual
/// 255-byte file name limit.
const PIECE_BYTES: usize = 250;

/// Longest relative path the mapping produces (under the usual 4096-byte `PATH_MAX`,
/// leaving room for the docroot itself).
pub const MAX_PATH_BYTES: usize = 3072;

fn is_safe(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.')
}

fn encode_segment(segment: &[u8], out: &mut String) {
    if segment.is_empty() {
        out.push_str(EMPTY_SEGMENT);
        return;
    }
    let dots_only = segment == b"." || segment == b"..";
    for &c in segment {
        if is_safe(c) && !dots_only {
            out.push(c as char);
        } else {
            wire::percent::push_escaped(c, out);
        }
    }
}

/// Inverse of `encode_segment` for well-formed names (`None` for a bad `%` escape or an
/// unsafe byte); [`target_of`] then checks the name is the one encoding produces (which
/// also refuses lower-case hex: encoding writes upper case).
fn decode_segment(name: &str, out: &mut Vec<u8>) -> Option<()> {
    if name == EMPTY_SEGMENT {
        return Some(());
    }
    for unit in wire::percent::units(name.as_bytes()) {
        let unit = unit.ok()?;
        if !unit.escaped && !is_safe(unit.byte) {
            return None;
        }
        out.push(unit.byte);
    }
    Some(())
}

/// Why a target has no file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MapError {
    #[error("target does not start with '/'")]
    NotAbsolute,
    #[error("the file path would be longer than {MAX_PATH_BYTES} bytes")]
    TooLong,
    #[error("not a path this mapping produces")]
    NotMapped,
}

/// The file for `target`, relative to the docroot, segments joined by `/`.
pub fn relative_path(target: &str) -> Result<String, MapError> {
    let rest = target.strip_prefix('/').ok_or(MapError::NotAbsolute)?;
    let (path, query) = match rest.find('?') {
        Some(q) => (&rest[..q], Some(&rest[q..])),
        None => (rest, None),
    };
    let mut segments: Vec<Vec<u8>> = path.split('/').map(|s| s.as_bytes().to_vec()).collect();
    if let (Some(q), Some(last)) = (query, segments.last_mut()) {
        last.extend_from_slice(q.as_bytes());
    }
    let mut out = String::with_capacity(target.len() + 8);
    let mut encoded = String::new();
    for (i, segment) in segments.iter().enumerate() {
        if i > 0 {
            out.push('/');
        }
        encoded.clear();
        encode_segment(segment, &mut encoded);
        push_in_pieces(&encoded, &mut out);
        if out.len() > MAX_PATH_BYTES {
            return Err(MapError::TooLong);
        }
    }
    Ok(out)
}

/// Appends an encoded segment, cut into [`PIECE_BYTES`] pieces (never inside a `%XX`)
/// joined by `/` + [`CONTINUATION`] when it is too long for one file name.
fn push_in_pieces(encoded: &str, out: &mut String) {
    let b = encoded.as_bytes();
    let mut start = 0;
    while start < b.len() {
        let mut end = (start + PIECE_BYTES).min(b.len());
        // '%' only ever starts an escape (hex digits are not '%'): do not cut one.
        while end < b.len() && (b[end - 1] == b'%' || b[end - 2] == b'%') {
            end -= 1;
        }
        if start > 0 {
            out.push('/');
            out.push_str(CONTINUATION);
        }
        out.push_str(&encoded[start..end]);
        start = end;
    }
}

/// The target whose file is `relative` (the inverse of [`relative_path`]). Names the
/// mapping never produces (`%41` for `A`, a bare `..`, `%3F` outside the last segment)
/// are refused, so the two functions are exact inverses.
pub fn target_of(relative: &str) -> Result<String, MapError> {
    let mut bytes = Vec::with_capacity(relative.len() + 1);
    for (i, name) in relative.split('/').enumerate() {
        let piece = match name.strip_prefix(CONTINUATION) {
            Some(rest) if i > 0 => rest,
            Some(_) => return Err(MapError::NotMapped),
            None => {
                bytes.push(b'/');
                name
            }
        };
        decode_segment(piece, &mut bytes).ok_or(MapError::NotMapped)?;
    }
    let target = String::from_utf8(bytes).map_err(|_| MapError::NotMapped)?;
    match relative_path(&target) {
        Ok(again) if again == relative => Ok(target),
        _ => Err(MapError::NotMapped),
    }
}

/// The URL at which a plain static server rooted at the docroot serves `target`'s file.
pub fn served_url(target: &str) -> Result<String, MapError> {
    Ok(format!("/{}", relative_path(target)?.replace('%', "%25")))
}

/// Fills `buf` with the bytes of `target`'s file from `offset` on.
pub fn fill(target: &str, offset: u64, buf: &mut [u8]) {
    let period = target.len() as u64 + 1;
    for (i, byte) in buf.iter_mut().enumerate() {
        let at = ((offset + i as u64) % period) as usize;
        *byte = target.as_bytes().get(at).copied().unwrap_or(b'\n');
    }
}

/// What [`write_docroot`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DocrootReport {
    pub written: u64,
    pub written_bytes: u64,
    /// Already present with the right size, left alone.
    pub existing: u64,
    /// No file: the target cannot be mapped (see [`MapError`]).
    pub unmappable: u64,
    /// No file: a file and a directory would need the same name (`/a` and `/a/b`).
    pub conflicts: u64,
}

/// `3 files written (24.0 KiB), 0 already there, …`: what a person is told.
impl std::fmt::Display for DocrootReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} files written ({}), {} already there, {} unmappable, {} conflicts (a path both \
             file and directory)",
            self.written,
            crate::human_bytes(self.written_bytes),
            self.existing,
            self.unmappable,
            self.conflicts
        )
    }
}

fn write_file(target: &str, size: u64, file: &Path) -> io::Result<()> {
    let mut out = io::BufWriter::with_capacity(1 << 16, fs::File::create(file)?);
    let mut chunk = vec![0u8; 1 << 16];
    let mut offset = 0;
    while offset < size {
        let n = (size - offset).min(chunk.len() as u64) as usize;
        fill(target, offset, &mut chunk[..n]);
        out.write_all(&chunk[..n])?;
        offset += n as u64;
    }
    out.flush()
}

/// Writes every target of `workload` as a file under `dir` (created if missing). A file
/// that already exists with the right size is left alone, so re-runs are cheap. Targets
/// that cannot have a file are counted, not fatal; I/O failures are.
pub fn write_docroot(workload: &Workload, dir: &Path) -> Result<DocrootReport, TraceError> {
    write_docroot_watched(workload, dir, || {})
}

/// [`write_docroot`], calling `each` once per target handled (written, found or
/// skipped), so a caller can show progress through the `workload.targets.len()` steps.
pub fn write_docroot_watched(
    workload: &Workload,
    dir: &Path,
    mut each: impl FnMut(),
) -> Result<DocrootReport, TraceError> {
    let ctx = |p: &Path| p.display().to_string();
    fs::create_dir_all(dir).map_err(|e| TraceError::io(ctx(dir), e))?;
    let mut report = DocrootReport::default();
    for t in &workload.targets {
        each();
        let Ok(relative) = relative_path(&t.path) else {
            report.unmappable += 1;
            continue;
        };
        let file = dir.join(&relative);
        match fs::metadata(&file) {
            Ok(m) if m.is_file() && m.len() == t.size => {
                report.existing += 1;
                continue;
            }
            Ok(m) if m.is_dir() => {
                report.conflicts += 1;
                continue;
            }
            _ => {}
        }
        if let Some(parent) = file.parent() {
            if let Err(e) = fs::create_dir_all(parent) {
                // A file where a directory must go: `/a` and `/a/b` are both targets.
                if parent.ancestors().any(|a| a.starts_with(dir) && a.is_file()) {
                    report.conflicts += 1;
                    continue;
                }
                return Err(TraceError::io(ctx(parent), e));
            }
        }
        write_file(&t.path, t.size, &file).map_err(|e| TraceError::io(ctx(&file), e))?;
        report.written += 1;
        report.written_bytes += t.size;
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::TargetInfo;
    use proptest::prelude::*;
    use std::path::Component;

    #[test]
    fn maps_as_documented() {
        let cases = [
            ("/d/00/12/doc-001234.html", "d/00/12/doc-001234.html"),
            ("/", "%index"),
            ("/docs/", "docs/%index"),
            ("/a//b", "a/%index/b"),
            ("/../etc/passwd", "%2E%2E/etc/passwd"),
            ("/./x", "%2E/x"),
            ("/...", "..."),
            ("/search?q=a/b&x=%41", "search%3Fq%3Da%2Fb%26x%3D%2541"),
            ("/?x", "%3Fx"),
            ("/caf\u{e9}", "caf%C3%A9"),
        ];
        // A long name is cut into levels, never inside an escape, never leaving a dot name.
        let long = format!("/q?{}", "=".repeat(100));
        let rel = relative_path(&long).unwrap();
        assert_eq!(rel.split('/').map(str::len).collect::<Vec<_>>(), vec![250, 56]);
        assert!(rel.split('/').nth(1).unwrap().starts_with("%+%3D"));
        assert_eq!(target_of(&rel).as_deref(), Ok(long.as_str()));
        let dots = format!("/{}", ".".repeat(252));
        let rel = relative_path(&dots).unwrap();
        assert_eq!(rel, format!("{}/%+..", ".".repeat(250)));
        assert_eq!(target_of(&rel).as_deref(), Ok(dots.as_str()));
        for (target, rel) in cases {
            assert_eq!(relative_path(target).as_deref(), Ok(rel), "{target}");
            assert_eq!(target_of(rel).as_deref(), Ok(target), "{rel}");
        }
        assert_eq!(relative_path("x"), Err(MapError::NotAbsolute));
        assert_eq!(relative_path(&format!("/{}", "a".repeat(4000))), Err(MapError::TooLong));
        for not_ours in [
            "..", "a/./b", "%41", "%2e", "a b", "%", "%4", "", "a/", "%3F/b", "%2E.", "%+a",
            "a/%+b",
        ] {
            assert_eq!(target_of(not_ours), Err(MapError::NotMapped), "{not_ours}");
        }
    }

    #[test]
    fn served_url_escapes_percent() {
        assert_eq!(served_url("/a?b=1").unwrap(), "/a%253Fb%253D1");
        assert_eq!(served_url("/plain/x.html").unwrap(), "/plain/x.html");
    }

    #[test]
    fn fill_is_the_repeated_path() {
        let mut buf = [0u8; 7];
        fill("/ab", 0, &mut buf);
        assert_eq!(&buf, b"/ab\n/ab");
        fill("/ab", 2, &mut buf[..3]);
        assert_eq!(&buf[..3], b"b\n/");
    }

    #[test]
    fn writes_files_skips_existing_and_counts_conflicts() {
        let dir = std::env::temp_dir().join(format!("trace-docroot-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let w = Workload {
            targets: vec![
                TargetInfo { path: "/a/b.html".into(), size: 100_000 },
                TargetInfo { path: "/q?x=1".into(), size: 5 },
                TargetInfo { path: "/a".into(), size: 3 },
                TargetInfo { path: "/e".into(), size: 0 },
                TargetInfo { path: format!("/{}", "n".repeat(5000)), size: 1 },
                TargetInfo { path: format!("/long?{}", "n".repeat(600)), size: 2 },
            ],
            requests: vec![],
        };
        let r = write_docroot(&w, &dir).unwrap();
        assert_eq!((r.written, r.written_bytes, r.conflicts, r.unmappable), (4, 100_007, 1, 1));
        let body = fs::read(dir.join("a/b.html")).unwrap();
        let mut expected = vec![0u8; 100_000];
        fill("/a/b.html", 0, &mut expected);
        assert_eq!(body, expected);
        assert_eq!(fs::read(dir.join("q%3Fx%3D1")).unwrap(), b"/q?x=");
        assert_eq!(fs::read(dir.join("e")).unwrap(), b"");

        let again = write_docroot(&w, &dir).unwrap();
        assert_eq!((again.written, again.existing, again.conflicts), (0, 4, 1));
        fs::write(dir.join("e"), b"wrong").unwrap();
        assert_eq!(write_docroot(&w, &dir).unwrap().written, 1);
        fs::remove_dir_all(&dir).unwrap();
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn reversible_and_never_escapes(target in "/[\\PC/?%.\\\\:\0 ]{0,60}|/[.a%=/?]{200,900}") {
            if let Ok(rel) = relative_path(&target) {
                prop_assert_eq!(target_of(&rel), Ok(target.clone()));
                let path = Path::new(&rel);
                prop_assert!(path.components().all(|c| matches!(c, Component::Normal(_))));
                prop_assert!(rel
                    .split('/')
                    .all(|n| !n.is_empty() && n != "." && n != ".." && n.len() <= 255));
                prop_assert!(rel.bytes().all(|c| is_safe(c) || matches!(c, b'%' | b'+' | b'/')));
                prop_assert!(!rel.contains('\\') && !rel.contains('\0') && !rel.contains('?'));
            }
        }

        #[test]
        fn distinct_targets_distinct_files(a in "/[a-z./?%]{0,12}", b in "/[a-z./?%]{0,12}") {
            if a != b {
                prop_assert_ne!(relative_path(&a), relative_path(&b));
            }
        }

        #[test]
        fn decoding_arbitrary_names_never_panics(name in "\\PC{0,40}") {
            if let Ok(t) = target_of(&name) {
                prop_assert_eq!(relative_path(&t), Ok(name));
            }
        }
    }
}

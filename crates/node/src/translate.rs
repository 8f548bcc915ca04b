//! Path translation: a safe relative path → an open file with its metadata and its
//! pre-rendered response header lines. This is the blocking part of serving a file
//! (directory lookups, stat, open), so it runs on a helper thread; the result is kept in
//! the path-translation cache so the loop rarely needs a helper for a file it has seen.

use crate::content_type::content_type;
use http1::format_http_date;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

/// What identifies one version of a file: a cached body is valid while the stamp matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Stamp {
    pub dev: u64,
    pub ino: u64,
    pub len: u64,
    pub mtime_ns: i128,
}

/// An open regular file and everything a response needs to know about it.
#[derive(Debug)]
pub struct FileMeta {
    pub file: File,
    /// The same file opened with O_DIRECT, when `--direct-io` is on and the file system
    /// accepts it.
    pub direct: Option<File>,
    pub stamp: Stamp,
    pub etag: String,
    pub modified_secs: u64,
    /// `Content-Type`, `Last-Modified`, `ETag` and `Accept-Ranges` lines, rendered once:
    /// the response-header cache of Flash.
    pub header_lines: Vec<u8>,
}

/// The outcome of translating a path.
#[derive(Debug)]
pub enum Translation {
    File(Arc<FileMeta>),
    /// A directory named without its trailing slash: redirect so relative links work.
    AddSlash,
    NotFound,
    /// Exists but may not be served (outside the root through a symlink, not a regular
    /// file, or not readable).
    Forbidden,
}

/// How translation treats the file system.
#[derive(Clone, Debug)]
pub struct TranslateOptions {
    /// The canonical docroot.
    pub root: PathBuf,
    /// Serve files whose real path is outside the root (reached through symlinks).
    pub follow_outside_symlinks: bool,
    /// Also open files with O_DIRECT.
    pub direct_io: bool,
    /// The file served for a directory URL.
    pub index_file: String,
}

static DIRECT_IO_WARNED: AtomicBool = AtomicBool::new(false);

/// Translate `rel` (already sanitized) under the options. Blocking: helpers only.
pub fn translate(opts: &TranslateOptions, rel: &str, trailing_slash: bool) -> Translation {
    match translate_inner(opts, rel, trailing_slash) {
        Ok(t) => t,
        Err(e) => match e.kind() {
            io::ErrorKind::PermissionDenied => Translation::Forbidden,
            _ => Translation::NotFound,
        },
    }
}

fn translate_inner(opts: &TranslateOptions, rel: &str, slash: bool) -> io::Result<Translation> {
    let mut real = opts.root.join(rel).canonicalize()?;
    if !inside(opts, &real) {
        return Ok(Translation::Forbidden);
    }
    let mut md = std::fs::metadata(&real)?;
    if md.is_dir() {
        if !slash && !rel.is_empty() {
            return Ok(Translation::AddSlash);
        }
        real = real.join(&opts.index_file).canonicalize()?;
        if !inside(opts, &real) {
            return Ok(Translation::Forbidden);
        }
        md = std::fs::metadata(&real)?;
    } else if slash {
        return Ok(Translation::NotFound);
    }
    if !md.is_file() {
        return Ok(Translation::Forbidden);
    }
    // O_NONBLOCK: should the path have been swapped for a FIFO since the stat, opening it
    // must not hang a helper.
    let file = OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(&real)?;
    let md = file.metadata()?;
    if !md.is_file() {
        return Ok(Translation::Forbidden);
    }
    let direct = if opts.direct_io { open_direct(&real) } else { None };
    let name = real.to_string_lossy();
    Ok(Translation::File(Arc::new(file_meta(file, direct, &md, content_type(&name)))))
}

fn inside(opts: &TranslateOptions, real: &Path) -> bool {
    opts.follow_outside_symlinks || real.starts_with(&opts.root)
}

fn open_direct(path: &Path) -> Option<File> {
    match OpenOptions::new().read(true).custom_flags(libc::O_DIRECT).open(path) {
        Ok(f) => Some(f),
        Err(e) => {
            if !DIRECT_IO_WARNED.swap(true, Ordering::Relaxed) {
                eprintln!(
                    "larder node: warning: O_DIRECT refused for {} ({e}); misses are read \
                     through the page cache and dropped from it afterwards instead",
                    path.display()
                );
            }
            None
        }
    }
}

fn file_meta(file: File, direct: Option<File>, md: &std::fs::Metadata, ctype: &str) -> FileMeta {
    let mtime_ns = i128::from(md.mtime()) * 1_000_000_000 + i128::from(md.mtime_nsec());
    let stamp = Stamp { dev: md.dev(), ino: md.ino(), len: md.len(), mtime_ns };
    let etag = format!("\"{:x}-{:x}-{:x}\"", stamp.ino, stamp.len, mtime_ns);
    let modified_secs = md.mtime().max(0) as u64;
    let modified = UNIX_EPOCH + Duration::from_secs(modified_secs);
    let mut header_lines = Vec::with_capacity(160);
    for (name, value) in [
        ("Content-Type", ctype),
        ("Last-Modified", &format_http_date(modified)),
        ("ETag", &etag),
        ("Accept-Ranges", "bytes"),
    ] {
        header_lines.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
    }
    FileMeta { file, direct, stamp, etag, modified_secs, header_lines }
}

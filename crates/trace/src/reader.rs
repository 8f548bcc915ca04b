//! Opening a log (plain or gzip, told apart by magic bytes) and reading it line by line
//! as bytes, with a bound on line length so no input can make memory grow unbounded.

use crate::error::TraceError;
use flate2::bufread::MultiGzDecoder;
use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::Path;

/// Default bound on one line: far above any real log line, far below trouble.
pub const DEFAULT_MAX_LINE_BYTES: usize = 64 * 1024;

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Opens `path` for streaming: gzip (every member of a multi-member file) when the file
/// starts with the gzip magic bytes, whatever its name; plain text otherwise.
pub fn open(path: &Path) -> Result<Box<dyn BufRead + Send>, TraceError> {
    let ctx = || path.display().to_string();
    let file = File::open(path).map_err(|e| TraceError::io(ctx(), e))?;
    let mut buffered = BufReader::with_capacity(1 << 16, file);
    let head = buffered.fill_buf().map_err(|e| TraceError::io(ctx(), e))?;
    if head.starts_with(&GZIP_MAGIC) {
        Ok(Box::new(BufReader::with_capacity(1 << 16, MultiGzDecoder::new(buffered))))
    } else {
        Ok(Box::new(buffered))
    }
}

/// One line from [`LineReader`].
#[derive(Debug, PartialEq, Eq)]
pub enum Line<'a> {
    /// The line's bytes without the `\n`.
    Bytes(&'a [u8]),
    /// The line was longer than the limit; its bytes were discarded.
    TooLong,
}

/// Reads lines as bytes from any `BufRead`, never holding more than `max_line_bytes`
/// of one line (plus the reader's own buffer).
pub struct LineReader<R> {
    inner: R,
    buf: Vec<u8>,
    max_line_bytes: usize,
}

impl<R: BufRead> LineReader<R> {
    pub fn new(inner: R, max_line_bytes: usize) -> Self {
        LineReader { inner, buf: Vec::new(), max_line_bytes }
    }

    /// The next line, or `None` at the end. A last line without `\n` is still a line.
    pub fn next_line(&mut self) -> io::Result<Option<Line<'_>>> {
        self.buf.clear();
        let mut too_long = false;
        let mut any = false;
        loop {
            let chunk = match self.inner.fill_buf() {
                Ok(c) => c,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if chunk.is_empty() {
                break;
            }
            any = true;
            let (take, done) = match chunk.iter().position(|&c| c == b'\n') {
                Some(i) => (i, true),
                None => (chunk.len(), false),
            };
            if !too_long {
                if self.buf.len() + take > self.max_line_bytes {
                    too_long = true;
                    self.buf.clear();
                } else {
                    self.buf.extend_from_slice(&chunk[..take]);
                }
            }
            self.inner.consume(if done { take + 1 } else { take });
            if done {
                break;
            }
        }
        Ok(match (any, too_long) {
            (false, _) => None,
            (true, true) => Some(Line::TooLong),
            (true, false) => Some(Line::Bytes(&self.buf)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Cursor, Write};

    fn lines(input: &[u8], max: usize) -> Vec<Option<Vec<u8>>> {
        let mut r = LineReader::new(BufReader::with_capacity(4, Cursor::new(input)), max);
        let mut out = Vec::new();
        while let Some(l) = r.next_line().unwrap() {
            out.push(match l {
                Line::Bytes(b) => Some(b.to_vec()),
                Line::TooLong => None,
            });
        }
        out
    }

    #[test]
    fn splits_lines_across_buffer_boundaries() {
        assert_eq!(
            lines(b"abc\n\nlonger line\nlast", 100),
            vec![
                Some(b"abc".to_vec()),
                Some(vec![]),
                Some(b"longer line".to_vec()),
                Some(b"last".to_vec())
            ]
        );
        assert!(lines(b"", 100).is_empty());
    }

    #[test]
    fn too_long_lines_are_dropped_and_reading_resumes() {
        assert_eq!(lines(b"0123456789\nok\n", 5), vec![None, Some(b"ok".to_vec())]);
        assert_eq!(lines(b"12345\n", 5), vec![Some(b"12345".to_vec())]);
    }

    #[test]
    fn open_detects_gzip_by_magic_not_name() {
        let dir = std::env::temp_dir().join(format!("trace-reader-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let gz = dir.join("plain-name.log");
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(b"hello\nworld\n").unwrap();
        std::fs::write(&gz, enc.finish().unwrap()).unwrap();
        let plain = dir.join("looks.gz");
        std::fs::write(&plain, b"plain\n").unwrap();
        let mut s = String::new();
        open(&gz).unwrap().read_to_string(&mut s).unwrap();
        assert_eq!(s, "hello\nworld\n");
        s.clear();
        open(&plain).unwrap().read_to_string(&mut s).unwrap();
        assert_eq!(s, "plain\n");
        assert!(open(&dir.join("missing")).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

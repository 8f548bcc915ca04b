//! A buffered access log in Combined Log Format, the format `trace` reads back, so a
//! node's own log can be replayed.

use crate::pool::HelperPool;
use http1::CivilTime;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::net::IpAddr;
use std::path::Path;
use std::sync::Arc;

/// One line's worth of facts.
#[derive(Clone, Debug)]
pub struct LogEntry<'a> {
    pub peer: IpAddr,
    pub unix_secs: i64,
    /// `METHOD target HTTP/x.y`, or empty when the request line could not be parsed.
    pub request_line: &'a str,
    pub status: u16,
    pub body_bytes: u64,
    pub referer: Option<&'a [u8]>,
    pub user_agent: Option<&'a [u8]>,
}

/// Lines are appended to memory by the loop and written by a dedicated log thread, so the
/// loop never waits on the file (a write can block under writeback pressure).
pub struct AccessLog {
    file: Arc<File>,
    buf: Vec<u8>,
    /// One thread, so buffers reach the file in the order they were handed over.
    writer: HelperPool,
}

/// Buffered lines are handed to the log thread at this size (and on every tick).
const HAND_OVER_BYTES: usize = 64 * 1024;

impl AccessLog {
    pub fn open(path: &Path) -> io::Result<AccessLog> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(AccessLog {
            file: Arc::new(file),
            buf: Vec::with_capacity(HAND_OVER_BYTES),
            writer: HelperPool::new("larder-log", 1)?,
        })
    }

    pub fn record(&mut self, e: &LogEntry<'_>) {
        self.buf.extend_from_slice(format_entry(e).as_bytes());
        if self.buf.len() >= HAND_OVER_BYTES {
            self.hand_over();
        }
    }

    /// Give the buffered lines to the log thread. Everything handed over is written before
    /// the log is dropped (the pool drains its queue on drop).
    pub fn hand_over(&mut self) {
        if self.buf.is_empty() {
            return;
        }
        let lines = std::mem::replace(&mut self.buf, Vec::with_capacity(HAND_OVER_BYTES));
        let file = Arc::clone(&self.file);
        let queued = self.writer.spawn(move || {
            if let Err(e) = (&*file).write_all(&lines) {
                eprintln!("larder node: access log: {e}");
            }
        });
        if queued.is_err() {
            eprintln!("larder node: access log: writer thread is gone, lines dropped");
        }
    }
}

impl Drop for AccessLog {
    fn drop(&mut self) {
        self.hand_over();
    }
}

/// Quote a field: `"` and `\` escaped, control and non-ASCII bytes as `\xHH`, as Apache
/// does, so a client cannot forge log lines.
fn quoted(out: &mut String, field: &[u8]) {
    out.push('"');
    for &b in field {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out.push('"');
}

/// `host - - [day/Mon/year:HH:MM:SS +0000] "request" status bytes "referer" "agent"\n`
pub fn format_entry(e: &LogEntry<'_>) -> String {
    let c = CivilTime::from_unix(e.unix_secs);
    let mut s = format!(
        "{} - - [{:02}/{}/{:04}:{:02}:{:02}:{:02} +0000] ",
        e.peer,
        c.day,
        c.month_abbrev(),
        c.year,
        c.hour,
        c.minute,
        c.second
    );
    quoted(&mut s, if e.request_line.is_empty() { b"-" } else { e.request_line.as_bytes() });
    s.push_str(&format!(" {} ", e.status));
    if e.body_bytes == 0 {
        s.push('-');
    } else {
        s.push_str(&e.body_bytes.to_string());
    }
    s.push(' ');
    quoted(&mut s, e.referer.unwrap_or(b"-"));
    s.push(' ');
    quoted(&mut s, e.user_agent.unwrap_or(b"-"));
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combined_format() {
        let e = LogEntry {
            peer: "127.0.0.1".parse().unwrap(),
            unix_secs: 784_111_777,
            request_line: "GET /a\"b HTTP/1.1",
            status: 200,
            body_bytes: 6144,
            referer: None,
            user_agent: Some(b"wrk\n"),
        };
        assert_eq!(
            format_entry(&e),
            "127.0.0.1 - - [06/Nov/1994:08:49:37 +0000] \"GET /a\\\"b HTTP/1.1\" 200 6144 \"-\" \"wrk\\x0a\"\n"
        );
    }
}

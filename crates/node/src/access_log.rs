//! A buffered access log in Combined Log Format, the format `trace` reads back, so a
//! node's own log can be replayed.

use crate::pool::HelperPool;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::net::IpAddr;
use std::path::Path;
use std::sync::Arc;
use wire::clf::{Combined, Entry, Host, Quoting, Request};

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
        write_entry(e, &mut self.buf);
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

/// Append `host - - [day/Mon/year:HH:MM:SS +0000] "request" status bytes "referer" "agent"\n`
/// (a body of 0 bytes is written `-`; fields escaped as Apache does, so a client cannot
/// forge log lines).
pub fn write_entry(e: &LogEntry<'_>, out: &mut Vec<u8>) {
    Entry {
        host: Host::Ip(e.peer),
        unix_secs: e.unix_secs,
        request: Request::Raw(e.request_line.as_bytes()),
        status: e.status,
        bytes: (e.body_bytes > 0).then_some(e.body_bytes),
        combined: Some(Combined {
            referer: e.referer,
            user_agent: e.user_agent,
            quoting: Quoting::Escape,
        }),
    }
    .write(out);
    out.push(b'\n');
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
        let mut out = Vec::new();
        write_entry(&e, &mut out);
        write_entry(&LogEntry { request_line: "", body_bytes: 0, ..e.clone() }, &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "127.0.0.1 - - [06/Nov/1994:08:49:37 +0000] \"GET /a\\\"b HTTP/1.1\" 200 6144 \"-\" \"wrk\\x0a\"\n\
             127.0.0.1 - - [06/Nov/1994:08:49:37 +0000] \"-\" 200 - \"-\" \"wrk\\x0a\"\n"
        );
    }
}

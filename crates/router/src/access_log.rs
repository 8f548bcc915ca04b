//! The access log: Combined Log Format plus the node that served and the upstream time.
//!
//! `host - - [time] "request" status bytes "referer" "user-agent" node upstream_ms`
//! Lines are buffered and flushed every second (and at shutdown), so logging costs a
//! memcpy on the request path, not a system call. Each line is formatted (by
//! `wire::clf`) into a per-thread buffer that is reused, so logging allocates nothing.

use std::cell::RefCell;
use std::io::Write;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

pub(crate) use wire::clf::Protocol;
use wire::clf::{Combined, Entry, Host, Quoting, Request};

use crate::poison::Recover;
use crate::RouterError;

pub(crate) struct AccessLog {
    out: Mutex<std::io::BufWriter<Box<dyn Write + Send>>>,
}

/// One finished request.
pub(crate) struct AccessEntry<'a> {
    pub client: IpAddr,
    pub method: &'a str,
    pub uri: &'a str,
    pub protocol: Protocol,
    pub status: u16,
    pub bytes: u64,
    pub referer: Option<&'a [u8]>,
    pub user_agent: Option<&'a [u8]>,
    pub node: &'a str,
    pub upstream: Option<Duration>,
}

impl AccessLog {
    /// `-` is stdout; anything else a file opened for appending.
    pub(crate) fn open(target: &str) -> Result<AccessLog, RouterError> {
        let out: Box<dyn Write + Send> = if target == "-" {
            Box::new(std::io::stdout())
        } else {
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(target)
                .map_err(|e| RouterError::io(format!("access log {target}"), e))?;
            Box::new(file)
        };
        Ok(AccessLog { out: Mutex::new(std::io::BufWriter::with_capacity(64 * 1024, out)) })
    }

    pub(crate) fn record(&self, e: &AccessEntry<'_>) {
        thread_local! {
            static LINE: RefCell<Vec<u8>> = RefCell::new(Vec::with_capacity(256));
        }
        LINE.with_borrow_mut(|line| {
            line.clear();
            write_line(e, SystemTime::now(), line);
            let mut out = self.out.lock().recover();
            let _ = out.write_all(line);
        });
    }

    pub(crate) fn flush(&self) {
        let _ = self.out.lock().recover().flush();
    }
}

/// Append one line: the Combined Log Format entry (referer and agent with `"` and `\`
/// replaced by `_`), then the node and the upstream time in milliseconds.
fn write_line(e: &AccessEntry<'_>, now: SystemTime, out: &mut Vec<u8>) {
    let secs = now.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    Entry {
        host: Host::Ip(e.client),
        unix_secs: secs as i64,
        request: Request::Parts { method: e.method, target: e.uri, protocol: e.protocol },
        status: e.status,
        bytes: Some(e.bytes),
        combined: Some(Combined {
            referer: e.referer,
            user_agent: e.user_agent,
            quoting: Quoting::Replace,
        }),
    }
    .write(out);
    out.push(b' ');
    out.extend_from_slice(if e.node.is_empty() { b"-" } else { e.node.as_bytes() });
    // Writing into a Vec cannot fail.
    let _ = match e.upstream {
        Some(d) => writeln!(out, " {:.3}", d.as_secs_f64() * 1000.0),
        None => out.write_all(b" -\n"),
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combined_format_plus_node_and_time() {
        let e = AccessEntry {
            client: IpAddr::from([127, 0, 0, 1]),
            method: "GET",
            uri: "/a.html",
            protocol: Protocol::Http1 { minor: 1 },
            status: 200,
            bytes: 1024,
            referer: None,
            user_agent: Some(b"wrk \"x\""),
            node: "n1",
            upstream: Some(Duration::from_micros(1500)),
        };
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
        let mut line = Vec::new();
        write_line(&e, t, &mut line);
        let no_upstream = AccessEntry { upstream: None, node: "", referer: Some(b"\xff\\"), ..e };
        write_line(&no_upstream, t, &mut line);
        let http2 = AccessEntry { protocol: Protocol::Http2, referer: None, user_agent: None, ..e };
        write_line(&http2, t, &mut line);
        assert_eq!(
            String::from_utf8(line).unwrap(),
            "127.0.0.1 - - [09/Sep/2001:01:46:40 +0000] \"GET /a.html HTTP/1.1\" 200 1024 \"-\" \
             \"wrk _x_\" n1 1.500\n\
             127.0.0.1 - - [09/Sep/2001:01:46:40 +0000] \"GET /a.html HTTP/1.1\" 200 1024 \"\u{fffd}_\" \
             \"wrk _x_\" - -\n\
             127.0.0.1 - - [09/Sep/2001:01:46:40 +0000] \"GET /a.html HTTP/2.0\" 200 1024 \"-\" \
             \"-\" n1 1.500\n"
        );
    }
}

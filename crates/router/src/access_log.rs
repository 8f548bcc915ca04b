//! The access log: Combined Log Format plus the node that served and the upstream time.
//!
//! `host - - [time] "request" status bytes "referer" "user-agent" node upstream_ms`
//! Lines are buffered and flushed every second (and at shutdown), so logging costs a
//! memcpy on the request path, not a system call.

use std::fmt::Write as _;
use std::io::Write;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use crate::RouterError;

pub(crate) struct AccessLog {
    out: Mutex<std::io::BufWriter<Box<dyn Write + Send>>>,
}

/// One finished request.
pub(crate) struct AccessEntry<'a> {
    pub client: IpAddr,
    pub method: &'a str,
    pub uri: &'a str,
    pub minor: u8,
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
        let line = format_line(e, SystemTime::now());
        let mut out = self.out.lock().unwrap_or_else(|p| p.into_inner());
        let _ = out.write_all(line.as_bytes());
    }

    pub(crate) fn flush(&self) {
        let _ = self.out.lock().unwrap_or_else(|p| p.into_inner()).flush();
    }
}

fn quoted(v: Option<&[u8]>) -> String {
    match v {
        None => "-".to_string(),
        Some(v) => String::from_utf8_lossy(v).replace(['"', '\\'], "_"),
    }
}

fn format_line(e: &AccessEntry<'_>, now: SystemTime) -> String {
    let mut s = String::with_capacity(200);
    let secs = now.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let t = http1::CivilTime::from_unix(secs as i64);
    let _ = write!(
        s,
        "{} - - [{:02}/{}/{:04}:{:02}:{:02}:{:02} +0000] \"{} {} HTTP/1.{}\" {} {} \"{}\" \"{}\" {} ",
        e.client,
        t.day,
        t.month_abbrev(),
        t.year,
        t.hour,
        t.minute,
        t.second,
        e.method,
        e.uri,
        e.minor,
        e.status,
        e.bytes,
        quoted(e.referer),
        quoted(e.user_agent),
        if e.node.is_empty() { "-" } else { e.node },
    );
    match e.upstream {
        Some(d) => {
            let _ = writeln!(s, "{:.3}", d.as_secs_f64() * 1000.0);
        }
        None => s.push_str("-\n"),
    }
    s
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
            minor: 1,
            status: 200,
            bytes: 1024,
            referer: None,
            user_agent: Some(b"wrk \"x\""),
            node: "n1",
            upstream: Some(Duration::from_micros(1500)),
        };
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
        assert_eq!(
            format_line(&e, t),
            "127.0.0.1 - - [09/Sep/2001:01:46:40 +0000] \"GET /a.html HTTP/1.1\" 200 1024 \"-\" \
             \"wrk _x_\" n1 1.500\n"
        );
    }
}

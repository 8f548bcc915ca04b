//! One Common / Combined Log Format entry, the line every larder access log is made of
//! and the trace loader reads back:
//!
//! `host - - [06/Nov/1994:08:49:37 +0000] "GET /a HTTP/1.1" 200 6144 "referer" "agent"`
//!
//! [`Entry::write`] appends it (without the newline, so a writer may add its own fields)
//! to a buffer the caller reuses: access logs are on the request path, so writing an
//! entry allocates nothing.

use crate::clf_time;
use crate::percent::LOWER_HEX;
use std::io::Write as _;
use std::net::IpAddr;

/// Who made the request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Host<'a> {
    Ip(IpAddr),
    /// A name, written as is (the synthetic writer's `client-N.larder.invalid`).
    Name(&'a str),
}

/// The request, as the quoted second field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Request<'a> {
    /// The request line as received, escaped as [`Quoting::Escape`] does; `-` when empty
    /// (the line could not be parsed).
    Raw(&'a [u8]),
    /// `METHOD target PROTOCOL`, written as is: the caller vouches that the parts hold
    /// no `"` or control bytes (a parsed request head does not).
    Parts { method: &'a str, target: &'a str, protocol: Protocol },
}

/// The protocol a request came in, as the request line names it: `HTTP/1.0`, `HTTP/1.1`,
/// or `HTTP/2.0` (as nginx and Apache log HTTP/2 requests).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    Http1 { minor: u8 },
    Http2,
}

/// How the quoted referer and user agent are made safe, so a client cannot forge lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quoting {
    /// Apache's way: `"` and `\` backslash-escaped, control and non-ASCII bytes as `\xhh`.
    Escape,
    /// UTF-8 kept (invalid sequences as U+FFFD), `"` and `\` replaced by `_`.
    Replace,
}

/// The Combined Log Format's two extra fields; `None` is written `"-"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Combined<'a> {
    pub referer: Option<&'a [u8]>,
    pub user_agent: Option<&'a [u8]>,
    pub quoting: Quoting,
}

/// One log entry. Identity and user are always `-`, the time always UTC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry<'a> {
    pub host: Host<'a>,
    pub unix_secs: i64,
    pub request: Request<'a>,
    pub status: u16,
    /// Body bytes; `None` is written `-`.
    pub bytes: Option<u64>,
    /// `None` for the Common Log Format.
    pub combined: Option<Combined<'a>>,
}

impl Entry<'_> {
    /// Append the entry, without a newline, to `out`.
    pub fn write(&self, out: &mut Vec<u8>) {
        // Writing into a Vec cannot fail: the results are ignored.
        match self.host {
            Host::Ip(ip) => {
                let _ = write!(out, "{ip}");
            }
            Host::Name(name) => out.extend_from_slice(name.as_bytes()),
        }
        out.extend_from_slice(b" - - [");
        clf_time::write(self.unix_secs, out);
        out.extend_from_slice(b"] ");
        match self.request {
            Request::Raw(b"") => out.extend_from_slice(b"\"-\""),
            Request::Raw(line) => quoted(out, line, Quoting::Escape),
            Request::Parts { method, target, protocol: Protocol::Http1 { minor } } => {
                let _ = write!(out, "\"{method} {target} HTTP/1.{minor}\"");
            }
            Request::Parts { method, target, protocol: Protocol::Http2 } => {
                let _ = write!(out, "\"{method} {target} HTTP/2.0\"");
            }
        }
        let _ = write!(out, " {} ", self.status);
        match self.bytes {
            Some(n) => {
                let _ = write!(out, "{n}");
            }
            None => out.push(b'-'),
        }
        if let Some(c) = self.combined {
            out.push(b' ');
            quoted(out, c.referer.unwrap_or(b"-"), c.quoting);
            out.push(b' ');
            quoted(out, c.user_agent.unwrap_or(b"-"), c.quoting);
        }
    }
}

/// Append `field` in double quotes, made safe by `quoting`.
fn quoted(out: &mut Vec<u8>, field: &[u8], quoting: Quoting) {
    out.push(b'"');
    match quoting {
        Quoting::Escape => {
            for &b in field {
                match b {
                    b'"' => out.extend_from_slice(b"\\\""),
                    b'\\' => out.extend_from_slice(b"\\\\"),
                    0x20..=0x7e => out.push(b),
                    _ => out.extend_from_slice(&[
                        b'\\',
                        b'x',
                        LOWER_HEX[usize::from(b >> 4)],
                        LOWER_HEX[usize::from(b & 0xf)],
                    ]),
                }
            }
        }
        Quoting::Replace => {
            for chunk in field.utf8_chunks() {
                for &b in chunk.valid().as_bytes() {
                    out.push(if b == b'"' || b == b'\\' { b'_' } else { b });
                }
                if !chunk.invalid().is_empty() {
                    out.extend_from_slice(
                        char::REPLACEMENT_CHARACTER.encode_utf8(&mut [0; 4]).as_bytes(),
                    );
                }
            }
        }
    }
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(e: &Entry<'_>) -> String {
        let mut out = Vec::new();
        e.write(&mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn combined_with_escapes() {
        let e = Entry {
            host: Host::Ip("127.0.0.1".parse().unwrap()),
            unix_secs: 784_111_777,
            request: Request::Raw(b"GET /a\"b HTTP/1.1"),
            status: 200,
            bytes: Some(6144),
            combined: Some(Combined {
                referer: None,
                user_agent: Some(b"wrk\n"),
                quoting: Quoting::Escape,
            }),
        };
        assert_eq!(
            line(&e),
            "127.0.0.1 - - [06/Nov/1994:08:49:37 +0000] \"GET /a\\\"b HTTP/1.1\" 200 6144 \"-\" \"wrk\\x0a\""
        );
        let empty = Entry { request: Request::Raw(b""), bytes: None, ..e };
        assert!(line(&empty).contains("] \"-\" 200 - \"-\""), "{}", line(&empty));
    }

    #[test]
    fn replacing_quotes_matches_lossy_utf8() {
        for field in [&b"wrk \"x\""[..], b"a\\b", b"caf\xc3\xa9", b"bad\xff\xfe end\xe2\x82", b""] {
            let mut out = Vec::new();
            quoted(&mut out, field, Quoting::Replace);
            let want = format!("\"{}\"", String::from_utf8_lossy(field).replace(['"', '\\'], "_"));
            assert_eq!(String::from_utf8(out).unwrap(), want);
        }
    }

    #[test]
    fn common_from_parts() {
        let e = Entry {
            host: Host::Name("10.0.0.1"),
            unix_secs: 0,
            request: Request::Parts {
                method: "GET",
                target: "/x?y",
                protocol: Protocol::Http1 { minor: 0 },
            },
            status: 200,
            bytes: Some(0),
            combined: None,
        };
        assert_eq!(
            line(&e),
            "10.0.0.1 - - [01/Jan/1970:00:00:00 +0000] \"GET /x?y HTTP/1.0\" 200 0"
        );
    }
}

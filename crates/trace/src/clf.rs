//! Common / Combined Log Format: one line parsed from bytes, and a workload written out.
//!
//! `host ident user [29/Aug/1995:23:53:25 -0400] "GET /x HTTP/1.0" 200 1497 "ref" "ua"`
//!
//! Parsing works on bytes, never on `String`, because real logs carry garbage bytes, and
//! is deliberately lenient where that is unambiguous: the request's closing quote is the
//! first `"` followed by a 3-digit status, so a stray `"` inside the request does not
//! lose the line; a missing protocol (`"GET /x"`, HTTP/0.9 style) is accepted; referer
//! and user agent are optional and their damage never costs the request.

use crate::error::TraceError;
use crate::skip::SkipReason;
use crate::workload::Workload;
use flate2::write::GzEncoder;
use flate2::Compression;
use std::fs::File;
use std::io::Write;
use std::path::Path;
use wire::clf::{Entry, Host, Protocol, Request};
use wire::clf_time;

/// One parsed log line, borrowing from the line's bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogLine<'a> {
    pub host: &'a [u8],
    /// Unix epoch milliseconds (UTC; the logged zone has been applied).
    pub time_ms: i64,
    pub method: &'a [u8],
    /// The request target as logged (path plus query string), not decoded.
    pub target: &'a [u8],
    /// `HTTP/1.0` etc.; `None` for a request line without one.
    pub protocol: Option<&'a [u8]>,
    pub status: u16,
    /// Response size; `None` when logged as `-`.
    pub bytes: Option<u64>,
    /// Combined Log Format extras; `None` when absent or unreadable.
    pub referer: Option<&'a [u8]>,
    pub user_agent: Option<&'a [u8]>,
}

fn skip_spaces(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i] == b' ' {
        i += 1;
    }
    i
}

/// End (exclusive) of the token starting at `i`: up to the next space or the end.
fn token_end(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i] != b' ' {
        i += 1;
    }
    i
}

fn is_method_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'-' || c == b'_'
}

/// Where the status starts if the `"` at `q` closes the request: `" NNN` then a space or
/// the end of the line.
fn status_after_quote(b: &[u8], q: usize) -> Option<usize> {
    let s = skip_spaces(b, q + 1);
    if s == q + 1 || s + 3 > b.len() || !b[s..s + 3].iter().all(u8::is_ascii_digit) {
        return None;
    }
    (s + 3 == b.len() || b[s + 3] == b' ').then_some(s)
}

/// A quoted field starting at `i` (which must be `"`), honouring `\"` escapes.
/// Returns the contents and the index after the closing quote.
fn quoted(b: &[u8], i: usize) -> Option<(&[u8], usize)> {
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            b'\\' => j += 2,
            b'"' => return Some((&b[i + 1..j], j + 1)),
            _ => j += 1,
        }
    }
    None
}

fn parse_u64(b: &[u8]) -> Option<u64> {
    if b.is_empty() || b.len() > 19 || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(b.iter().fold(0u64, |acc, &c| acc * 10 + u64::from(c - b'0')))
}

/// Parses one line (without its newline; a trailing `\r` or spaces are ignored).
pub fn parse_line(line: &[u8]) -> Result<LogLine<'_>, SkipReason> {
    let mut end = line.len();
    while end > 0 && line[end - 1].is_ascii_whitespace() {
        end -= 1;
    }
    let b = &line[..end];
    if b.iter().all(u8::is_ascii_whitespace) {
        return Err(SkipReason::Empty);
    }
    let host_end = token_end(b, 0);
    if host_end == 0 || host_end == b.len() {
        return Err(SkipReason::Host);
    }
    let host = &b[..host_end];

    let open =
        b[host_end..].iter().position(|&c| c == b'[').ok_or(SkipReason::Timestamp)? + host_end;
    let close = b[open..].iter().position(|&c| c == b']').ok_or(SkipReason::Timestamp)? + open;
    let time_ms = clf_time::parse(&b[open + 1..close]).ok_or(SkipReason::Timestamp)?;

    let req_open = skip_spaces(b, close + 1);
    if b.get(req_open) != Some(&b'"') {
        return Err(SkipReason::Request);
    }
    let (req_close, status_at) = (req_open + 1..b.len())
        .filter(|&q| b[q] == b'"')
        .find_map(|q| status_after_quote(b, q).map(|s| (q, s)))
        .ok_or(SkipReason::Request)?;

    let mut parts = b[req_open + 1..req_close].split(|&c| c == b' ').filter(|p| !p.is_empty());
    let (method, target, protocol) = match (parts.next(), parts.next(), parts.next(), parts.next())
    {
        (Some(m), Some(t), p, None) => (m, t, p),
        _ => return Err(SkipReason::RequestLine),
    };
    if !method.iter().all(|&c| is_method_byte(c)) {
        return Err(SkipReason::RequestLine);
    }
    if protocol.is_some_and(|p| !p.starts_with(b"HTTP/")) {
        return Err(SkipReason::RequestLine);
    }

    let status = parse_u64(&b[status_at..status_at + 3])
        .and_then(|s| u16::try_from(s).ok())
        .filter(|s| (100..=599).contains(s))
        .ok_or(SkipReason::Status)?;

    let bytes_at = skip_spaces(b, status_at + 3);
    let bytes_end = token_end(b, bytes_at);
    let bytes = match &b[bytes_at..bytes_end] {
        b"-" => None,
        digits => Some(parse_u64(digits).ok_or(SkipReason::Bytes)?),
    };

    let (referer, after) = match quoted(b, skip_spaces(b, bytes_end)) {
        Some((r, after)) => (Some(r), after),
        None => (None, b.len()),
    };
    let user_agent = quoted(b, skip_spaces(b, after)).map(|(ua, _)| ua);

    Ok(LogLine { host, time_ms, method, target, protocol, status, bytes, referer, user_agent })
}

/// The host written for a client id: `10.x.y.z` while ids fit in 24 bits (what log tools
/// expect), a name beyond that.
fn client_host(client: u32) -> String {
    if client < 1 << 24 {
        format!("10.{}.{}.{}", client >> 16, (client >> 8) & 0xff, client & 0xff)
    } else {
        format!("client-{client}.larder.invalid")
    }
}

/// Why `target` cannot be written as a CLF request target, if it cannot.
fn unwritable(target: &str) -> Option<&'static str> {
    if !target.starts_with('/') {
        Some("does not start with '/'")
    } else if target.bytes().any(|c| c <= b' ' || c == 0x7f) {
        Some("contains whitespace or control characters")
    } else {
        None
    }
}

/// Writes `workload` as a Common Log Format log, one `GET ... HTTP/1.0" 200 SIZE` line per
/// request in order, timestamps `base_epoch_ms + time_ms` in UTC (whole seconds), client
/// ids as hosts (see `client_host`). Loading the result gives back
/// [`Workload::canonical`] of the input when times are whole seconds.
pub fn write<W: Write>(workload: &Workload, out: W, base_epoch_ms: i64) -> Result<(), TraceError> {
    let werr = |e| TraceError::io("writing log", e);
    if let Some((t, why)) = workload.targets.iter().find_map(|t| Some((t, unwritable(&t.path)?))) {
        return Err(TraceError::Target { target: t.path.clone(), reason: why.to_string() });
    }
    let mut out = std::io::BufWriter::with_capacity(1 << 16, out);
    let mut host = (u32::MAX, String::new());
    let mut line = Vec::with_capacity(256);
    for r in &workload.requests {
        let t = &workload.targets[r.target as usize];
        let ms = base_epoch_ms.saturating_add_unsigned(r.time_ms);
        if r.client != host.0 || host.1.is_empty() {
            host = (r.client, client_host(r.client));
        }
        line.clear();
        Entry {
            host: Host::Name(&host.1),
            unix_secs: ms.div_euclid(1000),
            request: Request::Parts {
                method: "GET",
                target: &t.path,
                protocol: Protocol::Http1 { minor: 0 },
            },
            status: 200,
            bytes: Some(t.size),
            combined: None,
        }
        .write(&mut line);
        line.push(b'\n');
        out.write_all(&line).map_err(werr)?;
    }
    out.flush().map_err(werr)
}

/// [`write`](fn@write) to a file, gzip-compressed (at the fastest level: generated logs can be
/// hundreds of MB) when the name ends in `.gz`.
pub fn write_file(workload: &Workload, path: &Path, base_epoch_ms: i64) -> Result<(), TraceError> {
    let ctx = || path.display().to_string();
    let file = File::create(path).map_err(|e| TraceError::io(ctx(), e))?;
    if path.extension().is_some_and(|e| e == "gz") {
        let mut gz = GzEncoder::new(file, Compression::fast());
        write(workload, &mut gz, base_epoch_ms)?;
        gz.finish().map_err(|e| TraceError::io(ctx(), e))?;
        Ok(())
    } else {
        write(workload, file, base_epoch_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{TargetInfo, WorkRequest};
    use proptest::prelude::*;

    #[test]
    fn parses_common_and_combined() {
        let l = parse_line(
            b"141.243.1.172 - - [29/Aug/1995:23:53:25 -0400] \
              \"GET /Software.html HTTP/1.0\" 200 1497",
        )
        .unwrap();
        assert_eq!(l.host, b"141.243.1.172");
        assert_eq!(l.time_ms, 809_754_805_000);
        assert_eq!((l.method, l.target), (&b"GET"[..], &b"/Software.html"[..]));
        assert_eq!(l.protocol, Some(&b"HTTP/1.0"[..]));
        assert_eq!((l.status, l.bytes), (200, Some(1497)));
        assert_eq!((l.referer, l.user_agent), (None, None));

        let l = parse_line(
            b"83.149.9.216 - - [17/May/2015:10:05:03 +0000] \"GET /a.png HTTP/1.1\" 200 203023 \
              \"http://x/\" \"Mozilla/5.0 (X; \\\"quoted\\\")\"\r",
        )
        .unwrap();
        assert_eq!(l.referer, Some(&b"http://x/"[..]));
        assert_eq!(l.user_agent, Some(&b"Mozilla/5.0 (X; \\\"quoted\\\")"[..]));
    }

    #[test]
    fn lenient_where_unambiguous() {
        let l = parse_line(b"h - - [29/Aug/1995:23:53:25 -0400] \"GET /x\" 304 -").unwrap();
        assert_eq!((l.target, l.protocol, l.bytes), (&b"/x"[..], None, None));
        let l =
            parse_line(b"h - - [29/Aug/1995:23:53:25 -0400] \"GET /a\"b HTTP/1.0\" 200 5").unwrap();
        assert_eq!(l.target, b"/a\"b");
        let l =
            parse_line(b"h - - [29/Aug/1995:23:53:25 -0400] \"PROPFIND /x HTTP/1.1\" 207 5 \"-")
                .unwrap();
        assert_eq!((l.method, l.referer), (&b"PROPFIND"[..], None));
    }

    #[test]
    fn dirty_lines_give_reasons() {
        let cases: &[(&[u8], SkipReason)] = &[
            (b"", SkipReason::Empty),
            (b"  \r", SkipReason::Empty),
            (b"justahost", SkipReason::Host),
            (b" - - [29/Aug/1995:23:53:25 -0400] \"GET / HTTP/1.0\" 200 1", SkipReason::Host),
            (b"h - - [29/Aug/1995:23:53 -0400] \"GET / HTTP/1.0\" 200 1", SkipReason::Timestamp),
            (b"h - - 29/Aug/1995:23:53:25 -0400 \"GET / HTTP/1.0\" 200 1", SkipReason::Timestamp),
            (b"h - - [29/Aug/1995:23:53:25 -0400] GET / HTTP/1.0 200 1", SkipReason::Request),
            (b"h - - [29/Aug/1995:23:53:25 -0400] \"GET / HTTP/1.0", SkipReason::Request),
            (b"h - - [29/Aug/1995:23:53:25 -0400] \"GET / HTTP/1.0\" 2", SkipReason::Request),
            (b"h - - [29/Aug/1995:23:53:25 -0400] \"GET\" 200 1", SkipReason::RequestLine),
            (
                b"h - - [29/Aug/1995:23:53:25 -0400] \"G\xffT / HTTP/1.0\" 200 1",
                SkipReason::RequestLine,
            ),
            (
                b"h - - [29/Aug/1995:23:53:25 -0400] \"GET /a b HTTP/1.0\" 200 1",
                SkipReason::RequestLine,
            ),
            (
                b"h - - [29/Aug/1995:23:53:25 -0400] \"GET /a FTP/1.0\" 200 1",
                SkipReason::RequestLine,
            ),
            (b"h - - [29/Aug/1995:23:53:25 -0400] \"GET / HTTP/1.0\" 999 1", SkipReason::Status),
            (b"h - - [29/Aug/1995:23:53:25 -0400] \"GET / HTTP/1.0\" 200 1x", SkipReason::Bytes),
            (b"h - - [29/Aug/1995:23:53:25 -0400] \"GET / HTTP/1.0\" 200", SkipReason::Bytes),
            (
                b"h - - [29/Aug/1995:23:53:25 -0400] \"GET / HTTP/1.0\" 200 99999999999999999999",
                SkipReason::Bytes,
            ),
        ];
        for (line, reason) in cases {
            assert_eq!(parse_line(line).err(), Some(*reason), "{}", String::from_utf8_lossy(line));
        }
    }

    #[test]
    fn refuses_unwritable_targets() {
        let w = Workload {
            targets: vec![TargetInfo { path: "/a b".into(), size: 1 }],
            requests: vec![WorkRequest { target: 0, client: 0, time_ms: 0 }],
        };
        assert!(matches!(write(&w, Vec::new(), 0), Err(TraceError::Target { .. })));
    }

    #[test]
    fn hosts_are_distinct() {
        assert_eq!(client_host(0), "10.0.0.0");
        assert_eq!(client_host(0x01_02_03), "10.1.2.3");
        assert_ne!(client_host(1 << 24), client_host(0));
    }

    fn target_strategy() -> impl Strategy<Value = String> {
        // Printable ASCII without space or '"'.
        "/[!#-~]{0,40}"
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn never_panics_on_arbitrary_bytes(line in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = parse_line(&line);
        }

        #[test]
        fn never_panics_on_mangled_lines(
            cut in 0usize..120,
            flip in 0usize..120,
            byte in any::<u8>(),
        ) {
            let mut line = b"h.example - bob [29/Aug/1995:23:53:25 -0400] \
                             \"GET /a?b=c HTTP/1.0\" 200 1497 \"r\" \"u\""
                .to_vec();
            if flip < line.len() { line[flip] = byte; }
            line.truncate(cut);
            let _ = parse_line(&line);
        }

        #[test]
        fn generated_lines_round_trip(
            host in "[a-z0-9.-]{1,20}",
            secs in 0i64..4_000_000_000,
            method in "[A-Z]{1,8}",
            target in target_strategy(),
            proto in proptest::option::of("HTTP/[0-9]\\.[0-9]"),
            status in 100u16..600,
            bytes in proptest::option::of(0u64..1u64 << 40),
            extras in proptest::option::of(("[ -!#-\\[\\]-~]{0,20}", "[ -!#-\\[\\]-~]{0,30}")),
        ) {
            let mut line = format!(
                "{host} - - [{}] \"{method} {target}{}\" {status} {}",
                clf_time::format_ms(secs * 1000),
                proto.as_ref().map(|p| format!(" {p}")).unwrap_or_default(),
                bytes.map(|b| b.to_string()).unwrap_or_else(|| "-".into()),
            );
            if let Some((r, u)) = &extras {
                line.push_str(&format!(" \"{r}\" \"{u}\""));
            }
            let l = parse_line(line.as_bytes()).unwrap();
            prop_assert_eq!(l.host, host.as_bytes());
            prop_assert_eq!(l.time_ms, secs * 1000);
            prop_assert_eq!(l.method, method.as_bytes());
            prop_assert_eq!(l.target, target.as_bytes());
            prop_assert_eq!(l.protocol, proto.as_ref().map(|p| p.as_bytes()));
            prop_assert_eq!(l.status, status);
            prop_assert_eq!(l.bytes, bytes);
            prop_assert_eq!(l.referer, extras.as_ref().map(|e| e.0.as_bytes()));
            prop_assert_eq!(l.user_agent, extras.as_ref().map(|e| e.1.as_bytes()));
        }
    }
}

//! From a log to a [`Workload`]: which lines become requests, and what was skipped.
//!
//! A line becomes a request when it parses, its method is accepted (default `GET`,
//! `HEAD`: what a static server answers from its cache), its status is accepted (default
//! 2xx and 304: served or revalidated; errors and redirects do not touch the data set)
//! and its target starts with `/` and is UTF-8. Everything else is counted by reason.
//!
//! Memory is one entry per distinct target and client plus 16 bytes per request.

use crate::clf::{self, LogLine};
use crate::error::TraceError;
use crate::reader::{self, Line, LineReader, DEFAULT_MAX_LINE_BYTES};
use crate::skip::SkipReason;
use crate::workload::{TargetInfo, WorkRequest, Workload};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::io::BufRead;
use std::path::Path;

/// Which lines become requests.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadOptions {
    /// Accepted methods, compared case-sensitively (default `GET`, `HEAD`).
    pub methods: Vec<String>,
    /// Accepted statuses as inclusive ranges (default 200..=299 and 304..=304).
    pub statuses: Vec<(u16, u16)>,
    /// Lines longer than this are skipped as `too_long` (default 64 KiB).
    pub max_line_bytes: usize,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            methods: vec!["GET".into(), "HEAD".into()],
            statuses: vec![(200, 299), (304, 304)],
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
        }
    }
}

/// What happened to the lines of a log.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LoadReport {
    /// Every line read (requests plus skipped).
    pub lines: u64,
    pub requests: u64,
    /// Lines that did not become requests, malformed or filtered.
    pub skipped_lines: u64,
    /// The same lines by reason.
    pub skipped_by_reason: BTreeMap<SkipReason, u64>,
}

impl LoadReport {
    fn skip(&mut self, reason: SkipReason) {
        self.skipped_lines += 1;
        *self.skipped_by_reason.entry(reason).or_insert(0) += 1;
    }

    /// Skipped because the line was broken (not merely filtered out).
    pub fn malformed_lines(&self) -> u64 {
        self.skipped_by_reason.iter().filter(|(r, _)| r.is_malformed()).map(|(_, n)| n).sum()
    }
}

/// Order-preserving map of an epoch time onto `u64`, so absolute times can be kept in
/// [`WorkRequest::time_ms`] until the earliest is known.
fn time_key(ms: i64) -> u64 {
    (ms as u64) ^ (1 << 63)
}

/// Builds a workload incrementally from parsed lines.
struct Builder<'o> {
    options: &'o LoadOptions,
    targets: HashMap<String, u32>,
    clients: HashMap<Box<[u8]>, u32>,
    workload: Workload,
    earliest: u64,
}

impl<'o> Builder<'o> {
    fn new(options: &'o LoadOptions) -> Self {
        Builder {
            options,
            targets: HashMap::new(),
            clients: HashMap::new(),
            workload: Workload::default(),
            earliest: u64::MAX,
        }
    }

    fn accepts(&self, line: &LogLine<'_>) -> Result<(), SkipReason> {
        if !self.options.methods.iter().any(|m| m.as_bytes() == line.method) {
            return Err(SkipReason::MethodNotAccepted);
        }
        if !self.options.statuses.iter().any(|&(lo, hi)| (lo..=hi).contains(&line.status)) {
            return Err(SkipReason::StatusNotAccepted);
        }
        Ok(())
    }

    /// Adds the line as a request, or says why it is skipped.
    fn add(&mut self, line: &LogLine<'_>) -> Result<Result<(), SkipReason>, TraceError> {
        if let Err(reason) = self.accepts(line) {
            return Ok(Err(reason));
        }
        let target = match std::str::from_utf8(line.target) {
            Ok(t) if t.starts_with('/') => t,
            _ => return Ok(Err(SkipReason::Target)),
        };
        let size = line.bytes.unwrap_or(0);
        let target = match self.targets.get(target) {
            Some(&id) => {
                let info = &mut self.workload.targets[id as usize];
                info.size = info.size.max(size);
                id
            }
            None => {
                let id = u32::try_from(self.workload.targets.len())
                    .map_err(|_| TraceError::TooMany("targets"))?;
                self.targets.insert(target.to_owned(), id);
                self.workload.targets.push(TargetInfo { path: target.to_owned(), size });
                id
            }
        };
        let client = match self.clients.get(line.host) {
            Some(&id) => id,
            None => {
                let id = u32::try_from(self.clients.len())
                    .map_err(|_| TraceError::TooMany("clients"))?;
                self.clients.insert(line.host.into(), id);
                id
            }
        };
        let time = time_key(line.time_ms);
        self.earliest = self.earliest.min(time);
        self.workload.requests.push(WorkRequest { target, client, time_ms: time });
        Ok(Ok(()))
    }

    fn finish(mut self) -> Workload {
        for r in &mut self.workload.requests {
            r.time_ms -= self.earliest;
        }
        self.workload
    }
}

/// Loads a workload from any line source (plain text; see [`load_workload`] for files).
/// `context` names the source in errors.
pub fn load_reader<R: BufRead>(
    input: R,
    options: &LoadOptions,
    context: &str,
) -> Result<(Workload, LoadReport), TraceError> {
    let mut lines = LineReader::new(input, options.max_line_bytes);
    let mut builder = Builder::new(options);
    let mut report = LoadReport::default();
    loop {
        let line = lines
            .next_line()
            .map_err(|e| TraceError::io(format!("{context}: after line {}", report.lines), e))?;
        let outcome = match line {
            None => break,
            Some(Line::TooLong) => Err(SkipReason::TooLong),
            Some(Line::Bytes(b)) => match clf::parse_line(b) {
                Ok(parsed) => builder.add(&parsed)?,
                Err(reason) => Err(reason),
            },
        };
        report.lines += 1;
        match outcome {
            Ok(()) => report.requests += 1,
            Err(reason) => report.skip(reason),
        }
    }
    Ok((builder.finish(), report))
}

/// Loads a Common/Combined Log Format file, plain or gzip, streaming.
///
/// Targets are interned in order of first appearance, each with the largest size logged
/// for it (0 if only ever logged as `-`); clients (hosts) likewise get dense ids; times
/// are milliseconds since the earliest accepted request, so a slightly out-of-order log
/// never underflows.
pub fn load_workload(
    path: &Path,
    options: &LoadOptions,
) -> Result<(Workload, LoadReport), TraceError> {
    load_reader(reader::open(path)?, options, &path.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const LOG: &[u8] = b"\
a - - [29/Aug/1995:23:53:25 -0400] \"GET /x HTTP/1.0\" 200 100
b - - [29/Aug/1995:23:53:20 -0400] \"GET /y HTTP/1.0\" 304 -
a - - [29/Aug/1995:23:53:30 -0400] \"GET /x HTTP/1.0\" 200 300
a - - [29/Aug/1995:23:53:31 -0400] \"POST /x HTTP/1.0\" 200 1
c - - [29/Aug/1995:23:53:32 -0400] \"GET /z HTTP/1.0\" 404 1
c - - [29/Aug/1995:23:53:33 -0400] \"GET http://h/ HTTP/1.0\" 200 1
garbage \xff\xfe
b - - [29/Aug/1995:23:53:34 -0400] \"HEAD /x HTTP/1.0\" 200 200
";

    #[test]
    fn loads_what_is_usable_and_counts_the_rest() {
        let (w, report) = load_reader(LOG, &LoadOptions::default(), "test").unwrap();
        let paths: Vec<_> = w.targets.iter().map(|t| (t.path.as_str(), t.size)).collect();
        assert_eq!(paths, vec![("/x", 300), ("/y", 0)]);
        let reqs: Vec<_> = w.requests.iter().map(|r| (r.target, r.client, r.time_ms)).collect();
        // Times relative to the earliest (the out-of-order second line).
        assert_eq!(reqs, vec![(0, 0, 5000), (1, 1, 0), (0, 0, 10_000), (0, 1, 14_000)]);
        assert_eq!((report.lines, report.requests, report.skipped_lines), (8, 4, 4));
        let by: Vec<_> = report.skipped_by_reason.iter().map(|(r, n)| (r.name(), *n)).collect();
        assert_eq!(
            by,
            vec![
                ("timestamp", 1),
                ("target", 1),
                ("method_not_accepted", 1),
                ("status_not_accepted", 1)
            ]
        );
        assert_eq!(report.malformed_lines(), 2);
    }

    #[test]
    fn options_change_what_counts() {
        let options = LoadOptions {
            methods: vec!["GET".into(), "POST".into()],
            statuses: vec![(100, 599)],
            ..LoadOptions::default()
        };
        let (w, report) = load_reader(LOG, &options, "test").unwrap();
        assert_eq!(report.requests, 5); // HEAD is no longer accepted; POST and 404 are
        assert_eq!(w.targets.len(), 3);
    }

    #[test]
    fn empty_input_is_an_empty_workload() {
        let (w, report) = load_reader(&b""[..], &LoadOptions::default(), "test").unwrap();
        assert_eq!((w, report), (Workload::default(), LoadReport::default()));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        #[test]
        fn survives_arbitrary_bytes(input in proptest::collection::vec(any::<u8>(), 0..600)) {
            let options = LoadOptions { max_line_bytes: 64, ..LoadOptions::default() };
            let (w, report) = load_reader(&input[..], &options, "test").unwrap();
            prop_assert_eq!(report.lines, report.requests + report.skipped_lines);
            prop_assert_eq!(w.requests.len() as u64, report.requests);
        }

        #[test]
        fn survives_spliced_log_lines(
            cuts in proptest::collection::vec((0usize..700, any::<u8>()), 0..8),
        ) {
            let mut input = LOG.to_vec();
            for (at, byte) in cuts {
                if at < input.len() { input[at] = byte; }
            }
            let (w, report) = load_reader(&input[..], &LoadOptions::default(), "test").unwrap();
            prop_assert_eq!(report.lines, report.requests + report.skipped_lines);
            prop_assert!(w.requests.iter().all(|r| (r.target as usize) < w.targets.len()));
        }
    }
}

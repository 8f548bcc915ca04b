//! Structured logs: one JSON object per line on stderr, for events off the request path
//! (nodes going down and up, reloads, listener errors). Requests go to the access log.

use std::fmt::Display;

/// Write one event line: `{"level":…,"msg":…,<fields>}` (the format is `wire::event`'s).
pub(crate) fn event(level: &str, msg: &str, fields: &[(&str, &dyn Display)]) {
    eprintln!("{}", wire::event::line(level, msg, fields));
}

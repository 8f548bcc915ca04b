//! Structured logs: one JSON object per line on stderr, for events off the request path
//! (nodes going down and up, reloads, listener errors). Requests go to the access log.

use std::fmt::Display;

/// Write one event line: `{"level":…,"msg":…,<fields>}` (the format is `wire::event`'s).
/// Public so the process around the router (the CLI's signals and listeners) logs in the
/// same shape.
pub fn event(level: &str, msg: &str, fields: &[(&str, &dyn Display)]) {
    eprintln!("{}", wire::event::line(level, msg, fields));
}

//! Why a log line did not become a request.

use serde::Serialize;
use std::fmt;

/// The reason a line was skipped. Malformed lines and lines filtered out by
/// [`crate::LoadOptions`] are both counted, under separate reasons, so a report says
/// exactly what happened to every line.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// Blank (or whitespace only).
    Empty,
    /// Longer than the configured line limit (the rest of it is discarded unread).
    TooLong,
    /// No client host field.
    Host,
    /// Missing or malformed `[dd/Mon/yyyy:HH:MM:SS +zzzz]`.
    Timestamp,
    /// The quoted request is missing, unterminated or not followed by a status.
    Request,
    /// The request is not `METHOD TARGET [HTTP/x.y]`.
    RequestLine,
    /// Status is not a number in 100..=599.
    Status,
    /// The size field is neither a number nor `-`.
    Bytes,
    /// The target does not start with `/` or is not UTF-8.
    Target,
    /// Well-formed, but the method is not one the options accept.
    MethodNotAccepted,
    /// Well-formed, but the status is not one the options accept.
    StatusNotAccepted,
}

impl SkipReason {
    /// True for reasons that mean the line itself was broken (not merely filtered).
    pub fn is_malformed(self) -> bool {
        !matches!(self, SkipReason::MethodNotAccepted | SkipReason::StatusNotAccepted)
    }

    /// The name used in reports and JSON.
    pub fn name(self) -> &'static str {
        match self {
            SkipReason::Empty => "empty",
            SkipReason::TooLong => "too_long",
            SkipReason::Host => "host",
            SkipReason::Timestamp => "timestamp",
            SkipReason::Request => "request",
            SkipReason::RequestLine => "request_line",
            SkipReason::Status => "status",
            SkipReason::Bytes => "bytes",
            SkipReason::Target => "target",
            SkipReason::MethodNotAccepted => "method_not_accepted",
            SkipReason::StatusNotAccepted => "status_not_accepted",
        }
    }
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

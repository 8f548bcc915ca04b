//! Where lab's output goes: everything an experiment, `larder up` or the simulator fit
//! says — tables, claims, notes, warnings, progress — is handed to a [`Report`] that the
//! caller passes in. The `larder` binary prints it (stdout, stderr, a progress bar on a
//! terminal); a test can keep it and look at the claims as values. The library itself
//! prints nothing, so it never decides where a line goes or breaks a progress bar.

use crate::claims::Claim;

/// The receiver of lab's output. Lines come from the caller's thread and, for the
/// children's echoed output and stops on drop, from others: hence `Send + Sync` and
/// `&self`.
pub trait Report: Send + Sync {
    /// A rendered table (Markdown, with its own line ends), as it is.
    fn table(&self, text: &str);
    /// One of the claims an experiment checked (after a [`Report::note`] that heads them).
    fn claim(&self, claim: &Claim);
    /// A line of the command's output: what was set up, measured or written.
    fn note(&self, line: &str);
    /// A line aside from the output: something skipped, stopped or killed, a child's echo.
    fn warn(&self, line: &str);
    /// A long task of `total` steps of `unit` ("runs") begins; notes and warnings until
    /// [`Report::finish`] go above its progress.
    fn begin(&self, total: u64, unit: &str);
    /// What the current step does.
    fn step(&self, what: &str);
    /// One step done.
    fn advance(&self);
    /// The long task is over.
    fn finish(&self);
}

/// A [`Report`] that keeps what it is told, for tests to look at.
#[cfg(test)]
#[derive(Default)]
pub(crate) struct Kept {
    /// Every line, in order; a table as one entry, a claim as its line.
    lines: std::sync::Mutex<Vec<String>>,
}

#[cfg(test)]
impl Kept {
    fn keep(&self, line: String) {
        self.lines.lock().unwrap_or_else(|e| e.into_inner()).push(line);
    }

    /// What was kept so far.
    pub fn lines(&self) -> Vec<String> {
        self.lines.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

#[cfg(test)]
impl Report for Kept {
    fn table(&self, text: &str) {
        self.keep(text.to_string());
    }
    fn claim(&self, claim: &Claim) {
        self.keep(claim.to_string());
    }
    fn note(&self, line: &str) {
        self.keep(line.to_string());
    }
    fn warn(&self, line: &str) {
        self.keep(line.to_string());
    }
    fn begin(&self, _total: u64, _unit: &str) {}
    fn step(&self, _what: &str) {}
    fn advance(&self) {}
    fn finish(&self) {}
}

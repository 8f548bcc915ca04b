//! Progress of long commands (experiments, docroot writing, simulator sweeps) on a
//! terminal: an `indicatif` bar on stderr, drawn only when stderr is a terminal, so logs
//! and pipes get the plain lines alone.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// A bar of `total` steps of `unit` (e.g. "runs"), or a hidden one when stderr is not a
/// terminal. Lines printed through [`Progress::println`] go above it.
pub struct Progress {
    bar: ProgressBar,
}

impl Progress {
    pub fn new(total: u64, unit: &str) -> Progress {
        if !std::io::stderr().is_terminal() {
            return Progress { bar: ProgressBar::hidden() };
        }
        let bar = ProgressBar::new(total);
        let template =
            format!("{{spinner}} [{{elapsed_precise}}] {{bar:32}} {{pos}}/{{len}} {unit}  {{msg}}");
        if let Ok(style) = ProgressStyle::with_template(&template) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.enable_steady_tick(Duration::from_millis(250));
        Progress { bar }
    }

    /// What the current step does.
    pub fn step(&self, what: impl Into<String>) {
        self.bar.set_message(what.into());
    }

    /// One step done.
    pub fn advance(&self) {
        self.bar.inc(1);
    }

    /// Runs `print` with the bar out of the way, so what it prints goes above the bar (or
    /// just runs it when there is none).
    pub fn above(&self, print: impl FnOnce()) {
        self.bar.suspend(print);
    }

    /// Print a line to stdout above the bar (or just print it when there is none).
    pub fn println(&self, line: &str) {
        self.above(|| println!("{line}"));
    }

    /// Print a line to stderr above the bar (or just print it when there is none).
    pub fn eprintln(&self, line: &str) {
        self.above(|| eprintln!("{line}"));
    }

    /// Remove the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

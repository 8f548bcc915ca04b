//! The binary's [`lab::Report`]: lab's tables, claims and notes to stdout, its warnings
//! to stderr, and its long tasks as a progress bar on a terminal that every line goes
//! above. The library prints nothing itself; this is where its lines are printed.

use std::sync::{Arc, Mutex, MutexGuard};

use lab::{Claim, Report};

use crate::progress::Progress;

/// Prints what lab reports; the progress bar of the long task under way, if any.
#[derive(Default)]
pub struct Console {
    bar: Mutex<Option<Progress>>,
}

impl Console {
    /// A console to hand to lab (its children's echo threads keep a clone).
    pub fn shared() -> Arc<dyn Report> {
        Arc::new(Console::default())
    }

    fn bar(&self) -> MutexGuard<'_, Option<Progress>> {
        // A thread that panicked while printing left nothing half-done worth refusing.
        self.bar.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Runs `print` above the bar when there is one.
    fn above(&self, print: impl FnOnce()) {
        match &*self.bar() {
            Some(bar) => bar.above(print),
            None => print(),
        }
    }
}

impl Report for Console {
    fn table(&self, text: &str) {
        self.above(|| print!("{text}"));
    }

    fn claim(&self, claim: &Claim) {
        self.above(|| println!("  {claim}"));
    }

    fn note(&self, line: &str) {
        self.above(|| println!("{line}"));
    }

    fn warn(&self, line: &str) {
        self.above(|| eprintln!("{line}"));
    }

    fn begin(&self, total: u64, unit: &str) {
        *self.bar() = Some(Progress::new(total, unit));
    }

    fn step(&self, what: &str) {
        if let Some(bar) = &*self.bar() {
            bar.step(what);
        }
    }

    fn advance(&self) {
        if let Some(bar) = &*self.bar() {
            bar.advance();
        }
    }

    fn finish(&self) {
        if let Some(bar) = self.bar().take() {
            bar.finish();
        }
    }
}

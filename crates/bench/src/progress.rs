//! The live progress of a run on a terminal: each epoch on one overwritten line.

use std::io::{IsTerminal, Write};

/// Shows each epoch on one overwritten line, only when stdout is a terminal.
pub struct Progress {
    on: bool,
}

impl Default for Progress {
    fn default() -> Self {
        Progress::new()
    }
}

impl Progress {
    pub fn new() -> Self {
        Progress { on: std::io::stdout().is_terminal() }
    }

    pub fn epoch(&self, epoch: &crate::report::EpochReport) {
        if self.on {
            print!("\r\x1b[K{}", crate::table::progress_line(epoch));
            let _ = std::io::stdout().flush();
        }
    }

    pub fn clear(&self) {
        if self.on {
            print!("\r\x1b[K");
        }
    }
}

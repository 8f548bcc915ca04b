//! A child's output, line by line, without blocking the test.

use std::io::{BufRead, BufReader, Read};
use std::sync::mpsc::{self, Receiver};

/// The lines of `r` (a child's stdout or stderr) as they come, read on a thread so every
/// wait for one can have a deadline (`recv_timeout`). The channel closes at end of input.
pub fn lines(r: impl Read + Send + 'static) -> Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(r).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    rx
}

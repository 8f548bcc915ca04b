//! Child processes for tests: every wait has a deadline, and a child never outlives a
//! failed test. Signals go through `kill(1)`, so this crate needs no `unsafe`.

use std::cell::Cell;
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use crate::lines::lines;

/// A running child: its stdout and stderr lines arrive on channels, its exit status on
/// another (a thread waits for it). Killed on drop unless it has been seen to exit.
pub struct Spawned {
    pid: u32,
    pub stdout: Receiver<String>,
    pub stderr: Receiver<String>,
    exit: Receiver<ExitStatus>,
    /// Set once the exit was received: then the pid is no longer ours to signal.
    reaped: Cell<bool>,
}

impl Spawned {
    /// Start `command` with stdin closed and stdout and stderr read line by line.
    pub fn start(command: &mut Command) -> Spawned {
        let mut child = spawn_piped(command);
        let pid = child.id();
        let stdout = lines(child.stdout.take().unwrap());
        let stderr = lines(child.stderr.take().unwrap());
        let (tx, exit) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(child.wait().unwrap());
        });
        Spawned { pid, stdout, stderr, exit, reaped: Cell::new(false) }
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The exit status, if the child exits within `limit`.
    pub fn wait_within(&self, limit: Duration) -> Option<ExitStatus> {
        let status = self.exit.recv_timeout(limit).ok()?;
        self.reaped.set(true);
        Some(status)
    }

    /// The stderr lines that have arrived so far (for a failure message).
    pub fn stderr_now(&self) -> Vec<String> {
        self.stderr.try_iter().collect()
    }

    /// Send `signal` (a name such as `TERM`, `HUP`, `KILL`) unless the child has exited.
    pub fn signal(&self, signal: &str) {
        if self.exited() {
            return;
        }
        let status = Command::new("kill")
            .args(["-s", signal, &self.pid.to_string()])
            .status()
            .expect("kill(1) runs");
        assert!(status.success() || self.exited(), "kill -s {signal} {} failed", self.pid);
    }

    /// Kill the child now (a no-op once it has exited).
    pub fn kill(&self) {
        self.signal("KILL");
    }

    /// True once the exit status has arrived (or been taken by [`Spawned::wait_within`]).
    fn exited(&self) -> bool {
        if !self.reaped.get() && self.exit.try_recv().is_ok() {
            self.reaped.set(true);
        }
        self.reaped.get()
    }
}

/// A failed assertion must not leave the child running.
impl Drop for Spawned {
    fn drop(&mut self) {
        if !self.exited() {
            let _ = Command::new("kill").args(["-s", "KILL", &self.pid.to_string()]).status();
        }
    }
}

/// Run `command` to the end with stdin closed and its output collected; kill it and fail
/// the test if it takes longer than `limit`.
pub fn output_within(command: &mut Command, limit: Duration) -> Output {
    let child = spawn_piped(command);
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(output) => output.unwrap(),
        Err(_) => {
            // Not reaped yet (the waiting thread has not returned), so the pid is ours.
            let _ = Command::new("kill").args(["-s", "KILL", &pid.to_string()]).status();
            panic!("{command:?} did not finish within {limit:?}");
        }
    }
}

/// Start `command` with stdin closed and stdout and stderr piped to us.
fn spawn_piped(command: &mut Command) -> Child {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {command:?}: {e}"))
}

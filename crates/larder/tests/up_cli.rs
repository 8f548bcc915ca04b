//! `larder up` as a user meets it: it builds a store, starts nodes and a router, serves a
//! document through the router, and on SIGTERM stops every process it started and exits
//! 0; a process that fails to start is named with its error and nothing is left behind.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

mod common;
use common::{lines, TempDir};

/// Generous bounds for a loaded 2-core machine; the test takes a few seconds.
const START: Duration = Duration::from_secs(60);
const EXIT: Duration = Duration::from_secs(30);

/// A running `larder up`: its stdout and stderr lines arrive on channels; its exit status
/// arrives on `exit` (a thread waits for it, so every wait here has a deadline).
struct Up {
    pid: u32,
    /// Set once `exit` has reported: then the pid is no longer ours to signal.
    reaped: std::cell::Cell<bool>,
    stdout: Receiver<String>,
    stderr: Receiver<String>,
    exit: Receiver<ExitStatus>,
}

fn start(store: &Path, extra: &[&str]) -> Up {
    let mut child: Child = Command::new(env!("CARGO_BIN_EXE_larder"))
        .arg("up")
        .args(["--cache-mb", "2", "--listen", "127.0.0.1:0", "--store-dir"])
        .arg(store)
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let stdout = lines(child.stdout.take().unwrap());
    let stderr = lines(child.stderr.take().unwrap());
    let (tx, exit) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait().unwrap());
    });
    Up { pid, reaped: false.into(), stdout, stderr, exit }
}

impl Up {
    /// Stdout lines up to and including the first one `last` accepts (None: it exited).
    fn stdout_until(&self, last: impl Fn(&str) -> bool) -> Vec<String> {
        let deadline = Instant::now() + START;
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.stdout.recv_timeout(left) {
                Ok(line) if last(&line) => {
                    seen.push(line);
                    return seen;
                }
                Ok(line) => seen.push(line),
                Err(mpsc::RecvTimeoutError::Disconnected) => return seen,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    self.kill();
                    panic!("larder up printed only {seen:?}; stderr: {:?}", self.stderr_now());
                }
            }
        }
    }

    fn wait_exit(&self) -> ExitStatus {
        let status = self.exit.recv_timeout(EXIT).unwrap_or_else(|_| {
            self.kill();
            panic!("larder up did not exit in time; stderr: {:?}", self.stderr_now())
        });
        self.reaped.set(true);
        status
    }

    fn stderr_now(&self) -> Vec<String> {
        self.stderr.try_iter().collect()
    }

    fn signal(&self, signal: libc::c_int) {
        // SAFETY: kill has no memory-safety preconditions; the child is not reaped before
        // `exit` reports it, so the pid is still ours.
        unsafe { libc::kill(self.pid as libc::pid_t, signal) };
    }

    fn kill(&self) {
        if !self.reaped.get() && self.exit.try_recv().is_err() {
            self.signal(libc::SIGKILL);
        }
    }
}

/// A failed assertion must not leave the cluster running: killing `larder up` takes its
/// children with it (their parent-death signal).
impl Drop for Up {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The pids on lines ending `pid N` (the nodes and the router).
fn pids(lines: &[String]) -> Vec<u32> {
    lines
        .iter()
        .filter_map(|l| l.split_once(" pid ")?.1.split_whitespace().next()?.parse().ok())
        .collect()
}

/// The field after `label` on the line that starts with it (`  router  http://…`).
fn field(lines: &[String], label: &str) -> String {
    let line = lines.iter().find(|l| l.trim_start().starts_with(label)).expect(label);
    line.trim_start()[label.len()..].split_whitespace().next().unwrap().to_string()
}

/// No process with this pid runs anything of this test's (pids are not reused this fast,
/// and a reused one would not run our temp paths).
fn gone(pid: u32, marker: &str) -> bool {
    match std::fs::read(format!("/proc/{pid}/cmdline")) {
        Ok(cmdline) => !String::from_utf8_lossy(&cmdline).contains(marker),
        Err(_) => true,
    }
}

fn get(url: &str) -> String {
    let rest = url.strip_prefix("http://").unwrap();
    let (addr, path) = rest.split_at(rest.find('/').unwrap());
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(EXIT)).unwrap();
    let req = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).unwrap();
    let mut resp = Vec::new();
    s.read_to_end(&mut resp).unwrap();
    String::from_utf8_lossy(&resp).into_owned()
}

#[test]
fn serves_through_the_router_and_stops_everything_on_sigterm() {
    let tmp = TempDir::new("up-test-serve");
    let store = tmp.0.join("store");
    let up = start(&store, &[]);
    let out = up.stdout_until(|l| l.starts_with("larder up: ready"));
    assert!(out.last().is_some_and(|l| l.starts_with("larder up: ready")), "{out:?}");
    let children = pids(&out);
    assert_eq!(children.len(), 5, "4 nodes and a router: {out:?}");

    let resp = get(&field(&out, "try         curl -i"));
    let (head, body) = resp.split_once("\r\n\r\n").expect(&resp);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let head = head.to_ascii_lowercase();
    let node = head.lines().find_map(|l| l.strip_prefix("x-larder-node: ")).expect(&head);
    assert!(node.starts_with('n'), "{node}");
    assert!(body.starts_with("/d/"), "a synthetic document names itself: {body:.40}");

    up.signal(libc::SIGTERM);
    let status = up.wait_exit();
    assert!(status.success(), "{status}; stderr: {:?}", up.stderr_now());
    for pid in children {
        assert!(gone(pid, &tmp.0.to_string_lossy()) && gone(pid, &format!("larder-up-{}", up.pid)));
    }
    assert!(!std::env::temp_dir().join(format!("larder-up-{}", up.pid)).exists());
    // The store was moved into place whole, and nothing half-built is left next to it.
    let names: Vec<_> =
        std::fs::read_dir(&store).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names.len(), 1, "{names:?}");
}

#[test]
fn a_process_that_fails_to_start_is_named_and_nothing_is_left() {
    let tmp = TempDir::new("up-test-fail");
    // The config is read as the router reads it, but only the router judges it whole:
    // a policy it does not know makes it fail to start after the nodes are up.
    let config = tmp.path("router.toml");
    std::fs::write(&config, "[policy]\nkind = \"no-such-policy\"\n").unwrap();
    let up = start(&tmp.0.join("store"), &["--nodes", "2", "--config", &config]);
    let out = up.stdout_until(|_| false);
    let status = up.wait_exit();
    assert!(!status.success());
    // Its stderr to the end (it has exited, so the end comes).
    let deadline = Instant::now() + EXIT;
    let mut err = Vec::new();
    while let Ok(line) = up.stderr.recv_timeout(deadline.saturating_duration_since(Instant::now()))
    {
        err.push(line);
    }
    let err = err.join("\n");
    assert!(err.contains("router (pid") && err.contains("no-such-policy"), "{err}");
    let nodes = pids(&out);
    assert_eq!(nodes.len(), 2, "{out:?}");
    for pid in nodes {
        assert!(gone(pid, &tmp.0.to_string_lossy()), "node {pid} outlived larder up");
    }
}

#[test]
fn an_unknown_policy_is_refused_with_the_known_ones() {
    let output = Command::new(env!("CARGO_BIN_EXE_larder"))
        .args(["up", "--policy", "no-such-policy"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!output.status.success());
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(err.contains("no-such-policy") && err.contains("lard-r"), "{err}");
}

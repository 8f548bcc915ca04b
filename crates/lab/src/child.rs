//! One process `larder up` or an experiment started: spawned so it cannot outlive us, its
//! stderr watched for the line that reports its bound address, its output kept in a log
//! file (and echoed only when asked), and stopped with SIGTERM then SIGKILL.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::SocketAddr;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::error::{Context, LabError, Result};
use crate::report::Report;
use crate::signals::{Signals, Wake};

/// Stderr lines kept per child for error messages.
const TAIL_LINES: usize = 20;
/// How often a wait for a child's address looks for a stop request.
const STOP_CHECK: Duration = Duration::from_millis(100);

/// Finds the bound addresses in one stderr line of the child, if this is the line.
pub type AddrLine = fn(&str) -> Option<Bound>;

/// What a child reports once it listens: its traffic address and, for a router with an
/// admin API, that listener's address (both possibly bound on port 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bound {
    pub addr: SocketAddr,
    pub admin: Option<SocketAddr>,
    /// A peer's own node.
    pub backend: Option<SocketAddr>,
    /// A router's TLS listener.
    pub tls: Option<SocketAddr>,
}

impl Bound {
    /// A child with one listener.
    pub fn only(addr: SocketAddr) -> Bound {
        Bound { addr, admin: None, backend: None, tls: None }
    }
}

/// Where children's output goes: `<dir>/<name>.log` (stdout and stderr), and with an
/// `echo` also to its warnings, each line prefixed with `[name]`. The user's terminal
/// shows only what larder itself says unless asked for more.
#[derive(Clone)]
pub struct Logs {
    pub dir: PathBuf,
    echo: Option<Arc<dyn Report>>,
}

impl Logs {
    /// Logs in `dir` (created if need be), echoed to `echo` when given (`--verbose`).
    pub fn new(dir: impl Into<PathBuf>, echo: Option<Arc<dyn Report>>) -> Result<Logs> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        Ok(Logs { dir, echo })
    }

    /// The same, in the subdirectory `name` (one per run of an experiment).
    pub fn sub(&self, name: &str) -> Result<Logs> {
        Logs::new(self.dir.join(name), self.echo.clone())
    }

    fn file(&self, name: &str) -> Result<File> {
        let path = self.dir.join(format!("{name}.log"));
        File::create(&path).with_context(|| format!("creating {}", path.display()))
    }
}

pub struct Child {
    /// What `larder up` calls it (n1, router).
    pub name: String,
    process: std::process::Child,
    addr: Receiver<Bound>,
    tail: Arc<Mutex<VecDeque<String>>>,
    exited: Option<ExitStatus>,
}

/// Starts `cmd` as `name`. Its stdout and stderr are read by threads into its log file
/// (see [`Logs`]); the stderr thread also looks for the address line and keeps the last
/// lines for error messages.
pub fn spawn(
    name: &str,
    mut cmd: Command,
    addr_line: AddrLine,
    signals: &Signals,
    logs: &Logs,
) -> Result<Child> {
    let parent = std::process::id() as libc::pid_t;
    let signals = signals.clone();
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    // Its own process group: a terminal's Ctrl-C reaches only `larder up`, which then
    // stops the router before the nodes behind it.
    cmd.process_group(0);
    // SAFETY: the closure runs between fork and exec and calls only async-signal-safe
    // functions, allocating nothing.
    unsafe {
        cmd.pre_exec(move || {
            signals.unblock()?;
            // The safety net: killed when the thread that spawned it (our main thread,
            // which lives as long as `larder up`) dies, even by SIGKILL.
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // We died between fork and prctl: the death signal will never come.
            if libc::getppid() != parent {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
    let log = Arc::new(Mutex::new(logs.file(name)?));
    let mut process = cmd.spawn().with_context(|| format!("starting {name}"))?;
    let (Some(stdout), Some(stderr)) = (process.stdout.take(), process.stderr.take()) else {
        unreachable!("both were asked to be piped")
    };
    let tail = Arc::new(Mutex::new(VecDeque::with_capacity(TAIL_LINES)));
    let (tx, addr) = mpsc::channel();
    let echo = logs.echo.clone().map(|to| (format!("[{name}]"), to));
    copy_lines(format!("stdout-{name}"), stdout, log.clone(), echo.clone(), |_| {})?;
    let thread_tail = tail.clone();
    let mut ready = false;
    copy_lines(format!("stderr-{name}"), stderr, log, echo, move |line: &str| {
        if !ready {
            if let Some(a) = addr_line(line) {
                ready = tx.send(a).is_ok();
            }
        }
        let mut tail = thread_tail.lock().unwrap_or_else(|e| e.into_inner());
        if tail.len() == TAIL_LINES {
            tail.pop_front();
        }
        tail.push_back(line.to_string());
    })?;
    Ok(Child { name: name.to_string(), process, addr, tail, exited: None })
}

/// A thread that writes every line of `from` to `log` (and as a warning to `echo`'s
/// report after its prefix, if given) and hands it to `watch`, until the child closes it.
fn copy_lines(
    thread: String,
    from: impl Read + Send + 'static,
    log: Arc<Mutex<File>>,
    echo: Option<(String, Arc<dyn Report>)>,
    mut watch: impl FnMut(&str) + Send + 'static,
) -> Result<()> {
    std::thread::Builder::new()
        .name(thread)
        .spawn(move || {
            for line in BufReader::new(from).lines() {
                let Ok(line) = line else { break };
                if let Some((prefix, to)) = &echo {
                    to.warn(&format!("{prefix} {line}"));
                }
                // A full disk loses log lines, never the child's readiness or its tail.
                let _ = writeln!(log.lock().unwrap_or_else(|e| e.into_inner()), "{line}");
                watch(&line);
            }
        })
        .context("starting an output reader")?;
    Ok(())
}

impl Child {
    pub fn pid(&self) -> u32 {
        self.process.id()
    }

    /// Waits until the child reports its bound addresses. None means a stop was requested
    /// meanwhile; an error names the child and shows its stderr.
    pub fn address(&mut self, deadline: Instant, signals: &Signals) -> Result<Option<Bound>> {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(LabError::Child(format!(
                    "{} did not report its address in time{}",
                    self.describe(),
                    self.tail()
                )));
            }
            match self.addr.recv_timeout(left.min(STOP_CHECK)) {
                Ok(addr) => return Ok(Some(addr)),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    // Stderr closed: it is exiting; give it until the deadline to say how.
                    let status = self.wait_until(deadline, signals)?;
                    let how =
                        status.map_or("closed its stderr".into(), |s| format!("exited ({s})"));
                    return Err(LabError::Child(format!(
                        "{} {how} before it was ready{}",
                        self.describe(),
                        self.tail()
                    )));
                }
            }
            if signals.stop_requested(Duration::ZERO) {
                return Ok(None);
            }
        }
    }

    /// Its exit status if it has exited (reaping it).
    pub fn exit_status(&mut self) -> Result<Option<ExitStatus>> {
        if self.exited.is_none() {
            self.exited =
                self.process.try_wait().with_context(|| format!("waiting for {}", self.name))?;
        }
        Ok(self.exited)
    }

    /// "n1 (pid 123)".
    pub fn describe(&self) -> String {
        format!("{} (pid {})", self.name, self.pid())
    }

    /// Its last stderr lines, as an indented block for an error message.
    pub fn tail(&self) -> String {
        let tail = self.tail.lock().unwrap_or_else(|e| e.into_inner());
        if tail.is_empty() {
            return "; it wrote nothing on stderr".into();
        }
        let lines: Vec<String> = tail.iter().map(|l| format!("\n    {l}")).collect();
        format!("; its stderr ends:{}", lines.concat())
    }

    fn wait_until(&mut self, deadline: Instant, signals: &Signals) -> Result<Option<ExitStatus>> {
        while self.exit_status()?.is_none() && Instant::now() < deadline {
            signals.wait(deadline.saturating_duration_since(Instant::now()).min(STOP_CHECK));
        }
        self.exit_status()
    }

    /// Sends `signal` to the child (SIGHUP: reload; SIGKILL: a crash).
    pub fn signal(&self, signal: libc::c_int) {
        // SAFETY: kill has no memory-safety preconditions; the pid is our unreaped child,
        // so it cannot have been reused.
        unsafe { libc::kill(self.pid() as libc::pid_t, signal) };
    }
}

/// Children started and stopped together; dropping the group stops them, so no error
/// path leaves a process behind.
pub struct Group {
    pub children: Vec<Child>,
    grace: Duration,
    signals: Signals,
    /// Told of a child that had to be killed.
    report: Arc<dyn Report>,
}

impl Group {
    /// An empty group whose children get `grace` to exit after SIGTERM.
    pub fn new(grace: Duration, signals: Signals, report: Arc<dyn Report>) -> Group {
        Group { children: Vec::new(), grace, signals, report }
    }

    /// Stops every child still running (see [`stop`]).
    pub fn stop(&mut self) {
        stop(&mut self.children, self.grace, &self.signals, &*self.report);
    }

    /// The first child that has exited: what happened, and its last stderr lines.
    pub fn exited(&mut self) -> Result<Option<(String, String)>> {
        for c in &mut self.children {
            if let Some(status) = c.exit_status()? {
                return Ok(Some((
                    format!("{} exited on its own ({status})", c.describe()),
                    c.tail(),
                )));
            }
        }
        Ok(None)
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Stops every child that is still running: SIGTERM, up to `grace` for them to exit
/// (another stop request cuts it short), then SIGKILL, which `report` is told of. Every
/// child is reaped.
pub fn stop(children: &mut [Child], grace: Duration, signals: &Signals, report: &dyn Report) {
    let deadline = Instant::now() + grace;
    for c in children.iter_mut() {
        if matches!(c.exit_status(), Ok(None)) {
            c.signal(libc::SIGTERM);
        }
    }
    loop {
        let running = children
            .iter_mut()
            .filter_map(|c| c.exit_status().ok()?.is_none().then_some(()))
            .count();
        let left = deadline.saturating_duration_since(Instant::now());
        if running == 0 || left.is_zero() {
            break;
        }
        if signals.wait(left) == Wake::Stop {
            break;
        }
    }
    for c in children.iter_mut() {
        if matches!(c.exit_status(), Ok(None)) {
            report.warn(&format!("larder: {} is still running; killing it", c.describe()));
            c.signal(libc::SIGKILL);
        }
        if c.exited.is_none() {
            c.exited = c.process.wait().ok();
        }
    }
}

/// Runs the command on one CPU only. A CPU the machine does not have is an error at
/// start, reported as the child's failure to start.
pub fn pin(cmd: &mut Command, cpu: usize) {
    // SAFETY: the closure runs between fork and exec; `pin_self` only makes system calls
    // on a set built on its own stack, allocating nothing.
    unsafe {
        cmd.pre_exec(move || pin_self(cpu));
    }
}

/// Runs this process's calling thread, and every thread it starts afterwards, on one CPU.
pub fn pin_self(cpu: usize) -> std::io::Result<()> {
    // SAFETY: the set is built on the stack; sched_setaffinity only reads it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

//! Each node process's CPU time capped at a share of one core, with a Linux cgroup per
//! node: nodes on machines of their own, emulated on a machine with fewer cores than
//! nodes. Without a cap, four nodes, the front-end and the load generator share every
//! core, so the node holding a hot target borrows the idle nodes' CPU and never becomes the
//! bottleneck it would be on a machine of its own.
//!
//! One cgroup per run (`larder-lab-<pid>`) under this process's own cgroup, one cgroup per
//! started node process under it, all removed when the run ends (a run killed outright
//! leaves them; the next run removes those of processes that are gone). cgroup v2
//! (`cpu.max`) where its `cpu` controller is available, else v1's `cpu` hierarchy
//! (`cpu.cfs_quota_us` per `cpu.cfs_period_us`). A node joins its cgroup between fork and
//! exec, so every instruction it runs is capped.

use std::fs::{self, File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::error::{Context, LabError, Result};
use crate::report::Report;

/// The CFS period for shares that allow it. Short, so that a capped node is throttled in
/// slices of a few milliseconds, as a slower CPU would delay it, rather than stopped for
/// most of the default 100 ms.
const PERIOD_US: u64 = 10_000;
/// The kernel's smallest quota.
const MIN_QUOTA_US: u64 = 1_000;
/// The kernel's longest period.
const MAX_PERIOD_US: u64 = 1_000_000;
/// The per-run cgroup's name, before this process's pid.
const RUN_PREFIX: &str = "larder-lab-";

/// A share of one core, checked: above 0, at most the machine's CPUs, and at least what
/// the kernel can enforce (its smallest quota in its longest period).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CpuShare(f64);

impl CpuShare {
    /// `share` of one core on a machine of `cpus` CPUs; the error says what is allowed.
    pub fn new(share: f64, cpus: usize) -> std::result::Result<CpuShare, String> {
        let least = MIN_QUOTA_US as f64 / MAX_PERIOD_US as f64;
        if !(share.is_finite() && share > 0.0 && share <= cpus as f64) {
            return Err(format!(
                "--node-cpu-share {share}: give a share of one core above 0 and at most {cpus} \
                 (this machine's CPUs)"
            ));
        }
        if share < least {
            return Err(format!(
                "--node-cpu-share {share}: the kernel cannot cap below {least} of a core"
            ));
        }
        Ok(CpuShare(share))
    }

    pub fn get(self) -> f64 {
        self.0
    }
}

/// CFS bandwidth: `quota_us` of CPU time in every `period_us`, over all of a cgroup's
/// threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bandwidth {
    pub quota_us: u64,
    pub period_us: u64,
}

impl Bandwidth {
    /// The bandwidth of `share`: [`PERIOD_US`], or a longer period where the quota would
    /// fall below the kernel's smallest.
    pub fn of(share: CpuShare) -> Bandwidth {
        let needed = (MIN_QUOTA_US as f64 / share.0).ceil() as u64;
        let period_us = PERIOD_US.max(needed).min(MAX_PERIOD_US);
        let quota_us = ((share.0 * period_us as f64).round() as u64).max(MIN_QUOTA_US);
        Bandwidth { quota_us, period_us }
    }
}

/// Which cgroup interface a directory speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    V1,
    V2,
}

impl Version {
    /// The files that set `bw` in a cgroup, with their contents, in the order to write.
    pub fn limit_files(self, bw: Bandwidth) -> Vec<(&'static str, String)> {
        match self {
            Version::V1 => vec![
                ("cpu.cfs_period_us", bw.period_us.to_string()),
                ("cpu.cfs_quota_us", bw.quota_us.to_string()),
            ],
            Version::V2 => vec![("cpu.max", format!("{} {}", bw.quota_us, bw.period_us))],
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Version::V1 => "cgroup v1",
            Version::V2 => "cgroup v2",
        }
    }
}

/// Where this process's cgroups of a `cpu`-capable hierarchy are, from
/// `/proc/self/mountinfo` and `/proc/self/cgroup`: the cgroup v2 one first, then v1's
/// `cpu` hierarchy. Whether v2's `cpu` controller is on offer is for the caller to check.
pub fn candidates(mountinfo: &str, self_cgroup: &str) -> Vec<(Version, PathBuf)> {
    let mut found = Vec::new();
    let own = |wanted: &dyn Fn(&str) -> bool| {
        self_cgroup.lines().find_map(|l| {
            let mut parts = l.splitn(3, ':');
            let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
            wanted(controllers).then(|| path.to_string())
        })
    };
    for line in mountinfo.lines() {
        let Some((mount, fs)) = line.split_once(" - ") else { continue };
        let fields: Vec<&str> = mount.split(' ').collect();
        let fs: Vec<&str> = fs.split(' ').collect();
        let (Some(root), Some(point), Some(&fstype)) = (fields.get(3), fields.get(4), fs.first())
        else {
            continue;
        };
        let options = fs.get(2).copied().unwrap_or("");
        let (version, path) = match fstype {
            "cgroup2" => (Version::V2, own(&|c| c.is_empty())),
            "cgroup" if options.split(',').any(|o| o == "cpu") => {
                (Version::V1, own(&|c| c.split(',').any(|c| c == "cpu")))
            }
            _ => continue,
        };
        let Some(path) = path else { continue };
        // Inside a container the mount's root may be the cgroup's own path.
        let relative = path.strip_prefix(root).unwrap_or(&path).trim_start_matches('/');
        let dir = Path::new(point).join(relative);
        if !found.iter().any(|(v, _)| *v == version) {
            found.push((version, dir));
        }
    }
    found.sort_by_key(|(v, _)| *v == Version::V1);
    found
}

/// The cgroups of one run: created with [`NodeCgroups::create`], one more per node process
/// by [`NodeCgroups::confine`], all removed when dropped.
pub struct NodeCgroups {
    share: CpuShare,
    bandwidth: Bandwidth,
    version: Version,
    /// The run's cgroup; the nodes' are its subdirectories.
    dir: PathBuf,
    /// Node processes confined so far, numbering their cgroups.
    confined: AtomicUsize,
    /// Told when the cgroups cannot be removed.
    report: Arc<dyn Report>,
}

impl NodeCgroups {
    /// The run's cgroup, ready to take nodes capped at `share`; a clear error where no
    /// `cpu` controller is available or the cgroup filesystem is not writable. `report`
    /// hears of cgroups that outlive the run.
    pub fn create(share: CpuShare, report: Arc<dyn Report>) -> Result<NodeCgroups> {
        let read = |p: &str| fs::read_to_string(p).with_context(|| format!("reading {p}"));
        let found = candidates(&read("/proc/self/mountinfo")?, &read("/proc/self/cgroup")?);
        let mut why_not = Vec::new();
        let mut chosen = None;
        for (version, dir) in found {
            match usable(version, &dir) {
                Ok(()) => {
                    chosen = Some((version, dir));
                    break;
                }
                Err(why) => why_not.push(why),
            }
        }
        let Some((version, parent)) = chosen else {
            let why = if why_not.is_empty() {
                "no cgroup filesystem with a cpu controller is mounted (neither cgroup v2 nor \
                 v1's cpu hierarchy in /proc/self/mountinfo)"
                    .to_string()
            } else {
                why_not.join("; ")
            };
            return Err(LabError::Invalid(format!("--node-cpu-share needs cgroups: {why}")));
        };
        remove_stale(&parent);
        if version == Version::V2 {
            enable_cpu(&parent)?;
        }
        let dir = parent.join(format!("{RUN_PREFIX}{}", std::process::id()));
        fs::create_dir(&dir).map_err(|e| not_writable(&dir, e))?;
        let cgroups = NodeCgroups {
            share,
            bandwidth: Bandwidth::of(share),
            version,
            dir,
            confined: AtomicUsize::new(0),
            report,
        };
        if version == Version::V2 {
            enable_cpu(&cgroups.dir)?;
        }
        Ok(cgroups)
    }

    /// What the header of a result says: "each node capped at 0.25 of a core (cgroup v1,
    /// 2500 µs every 10000 µs)".
    pub fn describe(&self) -> String {
        format!(
            "each node capped at {} of a core ({}, {} µs every {} µs)",
            self.share.get(),
            self.version.name(),
            self.bandwidth.quota_us,
            self.bandwidth.period_us
        )
    }

    /// Makes a cgroup for node `name`, capped, and has `cmd`'s process join it before it
    /// runs anything of its own.
    pub fn confine(&self, name: &str, cmd: &mut Command) -> Result<()> {
        let number = self.confined.fetch_add(1, Ordering::Relaxed) + 1;
        let dir = self.dir.join(format!("{name}-{number}"));
        fs::create_dir(&dir).map_err(|e| not_writable(&dir, e))?;
        for (file, value) in self.version.limit_files(self.bandwidth) {
            let path = dir.join(file);
            fs::write(&path, &value)
                .with_context(|| format!("writing {value} to {}", path.display()))?;
        }
        let procs = dir.join("cgroup.procs");
        let procs = OpenOptions::new()
            .write(true)
            .open(&procs)
            .with_context(|| format!("opening {}", procs.display()))?;
        join_before_exec(cmd, procs);
        Ok(())
    }
}

impl Drop for NodeCgroups {
    /// Removes the nodes' cgroups and the run's. Their processes have been stopped and
    /// reaped by then; a cgroup still busy is retried briefly, then reported.
    fn drop(&mut self) {
        if let Err((dir, e)) = remove_run(&self.dir) {
            self.report
                .warn(&format!("larder: could not remove the cgroup {}: {e}", dir.display()));
        }
    }
}

/// Has the process `cmd` starts write "0" (itself) to `procs`, a cgroup's `cgroup.procs`
/// opened for writing, between fork and exec. The file closes on exec.
fn join_before_exec(cmd: &mut Command, procs: File) {
    // SAFETY: the closure runs between fork and exec and makes one write(2) of a static
    // buffer to a descriptor the closure owns, allocating nothing.
    unsafe {
        cmd.pre_exec(move || {
            let written = libc::write(procs.as_raw_fd(), b"0".as_ptr().cast(), 1);
            if written != 1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Whether `dir` (this process's cgroup in a hierarchy) can cap CPU time; why not if not.
fn usable(version: Version, dir: &Path) -> std::result::Result<(), String> {
    match version {
        Version::V2 => {
            let file = dir.join("cgroup.controllers");
            let offered = fs::read_to_string(&file)
                .map_err(|e| format!("cgroup v2: reading {}: {e}", file.display()))?;
            if !offered.split_whitespace().any(|c| c == "cpu") {
                return Err(format!(
                    "cgroup v2 offers no cpu controller in {} (it lists \"{}\")",
                    file.display(),
                    offered.trim()
                ));
            }
            Ok(())
        }
        Version::V1 => {
            let file = dir.join("cpu.cfs_quota_us");
            if !file.exists() {
                return Err(format!(
                    "cgroup v1's cpu hierarchy has no CPU bandwidth control ({} is missing; \
                     the kernel needs CONFIG_CFS_BANDWIDTH)",
                    file.display()
                ));
            }
            Ok(())
        }
    }
}

/// Turns on the cpu controller for `dir`'s children (cgroup v2).
fn enable_cpu(dir: &Path) -> Result<()> {
    let file = dir.join("cgroup.subtree_control");
    let on = fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
    if on.split_whitespace().any(|c| c == "cpu") {
        return Ok(());
    }
    fs::write(&file, "+cpu").map_err(|e| {
        LabError::Invalid(format!(
            "--node-cpu-share: cannot enable the cpu controller in {}: {e} (cgroup v2 gives \
             a cgroup's children a controller only while the cgroup itself holds no \
             process, the root cgroup excepted: run larder as root from the root cgroup, or \
             from a cgroup whose other processes live in its children)",
            file.display()
        ))
    })
}

/// The error of a cgroup that could not be made.
fn not_writable(dir: &Path, e: std::io::Error) -> LabError {
    LabError::Invalid(format!(
        "--node-cpu-share: cannot create the cgroup {}: {e} (the cgroup filesystem must be \
         writable, e.g. by root)",
        dir.display()
    ))
}

/// Removes the run cgroups under `parent` whose process is gone (a run killed outright).
fn remove_stale(parent: &Path) {
    let Ok(entries) = fs::read_dir(parent) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix(RUN_PREFIX)) else { continue };
        if pid.parse::<u32>().is_err() || Path::new("/proc").join(pid).exists() {
            continue;
        }
        let _ = remove_run(&entry.path());
    }
}

/// Removes a run's cgroup and its nodes' cgroups under it: the first that would not go,
/// with why, if any.
fn remove_run(run: &Path) -> std::result::Result<(), (PathBuf, std::io::Error)> {
    let mut failed = None;
    if let Ok(nodes) = fs::read_dir(run) {
        for node in nodes.flatten().map(|n| n.path()).filter(|p| p.is_dir()) {
            if let Err(e) = remove(&node) {
                failed.get_or_insert((node, e));
            }
        }
    }
    if let Err(e) = remove(run) {
        failed.get_or_insert((run.to_path_buf(), e));
    }
    failed.map_or(Ok(()), Err)
}

/// Removes one cgroup, retrying a few times while the kernel still counts an exited
/// process in it.
fn remove(dir: &Path) -> std::io::Result<()> {
    const TRIES: u32 = 20;
    for _ in 1..TRIES {
        match fs::remove_dir(dir) {
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
                std::thread::sleep(Duration::from_millis(10))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            other => return other,
        }
    }
    fs::remove_dir(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_are_checked() {
        assert_eq!(CpuShare::new(0.25, 2).unwrap().get(), 0.25);
        assert_eq!(CpuShare::new(2.0, 2).unwrap().get(), 2.0);
        for bad in [0.0, -0.5, 2.5, f64::NAN, f64::INFINITY, 0.0005] {
            let err = CpuShare::new(bad, 2).unwrap_err();
            assert!(err.contains("--node-cpu-share"), "{bad}: {err}");
        }
    }

    #[test]
    fn bandwidth_of_a_share() {
        let bw = |s| Bandwidth::of(CpuShare::new(s, 4).unwrap());
        assert_eq!(bw(0.25), Bandwidth { quota_us: 2_500, period_us: 10_000 });
        assert_eq!(bw(1.0), Bandwidth { quota_us: 10_000, period_us: 10_000 });
        assert_eq!(bw(3.5), Bandwidth { quota_us: 35_000, period_us: 10_000 });
        // Below 1 ms per 10 ms the period grows so the quota stays at the kernel's least.
        assert_eq!(bw(0.05), Bandwidth { quota_us: 1_000, period_us: 20_000 });
        assert_eq!(bw(0.001), Bandwidth { quota_us: 1_000, period_us: 1_000_000 });
    }

    #[test]
    fn limit_files_per_version() {
        let bw = Bandwidth { quota_us: 2_500, period_us: 10_000 };
        assert_eq!(
            Version::V1.limit_files(bw),
            [("cpu.cfs_period_us", "10000".to_string()), ("cpu.cfs_quota_us", "2500".into())]
        );
        assert_eq!(Version::V2.limit_files(bw), [("cpu.max", "2500 10000".to_string())]);
    }

    const HYBRID: &str = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

    #[test]
    fn finds_v2_then_v1_on_a_hybrid_machine() {
        let own = "4:memory:/jobs/7\n2:cpuacct:/\n1:cpu:/lab\n0::/session\n";
        assert_eq!(
            candidates(HYBRID, own),
            [
                (Version::V2, PathBuf::from("/sys/fs/cgroup/unified/session")),
                (Version::V1, PathBuf::from("/sys/fs/cgroup/cpu/lab")),
            ]
        );
    }

    #[test]
    fn finds_a_joint_cpu_cpuacct_hierarchy_and_pure_v2() {
        let joint = "40 31 0:30 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n";
        assert_eq!(
            candidates(joint, "3:cpu,cpuacct:/\n"),
            [(Version::V1, PathBuf::from("/sys/fs/cgroup/cpu,cpuacct"))]
        );
        let pure = "29 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n";
        assert_eq!(
            candidates(pure, "0::/user.slice/run.scope\n"),
            [(Version::V2, PathBuf::from("/sys/fs/cgroup/user.slice/run.scope"))]
        );
        // cpuacct alone caps nothing.
        let acct = "33 31 0:30 / /sys/fs/cgroup/cpuacct rw - cgroup cgroup rw,cpuacct\n";
        assert!(candidates(acct, "2:cpuacct:/\n").is_empty());
        assert!(candidates("", "0::/\n").is_empty());
    }

    #[test]
    fn a_container_mount_rooted_at_its_own_cgroup() {
        let container = "50 40 0:26 /docker/abc /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
        assert_eq!(
            candidates(container, "0::/docker/abc\n"),
            [(Version::V2, PathBuf::from("/sys/fs/cgroup"))]
        );
    }
}

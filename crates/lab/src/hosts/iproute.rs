//! The `ip` and `tc` commands (iproute2) that build a run's network, and what they need:
//! root, and iproute2 installed. Either missing is a clear error before anything starts.

use std::os::unix::fs::MetadataExt;
use std::process::Command;

use crate::error::{LabError, Result};

/// The Debian package with `ip` and `tc`.
pub const PACKAGE: &str = "iproute2";

/// Fails with what to do unless this process is root and `ip` and `tc` run.
pub fn preflight() -> Result<()> {
    // /proc/self belongs to the effective user.
    let uid = std::fs::metadata("/proc/self").map(|m| m.uid()).unwrap_or(u32::MAX);
    if uid != 0 {
        return Err(LabError::Invalid(
            "--hosts needs root: it creates network namespaces, a bridge and tc qdiscs \
             (run it as root, e.g. with sudo)"
                .into(),
        ));
    }
    for tool in ["ip", "tc"] {
        let runs = Command::new(tool).arg("-V").output().is_ok_and(|o| o.status.success());
        if !runs {
            return Err(LabError::Invalid(format!(
                "--hosts needs `{tool}` from {PACKAGE}, which is not installed \
                 (apt-get install {PACKAGE})"
            )));
        }
    }
    Ok(())
}

/// Runs `program args…`; its standard output, or an error with the command and what it
/// said on stderr.
pub fn run(program: &str, args: &[String]) -> Result<String> {
    let out = Command::new(program)
        .args(args)
        .output()
        .map_err(|e| LabError::Invalid(format!("running {program}: {e} ({PACKAGE} is needed)")))?;
    if !out.status.success() {
        return Err(LabError::Invalid(format!(
            "`{program} {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

//! The origin of the `origin` experiment: nginx with one worker serving the workload's
//! store from disk, as a site the caching nodes sit in front of. Its responses say they may
//! be cached for an hour (`expires 1h`, as an operator sets for static files), so within a
//! run the nodes fetch an object again only when their cache dropped it.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::child::{self, Group};
use crate::error::{Context, LabError, Result};
use crate::hosts::ORIGIN_HOST;
use crate::launcher::Launcher;
use crate::nginx_conf;
use crate::probe;

/// The origin's log of what it sent, one line per response: the body bytes.
fn log_file(dir: &Path) -> PathBuf {
    dir.join("origin").join("sent.log")
}

/// What the origin has sent so far, by its log (see [`start`]'s `log`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sent {
    /// Responses logged.
    pub responses: u64,
    /// Body bytes of those responses.
    pub bytes: u64,
}

impl Sent {
    /// What was sent since `earlier`.
    pub fn since(&self, earlier: &Sent) -> Sent {
        Sent {
            responses: self.responses.saturating_sub(earlier.responses),
            bytes: self.bytes.saturating_sub(earlier.bytes),
        }
    }
}

/// Reads what the origin started with its configuration in `dir` (and `log`) has sent so
/// far. Counted at the origin, so it is the same measure whatever caches in front of it.
pub fn sent(dir: &Path) -> Result<Sent> {
    let file = log_file(dir);
    let text =
        std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
    let mut sent = Sent::default();
    for line in text.lines() {
        let bytes: u64 = line.trim().parse().map_err(|_| {
            LabError::Invalid(format!("{}: not a byte count: {line:?}", file.display()))
        })?;
        sent.responses += 1;
        sent.bytes += bytes;
    }
    Ok(sent)
}

/// nginx's configuration for serving `docroot` on `addr` in the foreground, its files in
/// `dir`; with `log`, every response's body bytes logged for [`sent`].
pub fn nginx_conf(docroot: &Path, addr: SocketAddr, dir: &Path, log: bool) -> String {
    let (root, d, temps) = (docroot.display(), dir.display(), nginx_conf::temp_paths(dir));
    let access_log = if log {
        format!("log_format sent '$body_bytes_sent';\n    access_log {d}/sent.log sent;")
    } else {
        "access_log off;".to_string()
    };
    format!(
        "daemon off;\nmaster_process off;\nworker_processes 1;\npid {d}/origin.pid;\n\
         error_log stderr warn;\nevents {{ worker_connections 4096; }}\n\
         http {{\n    {access_log}\n    sendfile on;\n    tcp_nopush on;\n\
         \x20   keepalive_requests 1000000;\n    keepalive_timeout 300s;\n\
         \x20   default_type application/octet-stream;\n{temps}\
         \x20   server {{\n        listen {addr};\n        root {root};\n\
         \x20       expires 1h;\n    }}\n}}\n"
    )
}

/// Starts nginx (`exe`) serving `docroot` on `addr` (on the origin's host, with hosts), its configuration in `dir`, into a
/// group of its own, and waits until `probe_path` answers. With `log`, it logs what it
/// sends, for [`sent`]. None: a stop was requested.
#[allow(clippy::too_many_arguments)]
pub fn start(
    launcher: &Launcher,
    exe: &Path,
    docroot: &Path,
    addr: SocketAddr,
    dir: &Path,
    probe_path: &str,
    log: bool,
    deadline: Instant,
) -> Result<Option<Group>> {
    let own = dir.join("origin");
    std::fs::create_dir_all(&own).with_context(|| format!("creating {}", own.display()))?;
    let file = own.join("nginx.conf");
    std::fs::write(&file, nginx_conf(docroot, addr, &own, log))
        .with_context(|| format!("writing {}", file.display()))?;
    let mut cmd = Command::new(exe);
    launcher.run_on(ORIGIN_HOST, &mut cmd)?;
    cmd.arg("-c").arg(&file).arg("-p").arg(&own);
    let mut group = Group::new(launcher.grace, launcher.signals.clone(), launcher.report.clone());
    group.children.push(child::spawn("origin", cmd, |_| None, &launcher.signals, &launcher.logs)?);
    match probe::answers(addr, probe_path, deadline, &launcher.signals) {
        Ok(true) => Ok(Some(group)),
        Ok(false) => Ok(None),
        Err(e) => Err(LabError::Context {
            context: format!("the origin did not come up{}", group.children[0].tail()),
            source: Box::new(e),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_worker_serves_the_store_cacheable_for_an_hour() {
        let addr = SocketAddr::from(([127, 0, 0, 1], 8123));
        let conf = nginx_conf(Path::new("/srv/store"), addr, Path::new("/tmp/run/origin"), false);
        assert!(conf.contains("access_log off;"), "{conf}");
        for line in [
            "worker_processes 1;",
            "daemon off;",
            "pid /tmp/run/origin/origin.pid;",
            "listen 127.0.0.1:8123;",
            "root /srv/store;",
            "expires 1h;",
            "sendfile on;",
        ] {
            assert!(conf.contains(line), "{line} missing in\n{conf}");
        }
        assert_eq!(conf.matches('{').count(), conf.matches('}').count(), "{conf}");
    }

    #[test]
    fn the_log_counts_what_was_sent() {
        let addr = SocketAddr::from(([127, 0, 0, 1], 8123));
        let dir = std::env::temp_dir().join(format!("larder-origin-log-{}", std::process::id()));
        let conf = nginx_conf(Path::new("/srv"), addr, &dir.join("origin"), true);
        assert!(conf.contains("log_format sent '$body_bytes_sent';"), "{conf}");
        assert!(
            conf.contains(&format!("access_log {}/sent.log sent;", dir.join("origin").display()))
        );
        std::fs::create_dir_all(dir.join("origin")).unwrap();
        std::fs::write(log_file(&dir), "10\n1048576\n0\n").unwrap();
        let all = sent(&dir).unwrap();
        assert_eq!(all, Sent { responses: 3, bytes: 1_048_586 });
        assert_eq!(
            all.since(&Sent { responses: 1, bytes: 10 }),
            Sent { responses: 2, bytes: 1_048_576 }
        );
        std::fs::write(log_file(&dir), "10\nnope\n").unwrap();
        assert!(sent(&dir).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}

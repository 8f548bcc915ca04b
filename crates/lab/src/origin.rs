//! The origin of the `origin` experiment: nginx with one worker serving the workload's
//! store from disk, as a site the caching nodes sit in front of. Its responses say they may
//! be cached for an hour (`expires 1h`, as an operator sets for static files), so within a
//! run the nodes fetch an object again only when their cache dropped it.

use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use crate::child::{self, Group};
use crate::error::{Context, LabError, Result};
use crate::hosts::ORIGIN_HOST;
use crate::launcher::Launcher;
use crate::probe;

/// nginx's configuration for serving `docroot` on `addr` in the foreground, its files in `dir`.
pub fn nginx_conf(docroot: &Path, addr: SocketAddr, dir: &Path) -> String {
    let (root, d) = (docroot.display(), dir.display());
    format!(
        "daemon off;\nmaster_process off;\nworker_processes 1;\npid {d}/origin.pid;\n\
         error_log stderr warn;\nevents {{ worker_connections 4096; }}\n\
         http {{\n    access_log off;\n    sendfile on;\n    tcp_nopush on;\n\
         \x20   keepalive_requests 1000000;\n    keepalive_timeout 300s;\n\
         \x20   default_type application/octet-stream;\n\
         \x20   client_body_temp_path {d}/tmp;\n    proxy_temp_path {d}/tmp;\n\
         \x20   fastcgi_temp_path {d}/tmp;\n    uwsgi_temp_path {d}/tmp;\n\
         \x20   scgi_temp_path {d}/tmp;\n\
         \x20   server {{\n        listen {addr};\n        root {root};\n\
         \x20       expires 1h;\n    }}\n}}\n"
    )
}

/// Starts nginx (`exe`) serving `docroot` on `addr` (on the origin's host, with hosts), its configuration in `dir`, into a
/// group of its own, and waits until `probe_path` answers. None: a stop was requested.
pub fn start(
    launcher: &Launcher,
    exe: &Path,
    docroot: &Path,
    addr: SocketAddr,
    dir: &Path,
    probe_path: &str,
    deadline: Instant,
) -> Result<Option<Group>> {
    let own = dir.join("origin");
    std::fs::create_dir_all(&own).with_context(|| format!("creating {}", own.display()))?;
    let file = own.join("nginx.conf");
    std::fs::write(&file, nginx_conf(docroot, addr, &own))
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
        let conf = nginx_conf(Path::new("/srv/store"), addr, Path::new("/tmp/run/origin"));
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
}

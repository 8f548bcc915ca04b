//! The caching clusters a user would run instead of larder's nodes, in front of the same
//! origin with the same memory per node, as their documentation sets them up for large
//! files:
//!
//! - Varnish 7 (`varnish-cluster`): one `varnishd` per node with `malloc` storage the size
//!   of a larder node's cache and the origin as its backend, caching by the built-in VCL
//!   (the origin's `Expires` gives the TTL; a range request is answered from the cached
//!   object, which a miss fetches whole, streamed as it arrives). The front is Varnish's
//!   shard director over them ([`crate::anchors`]), passing every request.
//! - nginx (`nginx-slice`): one nginx per node with `proxy_cache` limited to the node's
//!   cache size and the slice module (`slice 1m`, `proxy_cache_key $uri$slice_range`,
//!   `proxy_set_header Range $slice_range`, `proxy_cache_valid 200 206`,
//!   `proxy_cache_lock on` so concurrent misses on a slice make one fetch), as nginx's
//!   documentation of the slice module shows it. nginx's cache lives in files (the page
//!   cache holds them); it needs its master process for the cache manager that keeps it
//!   within `max_size`. The front is nginx's `hash $uri consistent` over them.
//! - Varnish 7 self-routing (`varnish-self-routing`): the same `varnishd`s with no front;
//!   every one takes clients, its shard director over all of them names the owner of a
//!   URL, the owner fetches a miss from the origin and caches it, and a non-owner passes
//!   the request to the owner, marked so that the owner serves it rather than passing it
//!   on (one hop at most), as Varnish's own clustering guides set it up.
//!
//! With hosts of their own, cache `i` runs on the host of larder's node `i` (`n1`, …),
//! so each cache has the link a larder node would have.

use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use crate::anchors::{Anchor, Tools};
use crate::child::{self, Group};
use crate::error::{Context, LabError, Result};
use crate::launcher::{free_local_addresses, Launcher};
use crate::nginx_conf;
use crate::nodes::{self, NodeSpec, Nodes};
use crate::probe;

/// A path nothing serves: any answer to it says a cache node is up, and asking it
/// fetches no object from the origin.
const PROBE_PATH: &str = "/.cache-tier-probe";

/// Starts one caching instance of `anchor` per spec (named c1, c2, …) in front of
/// `origin`, their files under `dir`, and waits until each answers. None: a stop was
/// requested meanwhile.
pub fn start(
    launcher: &Launcher,
    anchor: Anchor,
    tools: &Tools,
    origin: SocketAddr,
    specs: &[NodeSpec],
    dir: &Path,
    deadline: Instant,
) -> Result<Option<Nodes>> {
    let exe = tools
        .path(anchor)
        .ok_or_else(|| LabError::Invalid(format!("{anchor} is not installed")))?;
    let mut nodes = Nodes {
        group: Group::new(launcher.grace, launcher.signals.clone(), launcher.report.clone()),
        addrs: Vec::new(),
    };
    let mut addrs = Vec::with_capacity(specs.len());
    for (i, addr) in free_local_addresses(specs.len())?.into_iter().enumerate() {
        addrs.push(launcher.address_on(&nodes::node_name(i), addr)?);
    }
    let caches: Vec<(String, SocketAddr)> =
        addrs.iter().enumerate().map(|(i, &a)| (format!("c{}", i + 1), a)).collect();
    for (i, (spec, &addr)) in specs.iter().zip(&addrs).enumerate() {
        let name = caches[i].0.clone();
        let own = dir.join(&name);
        // Every run starts cold: nginx's cache is files, which would outlive the run.
        if own.exists() {
            std::fs::remove_dir_all(&own).with_context(|| format!("emptying {}", own.display()))?;
        }
        std::fs::create_dir_all(&own).with_context(|| format!("creating {}", own.display()))?;
        let mut cmd = Command::new(exe);
        launcher.run_on(&nodes::node_name(i), &mut cmd)?;
        match anchor {
            Anchor::VarnishCluster | Anchor::VarnishSelfRouting => {
                let file = own.join("cache.vcl");
                let vcl = if anchor.self_routing() {
                    self_routing_vcl(origin, &caches, i)
                } else {
                    varnish_vcl(origin)
                };
                std::fs::write(&file, vcl)
                    .with_context(|| format!("writing {}", file.display()))?;
                cmd.args(["-F", "-j", "none", "-s", &format!("malloc,{}m", spec.cache_mb), "-a"])
                    .arg(addr.to_string())
                    .arg("-f")
                    .arg(&file)
                    .arg("-n")
                    .arg(own.join("varnish"));
            }
            Anchor::NginxSlice => {
                let file = own.join("nginx.conf");
                std::fs::write(&file, nginx_conf(origin, addr, spec.cache_mb, &own))
                    .with_context(|| format!("writing {}", file.display()))?;
                cmd.arg("-c").arg(&file).arg("-p").arg(&own);
            }
            other => return Err(LabError::Invalid(format!("{other} is a front-end, not a cache"))),
        }
        if let Some(cpu) = spec.cpu {
            child::pin(&mut cmd, cpu);
        }
        let spawned = child::spawn(&name, cmd, |_| None, &launcher.signals, &launcher.logs)?;
        nodes.group.children.push(spawned);
        nodes.addrs.push((name, addr));
    }
    for (i, &(_, addr)) in nodes.addrs.iter().enumerate() {
        let up = probe::until(
            addr,
            PROBE_PATH,
            deadline,
            &launcher.signals,
            |answer| answer.map(|_| ()).map_err(|e| e.to_string()),
            |last| format!("{anchor} cache c{} on {addr} did not answer in time ({last})", i + 1),
        );
        match up {
            Ok(true) => {}
            Ok(false) => return Ok(None),
            Err(e) => {
                return Err(LabError::Context {
                    context: format!("{anchor} did not come up{}", nodes.group.children[i].tail()),
                    source: Box::new(e),
                })
            }
        }
    }
    Ok(Some(nodes))
}

/// A Varnish cache of `origin`: the built-in VCL does the rest.
fn varnish_vcl(origin: SocketAddr) -> String {
    format!(
        "vcl 4.1;\n\nbackend origin {{\n    .host = \"{}\";\n    .port = \"{}\";\n}}\n",
        origin.ip(),
        origin.port()
    )
}

/// The request header a self-routing Varnish puts on a request it passes to the owner:
/// the owner then fetches from the origin whatever its own director says, so a request
/// makes one hop at most even while two caches disagree.
const PASSED_HEADER: &str = "X-Cluster-Owner";

/// Cache `me` of a self-routing Varnish cluster of `caches` in front of `origin`: the
/// shard director over every cache (by URL) names the owner; the owner, or whoever a
/// request was passed to, caches by the built-in rules from the origin; any other passes
/// the request to the owner.
fn self_routing_vcl(origin: SocketAddr, caches: &[(String, SocketAddr)], me: usize) -> String {
    let backend = |name: &str, a: &SocketAddr| {
        format!("backend {name} {{ .host = \"{}\"; .port = \"{}\"; }}\n", a.ip(), a.port())
    };
    let backends: String = std::iter::once(backend("origin", &origin))
        .chain(caches.iter().map(|(name, a)| backend(name, a)))
        .collect();
    let add: String =
        caches.iter().map(|(name, _)| format!("    cluster.add_backend({name});\n")).collect();
    let own = &caches[me].0;
    format!(
        "vcl 4.1;\nimport directors;\n\n{backends}\nsub vcl_init {{\n\
         \x20   new cluster = directors.shard();\n{add}    cluster.reconfigure();\n}}\n\n\
         sub vcl_recv {{\n\
         \x20   if (req.http.{PASSED_HEADER}) {{\n\
         \x20       set req.backend_hint = origin;\n\
         \x20   }} else {{\n\
         \x20       set req.backend_hint = cluster.backend(by=URL);\n\
         \x20       if (req.backend_hint == {own}) {{\n\
         \x20           set req.backend_hint = origin;\n\
         \x20       }} else {{\n\
         \x20           set req.http.{PASSED_HEADER} = \"{own}\";\n\
         \x20           return (pass);\n\
         \x20       }}\n    }}\n}}\n"
    )
}

/// An nginx caching `origin` by 1 MiB slices in at most `cache_mb`, listening on `addr`,
/// its files in `dir`.
fn nginx_conf(origin: SocketAddr, addr: SocketAddr, cache_mb: u64, dir: &Path) -> String {
    let (d, temps) = (dir.display(), nginx_conf::temp_paths(dir));
    format!(
        "daemon off;\nmaster_process on;\nuser root;\nworker_processes 1;\npid {d}/nginx.pid;\n\
         error_log stderr warn;\nevents {{ worker_connections 4096; }}\n\
         http {{\n    access_log off;\n    sendfile on;\n{temps}\
         \x20   proxy_cache_path {d}/cache levels=1:2 keys_zone=slices:16m max_size={cache_mb}m \
         inactive=1h use_temp_path=off;\n\
         \x20   upstream origin {{\n        server {origin};\n        keepalive 32;\n    }}\n\
         \x20   server {{\n        listen {addr};\n        location / {{\n\
         \x20           slice 1m;\n            proxy_cache slices;\n\
         \x20           proxy_cache_key $uri$slice_range;\n\
         \x20           proxy_set_header Range $slice_range;\n\
         \x20           proxy_cache_valid 200 206 1h;\n            proxy_cache_lock on;\n\
         \x20           proxy_http_version 1.1;\n            proxy_set_header Connection \"\";\n\
         \x20           proxy_pass http://origin;\n        }}\n    }}\n}}\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nginx_caches_by_slices_within_the_node_cache() {
        let origin = SocketAddr::from(([127, 0, 0, 1], 8000));
        let addr = SocketAddr::from(([127, 0, 0, 1], 8001));
        let conf = nginx_conf(origin, addr, 96, Path::new("/tmp/run/c1"));
        for line in [
            "master_process on;",
            "max_size=96m",
            "keys_zone=slices:16m",
            "slice 1m;",
            "proxy_cache_key $uri$slice_range;",
            "proxy_set_header Range $slice_range;",
            "proxy_cache_valid 200 206 1h;",
            "proxy_cache_lock on;",
            "server 127.0.0.1:8000;",
            "listen 127.0.0.1:8001;",
        ] {
            assert!(conf.contains(line), "{line} missing in\n{conf}");
        }
        assert_eq!(conf.matches('{').count(), conf.matches('}').count(), "{conf}");
    }

    #[test]
    fn a_self_routing_varnish_caches_what_it_owns_and_passes_the_rest_to_the_owner() {
        let origin = SocketAddr::from(([10, 77, 0, 1], 8000));
        let caches: Vec<(String, SocketAddr)> = (1..=3)
            .map(|i| (format!("c{i}"), SocketAddr::from(([10, 77, 0, 1 + i], 9000))))
            .collect();
        let vcl = self_routing_vcl(origin, &caches, 1);
        assert!(vcl.starts_with("vcl 4.1;\nimport directors;"), "{vcl}");
        for line in [
            "backend origin { .host = \"10.77.0.1\"; .port = \"8000\"; }",
            "backend c1 { .host = \"10.77.0.2\"; .port = \"9000\"; }",
            "backend c3 { .host = \"10.77.0.4\"; .port = \"9000\"; }",
            "new cluster = directors.shard();",
            "cluster.add_backend(c1);\n    cluster.add_backend(c2);\n    cluster.add_backend(c3);",
            "cluster.reconfigure();",
            "set req.backend_hint = cluster.backend(by=URL);",
            "if (req.backend_hint == c2) {",
            "set req.http.X-Cluster-Owner = \"c2\";",
        ] {
            assert!(vcl.contains(line), "{line} missing in\n{vcl}");
        }
        // A passed request is served by the cache it reaches: from the origin, never
        // passed on.
        let passed = vcl.find("if (req.http.X-Cluster-Owner) {").expect("checks the mark");
        let rest = &vcl[passed..];
        assert!(rest.starts_with("if (req.http.X-Cluster-Owner) {\n        set req.backend_hint = origin;\n    } else {"), "{vcl}");
        assert_eq!(vcl.matches("return (pass);").count(), 1, "{vcl}");
        assert_eq!(vcl.matches('{').count(), vcl.matches('}').count(), "{vcl}");
        // Each cache names itself as the owner it checks for.
        assert!(self_routing_vcl(origin, &caches, 0).contains("== c1)"));
    }

    #[test]
    fn varnish_caches_the_origin_by_the_built_in_rules() {
        let vcl = varnish_vcl(SocketAddr::from(([127, 0, 0, 1], 8000)));
        assert!(vcl.starts_with("vcl 4.1;"), "{vcl}");
        assert!(vcl.contains(".host = \"127.0.0.1\";") && vcl.contains(".port = \"8000\";"));
        assert!(!vcl.contains("pass"), "{vcl}");
    }
}

//! `larder up` as a user meets it: it builds a store, starts nodes and a router, serves a
//! document through the router, and on SIGTERM stops every process it started and exits
//! 0; a process that fails to start is named with its error and nothing is left behind.

use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use testkit::{get_once, get_once_bytes, Response, Route, Spawned, TempDir, TestOrigin};

/// Generous bounds for a loaded 2-core machine; the test takes a few seconds.
const START: Duration = Duration::from_secs(60);
const EXIT: Duration = Duration::from_secs(30);

/// A running `larder up` (killed on drop, taking its children with it: their
/// parent-death signal).
struct Up {
    child: Spawned,
    pid: u32,
}

fn start(store: &Path, extra: &[&str]) -> Up {
    let child = Spawned::start(
        Command::new(env!("CARGO_BIN_EXE_larder"))
            .arg("up")
            .args(["--cache-mb", "2", "--listen", "127.0.0.1:0", "--store-dir"])
            .arg(store)
            .args(extra),
    );
    Up { pid: child.pid(), child }
}

impl Up {
    /// Stdout lines up to and including the first one `last` accepts (None: it exited).
    fn stdout_until(&self, last: impl Fn(&str) -> bool) -> Vec<String> {
        let deadline = Instant::now() + START;
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.child.stdout.recv_timeout(left) {
                Ok(line) if last(&line) => {
                    seen.push(line);
                    return seen;
                }
                Ok(line) => seen.push(line),
                Err(mpsc::RecvTimeoutError::Disconnected) => return seen,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    self.child.kill();
                    panic!(
                        "larder up printed only {seen:?}; stderr: {:?}",
                        self.child.stderr_now()
                    );
                }
            }
        }
    }

    /// Stop it with `signal`: it exits 0, and none of `children` (whose command lines
    /// name `tmp` or the run's directory) outlives it.
    fn stop_all(&self, signal: &str, children: Vec<u32>, tmp: &Path) {
        self.child.signal(signal);
        let status = self.wait_exit();
        assert!(status.success(), "{status}; stderr: {:?}", self.child.stderr_now());
        let run_dir = format!("larder-up-{}", self.pid);
        for pid in children {
            assert!(gone(pid, &tmp.to_string_lossy()) && gone(pid, &run_dir), "{pid} outlived it");
        }
    }

    fn wait_exit(&self) -> ExitStatus {
        self.child.wait_within(EXIT).unwrap_or_else(|| {
            self.child.kill();
            panic!("larder up did not exit in time; stderr: {:?}", self.child.stderr_now())
        })
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

/// The report of the printed `load` line, run for 1 s instead of 10; it saw no error.
fn printed_load_without_errors(out: &[String]) -> String {
    let line = out.iter().find_map(|l| l.trim_start().strip_prefix("load ")).expect("load line");
    let args: Vec<&str> = line.split_whitespace().skip(1).collect();
    assert_eq!(args.first(), Some(&"bench"), "{line}");
    let args: Vec<&str> = args.iter().map(|a| if *a == "10s" { "1s" } else { a }).collect();
    let bench = std::process::Command::new(env!("CARGO_BIN_EXE_larder")).args(&args).output();
    let report = String::from_utf8_lossy(&bench.unwrap().stdout).to_string();
    assert!(report.contains("errors      0 ("), "{line}\n{report}");
    report
}

fn get(url: &str) -> String {
    let rest = url.strip_prefix("http://").unwrap();
    let (addr, path) = rest.split_at(rest.find('/').unwrap());
    get_once(addr, path, EXIT)
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

    let page = get(&field(&out, "dashboard"));
    assert!(page.starts_with("HTTP/1.1 200") && page.contains("<canvas"), "{page:.200}");
    // The printed load line loads this store: every request finds its document.
    let report = printed_load_without_errors(&out);
    assert!(!report.contains("requests    0 "), "{report}");

    up.stop_all("TERM", children, &tmp.0);
    assert!(!std::env::temp_dir().join(format!("larder-up-{}", up.pid)).exists());
    // The store was moved into place whole, and nothing half-built is left next to it.
    let names: Vec<_> =
        std::fs::read_dir(&store).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names.len(), 1, "{names:?}");
}

#[test]
fn caching_nodes_serve_an_origin_byte_exact_and_stop_on_sigterm() {
    let tmp = TempDir::new("up-test-origin");
    let origin = TestOrigin::start();
    let body: Vec<u8> = (0..70_000u32).map(|i| (i * 7 + i / 251) as u8).collect();
    origin.set("/site/blob.bin", Route::ok(&[("Cache-Control", "max-age=600")], &body));
    let site = format!("{}/site", origin.url());
    // The nodes' caching options come from larder up's own flags.
    let flags =
        ["--nodes", "2", "--origin", &site, "--origin-host", "client", "--origin-grace", "7"];
    let up = start(&tmp.0.join("store"), &flags);
    let out = up.stdout_until(|l| l.starts_with("larder up: ready"));
    assert!(out.last().is_some_and(|l| l.starts_with("larder up: ready")), "{out:?}");
    assert!(out.iter().any(|l| l.contains(&format!("caching {site}"))), "{out:?}");
    let children = pids(&out);
    assert_eq!(children.len(), 3, "2 nodes and a router: {out:?}");
    let listen = field(&out, "router");
    let addr = listen.strip_prefix("http://").unwrap();
    let mut heads = Vec::new();
    for _ in 0..2 {
        let resp = get_once_bytes(addr, "/blob.bin", EXIT);
        let (head, n) = Response::parse_head(&resp).unwrap().expect("a response head");
        assert_eq!(head.status, 200, "{:?}", head.headers);
        assert!(resp[n..] == body[..], "body differs from the origin's");
        heads.push(format!("{:?}", head.headers));
    }
    assert_eq!(
        origin.hits("/site/blob.bin"),
        1,
        "the second came from the node's cache {heads:#?}"
    );
    let sent = origin.last_request("/site/blob.bin");
    assert_eq!(testkit::header(&sent, "host"), Some(addr), "the client's Host: {sent:?}");

    up.child.signal("TERM");
    let status = up.wait_exit();
    assert!(status.success(), "{status}; stderr: {:?}", up.child.stderr_now());
    // The nodes' command lines name the origin, the router's the run directory.
    for pid in children {
        let run_dir = format!("larder-up-{}", up.pid);
        assert!(gone(pid, &site) && gone(pid, &run_dir), "{pid} outlived larder up");
    }
}

#[test]
fn two_routers_share_the_address_name_themselves_and_stop_with_the_rest() {
    let tmp = TempDir::new("up-test-routers");
    let up = start(&tmp.0.join("store"), &["--nodes", "1", "--routers", "2"]);
    let out = up.stdout_until(|l| l.starts_with("larder up: ready"));
    assert!(out.last().is_some_and(|l| l.starts_with("larder up: ready")), "{out:?}");
    let children = pids(&out);
    assert_eq!(children.len(), 3, "a node and two routers: {out:?}");
    let listen = field(&out, "router r1");
    assert_eq!(field(&out, "router r2"), listen, "one address: {out:?}");
    let admins = [field(&out, "admin r1"), field(&out, "admin r2")];
    assert_ne!(admins[0], admins[1]);
    for admin in &admins {
        assert!(get(admin).starts_with("HTTP/1.1 200"), "{admin}");
    }
    // New connections spread over both routers by their source ports: 200 that all reach
    // one router would happen with a chance of 2^-199.
    let url = field(&out, "try         curl -i");
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..200 {
        let resp = get(&url);
        assert!(resp.starts_with("HTTP/1.1 200"), "{resp}");
        let name = resp.lines().find_map(|l| l.strip_prefix("X-Larder-Router: ")).expect(&resp);
        seen.insert(name.to_string());
        if seen.len() == 2 {
            break;
        }
    }
    assert_eq!(seen.into_iter().collect::<Vec<_>>(), ["r1", "r2"]);

    up.stop_all("TERM", children, &tmp.0);
}

#[test]
fn a_process_that_fails_to_start_is_named_and_nothing_is_left() {
    let tmp = TempDir::new("up-test-fail");
    // The config is read as the router reads it, but only the router judges it whole:
    // a class pool of a node it does not have makes it fail to start after the nodes are up.
    let config = tmp.path("router.toml");
    let text = "[policy]\nkind = \"class\"\n[[policy.class.pools]]\nclass = 1\nnodes = [\"no-such-node\"]\n";
    std::fs::write(&config, text).unwrap();
    let up = start(&tmp.0.join("store"), &["--nodes", "2", "--config", &config]);
    let out = up.stdout_until(|_| false);
    let status = up.wait_exit();
    assert!(!status.success());
    // Its stderr to the end (it has exited, so the end comes).
    let deadline = Instant::now() + EXIT;
    let mut err = Vec::new();
    while let Ok(line) =
        up.child.stderr.recv_timeout(deadline.saturating_duration_since(Instant::now()))
    {
        err.push(line);
    }
    let err = err.join("\n");
    assert!(err.contains("router (pid") && err.contains("no-such-node"), "{err}");
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

/// One request on its own connection, with `extra` header lines; the whole response.
fn get_with(addr: &str, path: &str, extra: &str) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(EXIT)).unwrap();
    let head = format!("GET {path} HTTP/1.1\r\nHost: t\r\n{extra}Connection: close\r\n\r\n");
    s.write_all(head.as_bytes()).unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    String::from_utf8_lossy(&out).into_owned()
}

/// A response head's field, lower-cased name.
fn header<'a>(resp: &'a str, name: &str) -> &'a str {
    let head = resp.split_once("\r\n\r\n").map_or(resp, |(h, _)| h);
    head.lines()
        .find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.eq_ignore_ascii_case(name).then(|| v.trim())
        })
        .unwrap_or_else(|| panic!("no {name} in {head}"))
}

#[test]
fn peers_serve_every_document_without_a_router_and_stop_on_sigterm() {
    let tmp = TempDir::new("up-test-peers");
    let store = tmp.0.join("store");
    let up = start(&store, &["--peers", "--nodes", "3"]);
    let out = up.stdout_until(|l| l.starts_with("larder up: ready"));
    assert!(out.last().is_some_and(|l| l.starts_with("larder up: ready")), "{out:?}");
    let children = pids(&out);
    assert_eq!(children.len(), 3, "3 peers and nothing else: {out:?}");
    // Every peer takes clients on the one address, and names its node.
    let peers: Vec<(String, String)> = ["p1", "p2", "p3"]
        .iter()
        .map(|p| {
            let line = out.iter().find(|l| l.trim_start().starts_with(&format!("peer {p} ")));
            let words: Vec<&str> = line.expect(p).split_whitespace().collect();
            (words[2].to_string(), words[4].to_string())
        })
        .collect();
    assert!(peers.iter().all(|(addr, _)| *addr == peers[0].0), "{peers:?}");

    let url = field(&out, "try         curl -i");
    let resp = get(&url);
    assert!(resp.starts_with("HTTP/1.1 200"), "{resp:.300}");
    assert_eq!(header(&resp, "via"), "1.1 larder", "one distributor on the way");
    // A request that already passed a distributor is served by the node of the peer that
    // took it, whatever the placement says: never a second hop.
    let (addr, path) = url.strip_prefix("http://").unwrap().split_once('/').unwrap();
    for i in 0..12 {
        let resp = get_with(addr, &format!("/{path}"), "Via: 1.1 larder\r\n");
        assert!(resp.starts_with("HTTP/1.1 200"), "{i}: {resp:.300}");
        let peer = header(&resp, "x-larder-router");
        let own = &peers[peer[1..].parse::<usize>().unwrap() - 1].1;
        assert_eq!(header(&resp, "x-larder-node"), own, "{i}: served by {peer}'s own node");
    }

    // The printed load line loads this store with no error, over more than one node.
    let report = printed_load_without_errors(&out);
    let nodes = report.lines().find(|l| l.trim_start().starts_with("nodes ")).expect(&report);
    assert!(nodes.matches('%').count() >= 2, "placed over several nodes: {report}");

    up.stop_all("INT", children, &tmp.0);
}

#[test]
fn peers_that_hand_off_serve_from_their_nodes_and_stop_on_sigterm() {
    let tmp = TempDir::new("up-test-peers-handoff");
    let store = tmp.0.join("store");
    let up = start(&store, &["--peers", "--handoff", "--nodes", "2"]);
    let out = up.stdout_until(|l| l.starts_with("larder up: ready"));
    assert!(out.last().is_some_and(|l| l.starts_with("larder up: ready")), "{out:?}");
    let children = pids(&out);
    assert_eq!(children.len(), 2, "2 peers and nothing else: {out:?}");

    // The connection was handed to a node, which answered on it itself: no distributor
    // on the way (a relaying peer's answer carries its Via and X-Larder-Router).
    let resp = get(&field(&out, "try         curl -i"));
    assert!(resp.starts_with("HTTP/1.1 200"), "{resp:.300}");
    let head = resp.split_once("\r\n\r\n").map_or(resp.as_str(), |(h, _)| h).to_ascii_lowercase();
    assert!(!head.contains("\r\nvia:") && !head.contains("\r\nx-larder-router:"), "{head}");

    // The printed load line loads this store with no error: keep-alive connections whose
    // later requests belong to either node.
    let report = printed_load_without_errors(&out);
    assert!(!report.contains("requests    0 "), "{report}");

    up.stop_all("INT", children, &tmp.0);
}

#[test]
fn handoff_is_refused_without_peers_on_this_machine() {
    for extra in [&["--handoff"][..], &["--peers", "--handoff", "--hosts"]] {
        let output = Command::new(env!("CARGO_BIN_EXE_larder"))
            .arg("up")
            .args(extra)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(!output.status.success(), "{extra:?}");
        let err = String::from_utf8_lossy(&output.stderr);
        assert!(err.contains("--handoff") || err.contains("--peers"), "{extra:?}: {err}");
    }
}

/// GET `url` (`https://ADDR/PATH`) over HTTP/2 on TLS, trusting only the certificate in
/// `ca`: the status and body.
fn get_h2_tls(ca: &Path, url: &str) -> (u16, Vec<u8>) {
    let rest = url.strip_prefix("https://").unwrap();
    let (addr, path) = rest.split_at(rest.find('/').unwrap());
    let tls = testkit::h2_client_config(ca);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let exchange = async {
        let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
        let connector = tokio_rustls::TlsConnector::from(std::sync::Arc::new(tls));
        let host: std::net::SocketAddr = addr.parse().unwrap();
        let name = rustls::pki_types::ServerName::from(host.ip());
        let stream = connector.connect(name, tcp).await.expect("the certificate is trusted");
        assert_eq!(stream.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
        let (send, connection) = h2::client::handshake(stream).await.unwrap();
        tokio::spawn(connection);
        let mut send = send.ready().await.unwrap();
        let request =
            http::Request::builder().uri(format!("https://{addr}{path}")).body(()).unwrap();
        let (response, _) = send.send_request(request, true).unwrap();
        let (parts, mut body) = response.await.unwrap().into_parts();
        let mut got = Vec::new();
        while let Some(chunk) = body.data().await {
            let chunk = chunk.unwrap();
            body.flow_control().release_capacity(chunk.len()).unwrap();
            got.extend_from_slice(&chunk);
        }
        (parts.status.as_u16(), got)
    };
    runtime.block_on(async { tokio::time::timeout(EXIT, exchange).await.expect("in time") })
}

#[test]
fn tls_serves_http2_with_the_printed_certificate_and_ctrl_c_stops_everything() {
    let tmp = TempDir::new("up-test-tls");
    let store = tmp.0.join("store");
    let up = start(&store, &["--nodes", "2", "--tls", "--tls-listen", "127.0.0.1:0"]);
    let out = up.stdout_until(|l| l.starts_with("larder up: ready"));
    assert!(out.last().is_some_and(|l| l.starts_with("larder up: ready")), "{out:?}");
    let children = pids(&out);
    assert_eq!(children.len(), 3, "2 nodes and a router: {out:?}");
    // `https       curl --cacert FILE --http2 https://ADDR/PATH`
    let line = out.iter().find_map(|l| l.trim_start().strip_prefix("https ")).expect("https line");
    let words: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(words[..2], ["curl", "--cacert"], "{line}");
    assert_eq!(words[3], "--http2", "{line}");
    let (ca, url) = (Path::new(words[2]), words[4]);
    assert!(ca.starts_with(std::env::temp_dir().join(format!("larder-up-{}", up.pid))), "{line}");
    let (status, body) = get_h2_tls(ca, url);
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    assert!(body.starts_with(b"/d/"), "a synthetic document names itself");
    // Plain HTTP goes on beside it.
    assert!(get(&field(&out, "try         curl -i")).starts_with("HTTP/1.1 200"));

    up.stop_all("INT", children, &tmp.0);
    assert!(!ca.exists(), "the certificate goes with the run's directory");
}

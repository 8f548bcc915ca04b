//! `larder up --hosts`: each process on a host of its own (a network namespace with a
//! shaped link on the run's own bridge). A request crosses the links from the client host
//! through the router's host to a node's; every link is shaped as asked; and nothing of
//! the run's network is left after Ctrl-C, nor after a run that was killed once the next
//! one has started.
//!
//! They need root (network namespaces, a bridge, tc) and iproute2, as CI has them:
//! `scripts/test-hosts.sh` runs them (`--ignored`) and fails when either is missing.

use std::path::Path;
use std::process::Command;
use std::sync::{mpsc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use testkit::{output_within, Spawned, TempDir};

/// Generous bounds for a loaded 2-core machine; each test takes a few seconds.
const START: Duration = Duration::from_secs(60);
const EXIT: Duration = Duration::from_secs(30);
/// How often a check that polls a condition looks again, and how many times at most.
const POLL: Duration = Duration::from_millis(100);
const POLLS: u32 = 300;

/// One test at a time: a run removes the namespaces of every run whose process is gone,
/// so a run of one test would remove what the killed run of another must still show.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// A running `larder up --hosts` and what it printed up to "ready".
struct Up {
    child: Spawned,
    pid: u32,
    out: Vec<String>,
}

fn start(store: &Path, extra: &[&str]) -> Up {
    let child = Spawned::start(
        Command::new(env!("CARGO_BIN_EXE_larder"))
            .args(["up", "--hosts", "--cache-mb", "2", "--listen", "127.0.0.1:0"])
            .arg("--store-dir")
            .arg(store)
            .args(extra),
    );
    let deadline = Instant::now() + START;
    let mut out = Vec::new();
    loop {
        match child.stdout.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(line) => {
                let ready = line.starts_with("larder up: ready");
                out.push(line);
                if ready {
                    break;
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected | mpsc::RecvTimeoutError::Timeout) => {
                child.kill();
                panic!("larder up --hosts printed {out:?}; stderr: {:?}", child.stderr_now());
            }
        }
    }
    Up { pid: child.pid(), child, out }
}

impl Up {
    /// The rest of the line that starts with `label`.
    fn line(&self, label: &str) -> &str {
        let line = self.out.iter().find(|l| l.trim_start().starts_with(label));
        line.unwrap_or_else(|| panic!("no {label} line in {:?}", self.out)).trim_start()
            [label.len()..]
            .trim()
    }

    /// Its namespace for `host`.
    fn namespace(&self, host: &str) -> String {
        format!("larder-{}-{host}", self.pid)
    }

    fn stop(&self, signal: &str) {
        self.child.signal(signal);
        let status = self.child.wait_within(EXIT).unwrap_or_else(|| {
            self.child.kill();
            panic!("larder up did not exit in time; stderr: {:?}", self.child.stderr_now())
        });
        assert!(status.success(), "{status}; stderr: {:?}", self.child.stderr_now());
    }
}

/// Runs a command to its end and returns its stdout; fails the test if it fails.
fn run(program: &str, args: &[&str]) -> String {
    let out = output_within(Command::new(program).args(args), EXIT);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{program} {args:?}: {}\n{text}{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// The machine's named network namespaces of run `pid`.
fn namespaces_of(pid: u32) -> Vec<String> {
    let prefix = format!("larder-{pid}-");
    run("ip", &["netns", "list"])
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| n.starts_with(&prefix))
        .map(String::from)
        .collect()
}

/// Polls until `done` holds, at most [`POLLS`] times.
fn eventually(what: &str, done: impl Fn() -> bool) {
    for _ in 0..POLLS {
        if done() {
            return;
        }
        std::thread::sleep(POLL);
    }
    panic!("{what}: still not so after {POLLS} checks");
}

/// `larder bench` on the client host of `up` with `args`; its report.
fn bench_on_client(up: &Up, args: &[&str]) -> String {
    let ns = up.namespace("client");
    let exe = env!("CARGO_BIN_EXE_larder");
    let mut argv = vec!["netns", "exec", &ns, exe, "bench"];
    argv.extend(args);
    run("ip", &argv)
}

#[test]
#[ignore = "needs root and iproute2: scripts/test-hosts.sh runs it"]
fn a_request_crosses_shaped_links_and_ctrl_c_leaves_nothing() {
    let _one = serial();
    let tmp = TempDir::new("up-hosts-serve");
    let up = start(
        &tmp.0.join("store"),
        &[
            "--nodes",
            "1",
            "--link-rate",
            "200mbit",
            "--link-queue",
            "500p",
            "--client-link-rate",
            "400mbit",
        ],
    );
    let client = up.namespace("client");
    // The printed lines say where to run the user's commands.
    let try_line = up.line("try");
    let prefix = format!("ip netns exec {client} curl -i http://");
    assert!(try_line.starts_with(&prefix), "{try_line}");
    let url = try_line.rsplit(' ').next().unwrap();
    let router = up.line("router").split_whitespace().next().unwrap().to_string();
    assert!(router.starts_with("http://10.77.0."), "{router}");

    // From the client host to the router's host to the node's: three hosts, two links.
    let report = bench_on_client(&up, &["--url", url, "--requests", "5", "--warmup", "0s"]);
    assert!(report.contains("errors      0 ("), "{report}");
    assert!(report.contains("requests    5 "), "{report}");
    assert!(report.contains("n1 100.0%"), "the node answered: {report}");

    // Both ends of the node's link: HTB at the asked rate over a FIFO of the asked queue.
    let node = up.namespace("n1");
    let qdiscs = run("tc", &["-n", &node, "qdisc", "show", "dev", "eth0"]);
    assert!(qdiscs.contains("qdisc htb 1: root"), "{qdiscs}");
    assert!(qdiscs.contains("qdisc pfifo 10: parent 1:1 limit 500p"), "{qdiscs}");
    let class = run("tc", &["-n", &node, "class", "show", "dev", "eth0"]);
    assert!(class.contains("rate 200Mbit"), "{class}");
    // The client host has a link of its own rate, at both ends.
    let class = run("tc", &["-n", &client, "class", "show", "dev", "eth0"]);
    assert!(class.contains("rate 400Mbit"), "{class}");
    let switch = up.namespace("switch");
    // The switch's ends of the client's, the router's and the node's links.
    let rates: Vec<String> = ["v0", "v1", "v2"]
        .iter()
        .map(|port| run("tc", &["-n", &switch, "class", "show", "dev", port]))
        .collect();
    let at = |rate: &str| rates.iter().filter(|c| c.contains(rate)).count();
    assert_eq!((at("rate 400Mbit"), at("rate 200Mbit")), (1, 2), "{rates:?}");
    let mut names = namespaces_of(up.pid);
    names.sort();
    let expected: Vec<String> =
        ["client", "n1", "router", "switch"].iter().map(|h| up.namespace(h)).collect();
    assert_eq!(names, expected);

    up.stop("INT");
    assert_eq!(namespaces_of(up.pid), Vec::<String>::new(), "Ctrl-C removes the hosts");
}

#[test]
#[ignore = "needs root and iproute2: scripts/test-hosts.sh runs it"]
fn a_killed_runs_hosts_are_removed_by_the_next_run() {
    let _one = serial();
    let tmp = TempDir::new("up-hosts-crash");
    let store = tmp.0.join("store");
    let crashed = start(&store, &["--nodes", "1"]);
    let left = namespaces_of(crashed.pid);
    assert_eq!(left.len(), 4, "{left:?}");
    crashed.child.kill();
    assert!(crashed.child.wait_within(EXIT).is_some(), "SIGKILL ends it");
    // Its processes die with it (parent-death signal); its namespaces stay mounted.
    let pids: Vec<u32> = crashed
        .out
        .iter()
        .filter_map(|l| l.split_once(" pid ")?.1.split_whitespace().next()?.parse().ok())
        .collect();
    assert_eq!(pids.len(), 2, "{:?}", crashed.out);
    eventually("the killed run's processes exit", || {
        pids.iter().all(|p| !Path::new(&format!("/proc/{p}")).exists())
    });
    assert_eq!(namespaces_of(crashed.pid), left, "what a killed run leaves");

    let next = start(&store, &["--nodes", "1"]);
    assert!(namespaces_of(crashed.pid).is_empty(), "the next run removes them");
    let said = next.out.iter().find(|l| l.contains("left by runs that died"));
    assert!(said.is_some_and(|l| l.contains(&crashed.namespace("switch"))), "{:?}", next.out);
    next.stop("TERM");
    assert!(namespaces_of(next.pid).is_empty());
}

#[test]
#[ignore = "needs root and iproute2: scripts/test-hosts.sh runs it"]
fn an_experiment_runs_every_system_at_each_link_rate_and_leaves_nothing() {
    let _one = serial();
    let tmp = TempDir::new("experiment-hosts");
    let args = [
        "bench",
        "experiment",
        "locality",
        "--hosts",
        "--link-rate",
        "20mbit,1gbit",
        "--systems",
        "wrr",
        "--workloads",
        "static-uniform",
        "--cache-mb",
        "2,2",
        "--dataset-mb",
        "2",
        "--duration",
        "1s",
        "--warmup",
        "0s",
        "--rounds",
        "1",
    ];
    let (text, rows) = experiment_rows(&tmp, &args);
    // The links were reshaped between the runs: one row at each rate, no error.
    let systems: Vec<&str> = rows.iter().filter_map(|r| r["system"].as_str()).collect();
    assert_eq!(systems, ["wrr @20mbit", "wrr @1gbit"], "{text}");
    assert!(rows.iter().all(|r| r["errors"] == 0 && r["requests"].as_u64() > Some(0)), "{text}");
    let pid = output_pid(&text);
    assert!(namespaces_of(pid).is_empty(), "the experiment removed its hosts");
}

#[test]
#[ignore = "needs root, iproute2, nginx and varnish: scripts/test-hosts.sh runs it"]
fn peers_and_a_self_routing_varnish_cluster_cache_an_origin_on_hosts_and_leave_nothing() {
    let _one = serial();
    let tmp = TempDir::new("experiment-hosts-origin");
    let args = [
        "bench",
        "experiment",
        "origin",
        "--hosts",
        "--link-rate",
        "100mbit",
        "--systems",
        "peers,varnish-self-routing",
        "--workloads",
        "static-uniform",
        "--cache-mb",
        "2,2",
        "--dataset-mb",
        "3",
        "--users",
        "4",
        "--duration",
        "1s",
        "--warmup",
        "1s",
        "--rounds",
        "1",
    ];
    let (text, rows) = experiment_rows(&tmp, &args);
    let systems: Vec<&str> = rows.iter().filter_map(|r| r["system"].as_str()).collect();
    assert_eq!(systems, ["peers", "varnish-self-routing"], "{text}");
    for row in &rows {
        assert!(row["errors"] == 0 && row["requests"].as_u64() > Some(0), "{text}");
        // Measured at the origin: the bytes its host's link sent, every host's link apart,
        // and the clients' load spread over the caches, each of which took some.
        assert!(row["origin_bytes_per_request"].as_f64().is_some(), "{row}");
        let links = row["link_bytes"].as_array().expect("every host's link");
        let sent =
            |host: &str| links.iter().find(|l| l["host"] == host).and_then(|l| l["sent"].as_u64());
        assert!(sent("origin").is_some() && sent("client") > Some(0), "{row}");
        assert!(row["p99_ms"].as_f64().is_some_and(|p| p > 0.0), "{row}");
    }
    let by = |system: &str, host: &str| {
        let row = rows.iter().find(|r| r["system"] == system).unwrap();
        let links = row["link_bytes"].as_array().unwrap();
        links.iter().find(|l| l["host"] == host).and_then(|l| l["received"].as_u64())
    };
    for (system, hosts) in [("peers", ["p1", "p2"]), ("varnish-self-routing", ["n1", "n2"])] {
        for host in hosts {
            assert!(by(system, host) > Some(0), "{system}: {host} took no requests: {text}");
        }
    }
    let pid = output_pid(&text);
    assert!(namespaces_of(pid).is_empty(), "the experiment removed its hosts");
}

/// Run `larder` with an experiment's `args` (its results and store in `tmp`), which must
/// succeed in time: what it printed and the rows it wrote.
fn experiment_rows(tmp: &TempDir, args: &[&str]) -> (String, Vec<serde_json::Value>) {
    let out = tmp.0.join("out");
    let output = output_within(
        Command::new(env!("CARGO_BIN_EXE_larder"))
            .args(args)
            .arg("--out")
            .arg(&out)
            .arg("--store-dir")
            .arg(tmp.0.join("store")),
        START,
    );
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "{text}{}", String::from_utf8_lossy(&output.stderr));
    let rows: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("rows.json")).unwrap()).unwrap();
    let rows = rows.as_array().expect("rows.json is a list of rows").clone();
    (text, rows)
}

/// The run's pid, from the namespace names its header prints (`larder-PID-…`).
fn output_pid(text: &str) -> u32 {
    let at = text.find("(larder-").expect("the header names the namespaces") + "(larder-".len();
    text[at..].split('-').next().unwrap().parse().unwrap()
}

#[test]
#[ignore = "needs root and iproute2: scripts/test-hosts.sh runs it"]
fn peers_on_hosts_of_their_own_serve_and_ctrl_c_leaves_nothing() {
    let _one = serial();
    let tmp = TempDir::new("up-hosts-peers");
    let up = start(&tmp.0.join("store"), &["--peers", "--nodes", "2"]);
    let try_line = up.line("try");
    let url = try_line.rsplit(' ').next().unwrap();
    assert!(url.starts_with("http://10.77.0."), "{try_line}");
    // Each peer on its own host's address; any of them serves every document.
    let report = bench_on_client(&up, &["--url", url, "--requests", "40", "--warmup", "0s"]);
    assert!(report.contains("errors      0 ("), "{report}");
    assert!(report.contains("requests    40 "), "{report}");
    let pids: Vec<u32> = up
        .out
        .iter()
        .filter_map(|l| l.split_once(" pid ")?.1.split_whitespace().next()?.parse().ok())
        .collect();
    assert_eq!(pids.len(), 2, "{:?}", up.out);
    let mut names = namespaces_of(up.pid);
    names.sort();
    let expected: Vec<String> =
        ["client", "p1", "p2", "switch"].iter().map(|h| up.namespace(h)).collect();
    assert_eq!(names, expected);

    up.stop("INT");
    assert_eq!(namespaces_of(up.pid), Vec::<String>::new(), "Ctrl-C removes the hosts");
    eventually("the peers exit", || {
        pids.iter().all(|p| !Path::new(&format!("/proc/{p}")).exists())
    });
}

//! `larder route` as a program: flags and a config file, a request through it to a node,
//! SIGHUP reloads, SIGTERM drains and exits cleanly; bad input is a clear error.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, ExitStatus};
use std::time::Duration;

use testkit::{get_once, Spawned, TempDir};

const WAIT: Duration = Duration::from_secs(20);

/// A one-thread back-end answering every request on a connection with its name.
fn backend(name: &'static str) -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().map_while(Result::ok) {
            std::thread::spawn(move || serve(stream, name));
        }
    });
    addr
}

fn serve(stream: TcpStream, name: &str) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut writer = stream;
    loop {
        let mut line = String::new();
        // Read one head (requests here have no body).
        loop {
            line.clear();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) if line == "\r\n" => break,
                Ok(_) => {}
            }
        }
        let body = format!("hello from {name}");
        let resp = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}", body.len());
        if writer.write_all(resp.as_bytes()).is_err() {
            return;
        }
    }
}

/// Start `larder route` with `args`; returns the child (the rest of its stderr on
/// `child.stderr`) and its traffic address, from the `listening` event it logs on stderr.
fn start(args: &[&str]) -> (Spawned, String) {
    let child = Spawned::start(Command::new(env!("CARGO_BIN_EXE_larder")).arg("route").args(args));
    let line = child.stderr.recv_timeout(WAIT).expect("no start-up line");
    let event: serde_json::Value = serde_json::from_str(&line).expect(&line);
    assert_eq!(event["msg"], "listening", "{line}");
    let addr = event["addr"].as_str().unwrap().to_string();
    (child, addr)
}

fn get(addr: &str, path: &str) -> String {
    get_once(addr, path, WAIT)
}

fn wait_exit(child: &Spawned) -> ExitStatus {
    child.wait_within(WAIT).expect("router did not exit on SIGTERM")
}

#[test]
fn routes_with_flags_then_exits_on_sigterm() {
    let node = backend("n1").to_string();
    let args = ["--listen", "127.0.0.1:0", "--node", &node, "--policy", "lard", "--admin", ""];
    let (child, addr) = start(&[&args[..], &["--threads", "1", "--node-header"]].concat());
    let resp = get(&addr, "/a.html");
    assert!(resp.starts_with("HTTP/1.1 200 OK\r\n"), "{resp}");
    assert!(resp.contains(&format!("X-Larder-Node: {node}\r\n")), "{resp}");
    assert!(resp.ends_with("hello from n1"), "{resp}");
    child.signal("TERM");
    assert!(wait_exit(&child).success());
}

/// A nameserver on 127.0.0.1 (UDP) that answers every A query with 127.0.0.1 and any
/// other query with no records; it stops after a few hundred queries or a quiet minute.
fn nameserver() -> std::net::SocketAddr {
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    socket.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let addr = socket.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut buf = [0u8; 512];
        for _ in 0..500 {
            let Ok((len, peer)) = socket.recv_from(&mut buf) else { return };
            // Header (12 bytes), then the question: labels up to a zero byte, type, class.
            let mut end = 12;
            while end < len && buf[end] != 0 {
                end += usize::from(buf[end]) + 1;
            }
            if end + 5 > len {
                continue;
            }
            let is_a = buf[end + 1..end + 3] == [0, 1];
            let mut reply = buf[..2].to_vec(); // the query's id
            reply.extend_from_slice(&[0x85, 0x80, 0, 1, 0, u8::from(is_a), 0, 0, 0, 0]);
            reply.extend_from_slice(&buf[12..end + 5]);
            if is_a {
                // A pointer to the question's name, type A, class IN, TTL 30, 127.0.0.1.
                reply.extend_from_slice(&[0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 30, 0, 4, 127, 0, 0, 1]);
            }
            let _ = socket.send_to(&reply, peer);
        }
    });
    addr
}

#[test]
fn routes_to_nodes_found_through_dns() {
    let (node, dns) = (backend("n1"), nameserver());
    let (name, resolver) = (format!("web.test:{}", node.port()), dns.to_string());
    let args = ["--listen", "127.0.0.1:0", "--admin", "", "--threads", "1", "--node-header"];
    let dns_args = ["--nodes-dns", &name, "--dns-resolver", &resolver, "--dns-refresh-ms", "200"];
    let (child, addr) = start(&[&args[..], &dns_args].concat());
    let line = child.stderr.recv_timeout(WAIT).expect("a discovery event");
    assert!(line.contains("discovered nodes changed") && line.contains("web.test/127.0.0.1"));
    let resp = get(&addr, "/a.html");
    assert!(resp.contains("X-Larder-Node: web.test/127.0.0.1\r\n"), "{resp}");
    assert!(resp.ends_with("hello from n1"), "{resp}");
    child.signal("TERM");
    assert!(wait_exit(&child).success());
}

#[test]
fn reloads_its_config_file_on_sighup() {
    let (n1, n2) = (backend("n1"), backend("n2"));
    let dir = TempDir::new("route-cli");
    let path = dir.0.join("router.toml");
    let write = |nodes: &[std::net::SocketAddr]| {
        let mut text = String::from("listen = \"127.0.0.1:0\"\nnode_header = true\n");
        text.push_str("[admin]\nlisten = \"\"\n");
        for (i, n) in nodes.iter().enumerate() {
            text.push_str(&format!("[[nodes]]\naddr = \"{n}\"\nname = \"n{}\"\n", i + 1));
        }
        std::fs::write(&path, text).unwrap();
    };
    write(&[n1]);
    let (child, addr) = start(&["--config", path.to_str().unwrap()]);
    assert!(get(&addr, "/x").contains("X-Larder-Node: n1\r\n"));
    write(&[n2]);
    child.signal("HUP");
    let line = child.stderr.recv_timeout(WAIT).expect("a reload event");
    assert!(line.contains("config reloaded"), "{line}");
    let resp = get(&addr, "/x");
    assert!(resp.ends_with("hello from n2"), "after reload only n2 is configured: {resp}");
    child.signal("TERM");
    assert!(wait_exit(&child).success());
}

#[test]
fn routers_with_reuseport_share_one_address_and_name_themselves() {
    let node = backend("n1").to_string();
    let common = ["--node", &node, "--admin", "", "--threads", "1", "--reuseport"];
    let flags = ["--router-header", "--listen"];
    let (a, addr) = start(&[&common[..], &flags, &["127.0.0.1:0", "--name", "ra"]].concat());
    let (b, same) = start(&[&common[..], &flags, &[&addr, "--name", "rb"]].concat());
    assert_eq!(same, addr);
    // The kernel spreads new connections over both listeners by their source ports: the
    // chance that 200 connections all reach one router is 2^-199.
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..200 {
        let resp = get(&addr, "/x");
        assert!(resp.ends_with("hello from n1"), "{resp}");
        let name = resp.lines().find_map(|l| l.strip_prefix("X-Larder-Router: ")).expect(&resp);
        seen.insert(name.to_string());
        if seen.len() == 2 {
            break;
        }
    }
    assert_eq!(seen.into_iter().collect::<Vec<_>>(), ["ra", "rb"]);
    for child in [a, b] {
        child.signal("TERM");
        assert!(wait_exit(&child).success());
    }
}

#[test]
fn without_reuseport_a_second_router_cannot_take_the_address() {
    let node = backend("n1").to_string();
    let common = ["--node", &node, "--admin", "", "--threads", "1", "--listen"];
    let (a, addr) = start(&[&common[..], &["127.0.0.1:0", "--reuseport"]].concat());
    let out = Command::new(env!("CARGO_BIN_EXE_larder"))
        .arg("route")
        .args([&common[..], &[&addr]].concat())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains(&format!("listening on {addr}")));
    a.signal("TERM");
    assert!(wait_exit(&a).success());
}

#[test]
fn help_and_bad_input() {
    let out =
        Command::new(env!("CARGO_BIN_EXE_larder")).args(["route", "--help"]).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    for flag in [
        "--config",
        "--listen",
        "--node",
        "--policy",
        "--threads",
        "--admin",
        "--reuseport",
        "--nodes-dns",
        "--nodes-srv",
        "--dns-resolver",
        "--dns-refresh-ms",
    ] {
        assert!(text.contains(flag), "--help lacks {flag}");
    }
    let out = Command::new(env!("CARGO_BIN_EXE_larder"))
        .args(["route", "--config", "/nonexistent/router.toml"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/router.toml"));
    let out = Command::new(env!("CARGO_BIN_EXE_larder"))
        .args(["route", "--node", "127.0.0.1:1", "--policy", "nope"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown policy"));
    for (args, want) in [
        (&["--nodes-dns", "web.example"][..], "needs a port, as NAME:PORT"),
        (&["--nodes-srv", "web.example:80"][..], "SRV records carry the ports"),
        (&["--nodes-dns", "web.example:80", "--dns-resolver", "dns"][..], "not IP or IP:PORT"),
        (&["--admin", ""][..], "at least one node"),
    ] {
        let out =
            Command::new(env!("CARGO_BIN_EXE_larder")).arg("route").args(args).output().unwrap();
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

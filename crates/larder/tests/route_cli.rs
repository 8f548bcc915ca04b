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
    // Benchmark switches live in the config's [tuning] table, not among the flags.
    for flag in ["--no-write-batching", "--splice-min-bytes", "--splice-pipe-bytes"] {
        assert!(!text.contains(flag), "--help offers {flag}");
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

#[test]
fn a_bad_access_log_is_named_with_its_os_error_once() {
    let dir = TempDir::new("route-cli-errors");
    let bad_log = dir.0.join("missing-dir/access.log").display().to_string();
    let out = Command::new(env!("CARGO_BIN_EXE_larder"))
        .args(["route", "--node", "127.0.0.1:1", "--listen", "127.0.0.1:0", "--admin", ""])
        .args(["--access-log", &bad_log])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(text.contains(&bad_log), "{text}");
    assert_eq!(text.matches("os error").count(), 1, "{text}");
}

/// The accept-queue length the kernel gave the listener on `addr` (`ss` shows a listening
/// socket's backlog as its Send-Q).
fn backlog_of(addr: &str) -> u32 {
    let port = addr.rsplit(':').next().unwrap();
    let out = Command::new("ss").args(["-ltnH", &format!("sport = :{port}")]).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let line = text.lines().next().unwrap_or_else(|| panic!("no listener on {addr}: {text:?}"));
    line.split_whitespace().nth(2).unwrap().parse().unwrap()
}

#[test]
fn the_listen_backlog_matches_the_nodes_by_default_and_is_a_flag() {
    let somaxconn: u32 = std::fs::read_to_string("/proc/sys/net/core/somaxconn")
        .map_or(4096, |s| s.trim().parse().unwrap());
    let node = backend("n1").to_string();
    let common = ["--listen", "127.0.0.1:0", "--node", &node, "--admin", "", "--threads", "1"];
    let (a, addr) = start(&common);
    assert_eq!(backlog_of(&addr), somaxconn.min(4096), "the node's default, 4096");
    let (b, small) = start(&[&common[..], &["--backlog", "100"]].concat());
    assert_eq!(backlog_of(&small), 100);
    for child in [a, b] {
        child.signal("TERM");
        assert!(wait_exit(&child).success());
    }
}

/// The router's resident memory in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// One keep-alive GET on `stream`, its response read whole (the back-end's is short).
fn get_keep_alive(stream: &mut TcpStream) {
    use std::io::Read;
    stream.write_all(b"GET /idle HTTP/1.1\r\nHost: t\r\n\r\n").unwrap();
    let mut got = Vec::new();
    let mut chunk = [0u8; 1024];
    while !got.ends_with(b"hello from n1") {
        // A read with a timeout is not restarted after the test process is stopped and
        // continued (job control, a busy CI host): that is no answer yet, not an error.
        let n = match stream.read(&mut chunk) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            read => read.unwrap(),
        };
        assert!(n > 0, "closed early: {}", String::from_utf8_lossy(&got));
        got.extend_from_slice(&chunk[..n]);
    }
}

#[test]
fn idle_keep_alive_connections_hold_no_buffers() {
    const CLIENTS: u64 = 2000;
    let node = backend("n1").to_string();
    let args = ["--listen", "127.0.0.1:0", "--node", &node, "--admin", "", "--threads", "1"];
    let (child, addr) = start(&args);
    for _ in 0..20 {
        get_keep_alive(&mut TcpStream::connect(&addr).unwrap());
    }
    let before = rss_kib(child.pid());
    let mut idle = Vec::new();
    for _ in 0..CLIENTS {
        let mut stream = TcpStream::connect(&addr).unwrap();
        stream.set_read_timeout(Some(WAIT)).unwrap();
        get_keep_alive(&mut stream);
        idle.push(stream);
    }
    let per_client = (rss_kib(child.pid()).saturating_sub(before)) * 1024 / CLIENTS;
    // Buffers held per connection made this about 75 KB; without them it is a few.
    assert!(per_client < 16 * 1024, "{per_client} bytes per idle connection");
    drop(idle);
    child.signal("TERM");
    assert!(wait_exit(&child).success());
}

/// The router tests' certificate files.
fn tls_file(name: &str) -> String {
    format!("{}/../router/tests/tls/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// One GET over TLS to `addr` for `localhost`, trusting only the test CA `ca`: the
/// response, or the handshake's error.
fn get_tls(addr: &str, ca: &str) -> Result<String, String> {
    use rustls::pki_types::pem::PemObject;
    use std::io::Read;
    let mut roots = rustls::RootCertStore::empty();
    roots.add(rustls::pki_types::CertificateDer::from_pem_file(tls_file(ca)).unwrap()).unwrap();
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
    let session = rustls::ClientConnection::new(std::sync::Arc::new(config), name).unwrap();
    let tcp = TcpStream::connect(addr).unwrap();
    tcp.set_read_timeout(Some(WAIT)).unwrap();
    let mut tls = rustls::StreamOwned::new(session, tcp);
    let request = "GET /tls HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
    tls.write_all(request.as_bytes()).map_err(|e| e.to_string())?;
    let mut response = String::new();
    // To the end, which the router marks with close_notify after `Connection: close`.
    tls.read_to_string(&mut response).map_err(|e| e.to_string())?;
    Ok(response)
}

#[test]
fn serves_https_beside_http_and_takes_a_renewed_certificate_on_sighup() {
    let node = backend("n1").to_string();
    let dir = TempDir::new("route-cli-tls");
    let (cert, key) = (dir.0.join("cert.pem"), dir.0.join("key.pem"));
    std::fs::copy(tls_file("localhost.pem"), &cert).unwrap();
    std::fs::copy(tls_file("localhost.key"), &key).unwrap();
    let (cert, key) = (cert.to_str().unwrap(), key.to_str().unwrap());
    let args = ["--listen", "127.0.0.1:0", "--node", &node, "--admin", "", "--threads", "1"];
    let tls = ["--tls-listen", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", key];
    let (child, addr) = start(&[&args[..], &tls[..]].concat());
    let line = child.stderr.recv_timeout(WAIT).expect("the TLS listener's line");
    let event: serde_json::Value = serde_json::from_str(&line).expect(&line);
    assert_eq!(event["msg"], "tls listening", "{line}");
    let tls_addr = event["addr"].as_str().unwrap().to_string();

    let reply = get_tls(&tls_addr, "first-ca.pem").unwrap();
    assert!(
        reply.starts_with("HTTP/1.1 200 OK\r\n") && reply.ends_with("hello from n1"),
        "{reply}"
    );
    assert!(get(&addr, "/plain").ends_with("hello from n1"), "plain HTTP goes on beside it");

    std::fs::copy(tls_file("renewed.pem"), cert).unwrap();
    std::fs::copy(tls_file("renewed.key"), key).unwrap();
    child.signal("HUP");
    let line = child.stderr.recv_timeout(WAIT).expect("a reload event");
    assert!(line.contains("config reloaded"), "{line}");
    assert!(get_tls(&tls_addr, "second-ca.pem").unwrap().ends_with("hello from n1"));
    assert!(get_tls(&tls_addr, "first-ca.pem").is_err(), "the old certificate is gone");
    child.signal("TERM");
    assert!(wait_exit(&child).success());
}

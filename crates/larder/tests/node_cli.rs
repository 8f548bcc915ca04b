//! `larder node` as a program: it serves, and SIGTERM makes it exit cleanly.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

mod common;

const WAIT: Duration = Duration::from_secs(20);

#[test]
fn serves_then_exits_on_sigterm() {
    let root = std::env::temp_dir().join(format!("larder-node-cli-{}", std::process::id()));
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("a.txt"), b"cli ok\n").unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_larder"))
        .args(["node", "--listen", "127.0.0.1:0", "--docroot"])
        .arg(&root)
        .args(["--dyn-iterations", "1000", "--threads", "1"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The node prints its bound address on stderr; read it on a thread, wait bounded.
    let stderr = child.stderr.take().unwrap();
    let rx = common::lines(stderr);
    let line = rx.recv_timeout(WAIT).expect("no start-up line");
    let addr = line.split("http://").nth(1).and_then(|s| s.split_whitespace().next()).unwrap();

    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(WAIT)).unwrap();
    s.write_all(b"GET /a.txt HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n").unwrap();
    let mut resp = String::new();
    s.read_to_string(&mut resp).unwrap();
    assert!(resp.starts_with("HTTP/1.1 200 OK\r\n"), "{resp}");
    assert!(resp.ends_with("\r\n\r\ncli ok\n"), "{resp}");

    let term = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(term.success());
    let (done_tx, done_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = done_tx.send(child.wait());
    });
    let status = done_rx.recv_timeout(WAIT).expect("node did not exit on SIGTERM").unwrap();
    assert!(status.success(), "{status}");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn help_explains_the_flags() {
    let out = Command::new(env!("CARGO_BIN_EXE_larder")).args(["node", "--help"]).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    for flag in
        ["--docroot", "--listen", "--cache-mb", "--direct-io", "--threads", "--header-timeout-ms"]
    {
        assert!(text.contains(flag), "{flag} missing from --help");
    }
}

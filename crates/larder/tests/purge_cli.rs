//! `larder purge` as a program: the request it sends a router, what it prints of the
//! answer, its exit status, and clear errors on bad input.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::process::{Command, Output};
use std::sync::mpsc;
use std::time::Duration;

use testkit::Spawned;

/// A one-shot router on 127.0.0.1:0 answering `status` and `body` to the first request;
/// the request's head lines come back on the channel.
fn fake_router(status: &'static str, body: &'static str) -> (String, mpsc::Receiver<Vec<String>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut lines = Vec::new();
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                break;
            }
            lines.push(line.trim_end().to_string());
        }
        let answer = format!(
            "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let mut writer = stream;
        writer.write_all(answer.as_bytes()).unwrap();
        let _ = tx.send(lines);
    });
    (addr, rx)
}

fn larder_purge(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_larder")).arg("purge").args(args).output().unwrap()
}

#[test]
fn sends_purge_and_prints_the_answer() {
    let (addr, seen) = fake_router("200 OK", "purged on 2 of 3 nodes\n");
    let out = larder_purge(&[&format!("http://{addr}/static/*"), "--soft"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "purged on 2 of 3 nodes\n");
    let lines = seen.recv().unwrap();
    assert_eq!(lines[0], "PURGE /static/* HTTP/1.1");
    assert!(lines.contains(&"X-Larder-Purge: soft".to_string()), "{lines:?}");

    let (addr, seen) = fake_router("200 OK", "purged on 0 of 1 nodes\n");
    let out = larder_purge(&[&format!("http://{addr}/a?b=1"), "--prefix"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(seen.recv().unwrap()[0], "PURGE /a?b=1* HTTP/1.1");
}

#[test]
fn a_refusal_or_bad_input_is_a_clear_error() {
    let (addr, _seen) = fake_router("403 Forbidden", "127.0.0.1 may not purge (purge_from)\n");
    let out = larder_purge(&[&format!("http://{addr}/a")]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("answered 403"), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("may not purge"), "{out:?}");

    for bad in ["https://h/a", "http://h", "127.0.0.1:1/a", "http:///a"] {
        let out = larder_purge(&[bad]);
        assert_eq!(out.status.code(), Some(1), "{bad}: {out:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("http://HOST"), "{bad}: {out:?}");
    }
    let closed = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let out = larder_purge(&[&format!("http://{closed}/a")]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("purging at"), "{out:?}");

    let help = larder_purge(&["--help"]);
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains("purge_from") && help.contains("--soft"), "{help}");
}

/// A node that answers every invalidation "dropped" (its request lines come back on the
/// channel) and anything else 200, one request per connection.
fn fake_node() -> (String, mpsc::Receiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming().map_while(Result::ok) {
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut first = String::new();
            let mut line = String::new();
            while reader.read_line(&mut line).unwrap_or(0) > 0 && line != "\r\n" {
                if first.is_empty() {
                    first = line.trim_end().to_string();
                }
                line.clear();
            }
            let body = if first.contains(" /.larder/invalidate?") { "dropped\n" } else { "ok" };
            let answer = format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let mut writer = stream;
            let _ = writer.write_all(answer.as_bytes());
            let _ = tx.send(first);
        }
    });
    (addr, rx)
}

#[test]
fn purges_through_a_real_router() {
    let (node, seen) = fake_node();
    let args = ["route", "--listen", "127.0.0.1:0", "--node", &node, "--admin", ""];
    let router = Spawned::start(Command::new(env!("CARGO_BIN_EXE_larder")).args(args));
    let wait = Duration::from_secs(20);
    let line = router.stderr.recv_timeout(wait).expect("no start-up line");
    let event: serde_json::Value = serde_json::from_str(&line).expect(&line);
    assert_eq!(event["msg"], "listening", "{line}");
    let addr = event["addr"].as_str().unwrap().to_string();

    let out = larder_purge(&[&format!("http://{addr}/p/*"), "--soft"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "purged on 1 of 1 nodes\n");
    let asked = seen.iter().find(|l| l.contains("invalidate")).expect("the node was asked");
    let site = addr.replace(':', "%3A");
    let want =
        format!("POST /.larder/invalidate?target=/p/&mode=soft&scope=prefix&site={site} HTTP/1.1");
    assert_eq!(asked, want, "the site is the purge's Host");

    // With --site, the purge names that site for nodes that keep one object per site.
    let out = larder_purge(&[&format!("http://{addr}/q"), "--site", "Shop.example"]);
    assert!(out.status.success(), "{out:?}");
    let asked = seen.iter().find(|l| l.contains("invalidate")).expect("the node was asked");
    assert_eq!(asked, "POST /.larder/invalidate?target=/q&site=Shop.example HTTP/1.1");
    let out = larder_purge(&[&format!("http://{addr}/q"), "--site", "a b"]);
    assert!(!out.status.success(), "a bad --site is refused");
    router.kill();
}

//! A node on 127.0.0.1:0 in a thread of its own, a docroot made for the test, and a small
//! blocking HTTP client with bounded waits.

#![allow(dead_code)] // each test file uses a different part of this module

pub mod origin;

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::thread::JoinHandle;
use std::time::Duration;

pub use testkit::{Response, TempDir};

/// Every blocking read in a test gives up after this long instead of hanging.
pub const WAIT: Duration = Duration::from_secs(20);

pub const SMALL: &[u8] = b"hello, larder\n";
pub const SECRET: &str = "TOP-SECRET-OUTSIDE-ROOT";

pub fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len).map(|i| (i as u32 * 31 + u32::from(seed)) as u8).collect()
}

/// root/ (served) and outside/ (must never be reachable) inside one scratch dir.
pub fn make_docroot(scratch: &Path) -> PathBuf {
    let root = scratch.join("root");
    let outside = scratch.join("outside");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::create_dir_all(root.join("emptydir")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    let w = |p: &Path, b: &[u8]| std::fs::write(p, b).unwrap();
    w(&root.join("index.html"), b"<h1>home</h1>\n");
    w(&root.join("small.txt"), SMALL);
    w(&root.join("style.css"), b"body{}\n");
    w(&root.join("pic.png"), &pattern(300, 1));
    w(&root.join("noext"), b"x");
    w(&root.join("empty.txt"), b"");
    w(&root.join("data6k.bin"), &pattern(6 * 1024, 2));
    w(&root.join("big.bin"), &pattern(600 * 1024, 3));
    w(&root.join("sub/index.html"), b"<p>sub</p>\n");
    w(&root.join("sub/page.html"), b"<p>page</p>\n");
    w(&root.join("..."), b"three dots\n");
    w(&outside.join("secret.txt"), SECRET.as_bytes());
    std::os::unix::fs::symlink(&outside, root.join("link-out")).unwrap();
    std::os::unix::fs::symlink(outside.join("secret.txt"), root.join("link-secret")).unwrap();
    std::os::unix::fs::symlink(root.join("small.txt"), root.join("link-in")).unwrap();
    root
}

/// A running node; shut down (gracefully) on drop.
pub struct TestNode {
    pub addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<Result<(), node::NodeError>>>,
    pub scratch: TempDir,
    pub root: PathBuf,
}

impl TestNode {
    /// Start a node over a fresh docroot; `tune` adjusts the test defaults.
    pub fn start(tune: impl FnOnce(&mut node::Config)) -> TestNode {
        TestNode::start_knowing_addr(|cfg, _| tune(cfg))
    }

    /// [`TestNode::start`], `tune` told the address the node will listen on.
    pub fn start_knowing_addr(tune: impl FnOnce(&mut node::Config, SocketAddr)) -> TestNode {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        TestNode::start_on(listener, tune)
    }

    /// [`TestNode::start_knowing_addr`] on a listener bound already (so that nodes can be
    /// told each other's addresses before any starts).
    pub fn start_on(
        listener: std::net::TcpListener,
        tune: impl FnOnce(&mut node::Config, SocketAddr),
    ) -> TestNode {
        let scratch = TempDir::new("node-srv");
        let root = make_docroot(&scratch.0);
        let mut cfg = node::Config::new(&root);
        cfg.disk_threads = 2;
        cfg.max_cached_file_bytes = 64 * 1024;
        cfg.header_timeout = Duration::from_secs(5);
        cfg.shutdown_grace = Duration::from_secs(10);
        cfg.dynamic = Some(node::DynamicConfig {
            mount: "app".into(),
            iterations: 10_000,
            view_bytes: 16 * 1024,
            doc_bytes: 3000,
        });
        let addr = listener.local_addr().unwrap();
        tune(&mut cfg, addr);
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            node::serve(listener, cfg, async move {
                let _ = rx.await;
            })
        });
        TestNode { addr, stop: Some(tx), thread: Some(thread), scratch, root }
    }

    pub fn client(&self) -> Client {
        Client::connect(self.addr)
    }

    /// Ask for a graceful stop and wait for `serve` to return.
    pub fn stop(&mut self) -> Result<(), node::NodeError> {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        match self.thread.take() {
            Some(t) => t.join().expect("node thread panicked"),
            None => Ok(()),
        }
    }
}

impl Drop for TestNode {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

/// A blocking client that keeps unread bytes, so pipelined answers can be read one by one.
pub struct Client {
    pub stream: TcpStream,
    buf: Vec<u8>,
}

impl Client {
    pub fn connect(addr: SocketAddr) -> Client {
        let stream = TcpStream::connect(addr).unwrap();
        stream.set_read_timeout(Some(WAIT)).unwrap();
        stream.set_write_timeout(Some(WAIT)).unwrap();
        Client { stream, buf: Vec::new() }
    }

    pub fn send(&mut self, raw: &[u8]) {
        self.stream.write_all(raw).unwrap();
    }

    pub fn get(&mut self, path: &str) -> Response {
        self.send(format!("GET {path} HTTP/1.1\r\nHost: t\r\n\r\n").as_bytes());
        self.response(false)
    }

    fn fill(&mut self) -> usize {
        let mut chunk = [0u8; 16 * 1024];
        let n = self.stream.read(&mut chunk).expect("read timed out or failed");
        self.buf.extend_from_slice(&chunk[..n]);
        n
    }

    /// Read one response; `head_request` says it answers a HEAD (no body follows).
    pub fn response(&mut self, head_request: bool) -> Response {
        loop {
            if let Some((resp, n)) = Response::parse_head(&self.buf).expect("bad response") {
                let status = resp.status;
                let len = if head_request || status == 204 || status == 304 || status < 200 {
                    0
                } else {
                    resp.header("content-length").expect("no Content-Length").parse().unwrap()
                };
                while self.buf.len() < n + len {
                    assert!(self.fill() > 0, "connection closed inside a body");
                }
                let body = self.buf[n..n + len].to_vec();
                self.buf.drain(..n + len);
                return Response { body, ..resp };
            }
            assert!(self.fill() > 0, "connection closed before a response: {:?}", self.buf);
        }
    }

    /// True when the server has closed the connection (and nothing is left unread).
    pub fn closed(&mut self) -> bool {
        if !self.buf.is_empty() {
            return false;
        }
        match self.stream.read(&mut [0u8; 64]) {
            Ok(n) => n == 0,
            Err(e) => !matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut),
        }
    }
}

/// Send raw bytes on a fresh connection and read one answer.
pub fn raw(addr: SocketAddr, request: &[u8]) -> Response {
    let mut c = Client::connect(addr);
    c.send(request);
    c.response(false)
}

//! A tiny HTTP/1.1 server for tests, bound to 127.0.0.1:0, that can be told to fail
//! requests, pause accepting, stall a response, name nodes and routers and send chunked
//! bodies. It
//! counts requests, connections and the bytes it wrote, so tests can check exactness.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio::time::Instant;

/// How the server behaves.
#[derive(Clone, Debug, Default)]
pub struct Behaviour {
    pub body_len: usize,
    pub chunked: bool,
    /// Names for `X-Larder-Node`, used round robin per request.
    pub nodes: Vec<String>,
    /// Names for `X-Larder-Router`, one per connection in turn (a connection stays with
    /// the router that accepted it).
    pub routers: Vec<String>,
    /// Answer 503 while more than this many connections are open.
    pub fail_above_open: Option<usize>,
    /// Hold the first request's response this long.
    pub stall_first: Option<Duration>,
    /// After this many accepts, stop accepting for the duration.
    pub accept_pause: Option<(u64, Duration)>,
    /// Listen backlog (default 1024).
    pub backlog: Option<u32>,
    /// Answer as HTTP/1.0 without Content-Length, delimiting the body by closing.
    pub until_close: bool,
}

/// One request as the server saw it.
#[derive(Clone, Debug)]
pub struct Arrival {
    pub path: String,
    pub at: Instant,
}

struct State {
    behaviour: Behaviour,
    open: AtomicUsize,
    requests: AtomicU64,
    accepted: AtomicU64,
    bytes_written: AtomicU64,
    arrivals: Mutex<Vec<Arrival>>,
}

pub struct TestServer {
    pub addr: SocketAddr,
    state: Arc<State>,
}

impl TestServer {
    pub async fn start(behaviour: Behaviour) -> TestServer {
        let socket = TcpSocket::new_v4().unwrap();
        socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let listener = socket.listen(behaviour.backlog.unwrap_or(1024)).unwrap();
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(State {
            behaviour,
            open: AtomicUsize::new(0),
            requests: AtomicU64::new(0),
            accepted: AtomicU64::new(0),
            bytes_written: AtomicU64::new(0),
            arrivals: Mutex::new(Vec::new()),
        });
        let accept_state = state.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let n = accept_state.accepted.fetch_add(1, Ordering::SeqCst) + 1;
                tokio::spawn(serve(stream, accept_state.clone(), n));
                if let Some((after, pause)) = accept_state.behaviour.accept_pause {
                    if n == after {
                        tokio::time::sleep(pause).await;
                    }
                }
            }
        });
        TestServer { addr, state }
    }

    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    pub fn requests(&self) -> u64 {
        self.state.requests.load(Ordering::SeqCst)
    }

    pub fn connections(&self) -> u64 {
        self.state.accepted.load(Ordering::SeqCst)
    }

    pub fn bytes_written(&self) -> u64 {
        self.state.bytes_written.load(Ordering::SeqCst)
    }

    pub fn arrivals(&self) -> Vec<Arrival> {
        self.state.arrivals.lock().unwrap().clone()
    }
}

/// Decrements the open-connection count when a connection ends.
struct OpenGuard(Arc<State>);

impl Drop for OpenGuard {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Serves connection number `connection` (from 1).
async fn serve(mut stream: TcpStream, state: Arc<State>, connection: u64) {
    state.open.fetch_add(1, Ordering::SeqCst);
    let _guard = OpenGuard(state.clone());
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        loop {
            let mut headers = [httparse::EMPTY_HEADER; 32];
            let mut req = httparse::Request::new(&mut headers);
            let Ok(httparse::Status::Complete(len)) = req.parse(&buf) else { break };
            let path = req.path.unwrap_or("/").to_string();
            let close = req.headers.iter().any(|h| {
                h.name.eq_ignore_ascii_case("connection") && h.value.eq_ignore_ascii_case(b"close")
            });
            buf.drain(..len);
            let response = respond(&state, path, connection).await;
            // Counted before writing: the client may finish its run as soon as it has read.
            state.bytes_written.fetch_add(response.len() as u64, Ordering::SeqCst);
            if stream.write_all(&response).await.is_err() {
                return;
            }
            if close || state.behaviour.until_close {
                return;
            }
        }
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

async fn respond(state: &State, path: String, connection: u64) -> Vec<u8> {
    let b = &state.behaviour;
    let index = state.requests.fetch_add(1, Ordering::SeqCst);
    state.arrivals.lock().unwrap().push(Arrival { path: path.clone(), at: Instant::now() });
    if index == 0 {
        if let Some(stall) = b.stall_first {
            tokio::time::sleep(stall).await;
        }
    }
    let overloaded =
        b.fail_above_open.is_some_and(|limit| state.open.load(Ordering::SeqCst) > limit);
    let status = if overloaded || path.starts_with("/broken") {
        "503 Service Unavailable"
    } else if path.starts_with("/missing") {
        "404 Not Found"
    } else {
        "200 OK"
    };
    let mut head = format!("HTTP/1.1 {status}\r\n");
    if !b.nodes.is_empty() {
        head.push_str(&format!("X-Larder-Node: {}\r\n", b.nodes[index as usize % b.nodes.len()]));
    }
    if !b.routers.is_empty() {
        let router = &b.routers[(connection - 1) as usize % b.routers.len()];
        head.push_str(&format!("X-Larder-Router: {router}\r\n"));
    }
    let body = vec![b'x'; b.body_len];
    let mut out = Vec::new();
    if b.until_close {
        out.extend_from_slice(b"HTTP/1.0 200 OK\r\n\r\n");
        out.extend_from_slice(&body);
    } else if b.chunked {
        head.push_str("Transfer-Encoding: chunked\r\n\r\n");
        out.extend_from_slice(head.as_bytes());
        for piece in body.chunks(100) {
            out.extend_from_slice(format!("{:x};ext=1\r\n", piece.len()).as_bytes());
            out.extend_from_slice(piece);
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"0\r\nTrailer: t\r\n\r\n");
    } else {
        head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
        out.extend_from_slice(head.as_bytes());
        out.extend_from_slice(&body);
    }
    out
}

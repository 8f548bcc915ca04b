//! Test back-ends and a test client, all on 127.0.0.1:0.
//!
//! A [`Backend`] records every complete request it receives, answers with its own name,
//! can hold responses until released (to build up in-flight load), can serve
//! `/.larder/load`, and can be killed (listener and every connection dropped at once).

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http1::{BodyFraming, ChunkEvent, ChunkedDecoder};
use router::{NodeConfig, Router, RouterConfig, RouterHandle};
pub use testkit::Response;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot, Semaphore};
use tokio::task::JoinSet;

/// Every wait in these tests is bounded by this; hitting it is a failure, not a delay.
pub const LIMIT: Duration = Duration::from_secs(20);

/// One request as a back-end saw it, complete with its body.
#[derive(Clone, Debug)]
pub struct Seen {
    pub method: String,
    pub target: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        testkit::header(&self.headers, name)
    }
}

#[derive(Default)]
struct Shared {
    seen: Mutex<Vec<Seen>>,
    connections: Mutex<u64>,
}

pub struct Backend {
    pub addr: SocketAddr,
    pub name: String,
    shared: Arc<Shared>,
    kill: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
    /// With a gate, each request waits for a permit before it is answered.
    gate: Option<Arc<Semaphore>>,
    arrivals: Option<tokio::sync::Mutex<mpsc::UnboundedReceiver<String>>>,
}

/// How a back-end behaves.
#[derive(Clone, Default)]
pub struct BackendOptions {
    /// Hold every response until [`Backend::release`].
    pub gated: bool,
    /// Serve `/.larder/load` with this CPU percentage.
    pub cpu_pct: Option<f64>,
    /// Speak TLS, with this server configuration.
    pub tls: Option<Arc<rustls::ServerConfig>>,
}

impl Backend {
    pub async fn start(name: &str) -> Backend {
        Self::start_with(name, BackendOptions::default()).await
    }

    pub async fn start_with(name: &str, options: BackendOptions) -> Backend {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        Self::serve(name, options, listener)
    }

    /// A back-end on a given address (a node restarted where it was).
    pub async fn start_on(name: &str, addr: SocketAddr) -> Backend {
        let listener = TcpListener::bind(addr).await.expect("the address is free again");
        Self::serve(name, BackendOptions::default(), listener)
    }

    /// A back-end on a listener the test bound (several on one port, say).
    pub fn on_listener(name: &str, listener: TcpListener) -> Backend {
        Self::serve(name, BackendOptions::default(), listener)
    }

    fn serve(name: &str, options: BackendOptions, listener: TcpListener) -> Backend {
        let addr = listener.local_addr().unwrap();
        let shared = Arc::new(Shared::default());
        let (kill, mut killed) = oneshot::channel::<()>();
        let gate = options.gated.then(|| Arc::new(Semaphore::new(0)));
        let (arrived_tx, arrived_rx) = mpsc::unbounded_channel();
        let (s, g, n) = (shared.clone(), gate.clone(), name.to_string());
        let task = tokio::spawn(async move {
            let mut conns = JoinSet::new();
            loop {
                tokio::select! {
                    accepted = listener.accept() => {
                        let Ok((stream, _)) = accepted else { continue };
                        *s.connections.lock().unwrap() += 1;
                        let (s, g, n, a) = (s.clone(), g.clone(), n.clone(), arrived_tx.clone());
                        let cpu = options.cpu_pct;
                        match options.tls.clone() {
                            None => {
                                conns.spawn(serve_backend_conn(stream, s, g, n, a, cpu));
                            }
                            Some(tls) => {
                                conns.spawn(async move {
                                    let acceptor = tokio_rustls::TlsAcceptor::from(tls);
                                    if let Ok(stream) = acceptor.accept(stream).await {
                                        serve_backend_conn(stream, s, g, n, a, cpu).await;
                                    }
                                });
                            }
                        }
                    }
                    _ = &mut killed => {
                        conns.abort_all();
                        return;
                    }
                }
            }
        });
        Backend {
            addr,
            name: name.to_string(),
            shared,
            kill: Some(kill),
            task,
            gate,
            arrivals: options.gated.then(|| tokio::sync::Mutex::new(arrived_rx)),
        }
    }

    pub fn node_config(&self) -> NodeConfig {
        NodeConfig { name: self.name.clone(), ..NodeConfig::new(self.addr) }
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.shared.seen.lock().unwrap().clone()
    }

    pub fn connections(&self) -> u64 {
        *self.shared.connections.lock().unwrap()
    }

    /// Drop the listener and every connection now, as a crashed process would.
    pub async fn kill(&mut self) {
        if let Some(k) = self.kill.take() {
            let _ = k.send(());
        }
        let _ = tokio::time::timeout(LIMIT, &mut self.task).await;
    }

    /// Wait until a gated request for some path has arrived; returns its path.
    pub async fn arrival(&self) -> String {
        let mut rx = self.arrivals.as_ref().expect("gated backend").lock().await;
        tokio::time::timeout(LIMIT, rx.recv()).await.expect("arrival in time").expect("open")
    }

    /// Let `n` held responses go.
    pub fn release(&self, n: usize) {
        self.gate.as_ref().expect("gated backend").add_permits(n);
    }
}

async fn serve_backend_conn<S: AsyncRead + AsyncWrite + Unpin>(
    mut stream: S,
    shared: Arc<Shared>,
    gate: Option<Arc<Semaphore>>,
    name: String,
    arrived: mpsc::UnboundedSender<String>,
    cpu_pct: Option<f64>,
) {
    let mut buf = Vec::new();
    loop {
        let Some(seen) = read_request(&mut stream, &mut buf).await else { return };
        if seen.target == "/.larder/load" {
            let body = format!("{{\"cpu_pct\":{},\"in_flight\":0}}", cpu_pct.unwrap_or(0.0));
            if respond(&mut stream, 200, &name, body.as_bytes(), false).await.is_err() {
                return;
            }
            continue;
        }
        let head_only = seen.method == "HEAD";
        let path = seen.target.clone();
        shared.seen.lock().unwrap().push(seen);
        if let Some(gate) = &gate {
            let _ = arrived.send(path.clone());
            let Ok(permit) = gate.acquire().await else { return };
            permit.forget();
        }
        let body = if let Some(size) = path.strip_prefix("/big/") {
            vec![b'x'; size.parse().unwrap_or(0)]
        } else if let Some(size) = path.strip_prefix("/pattern/") {
            pattern(size.parse().unwrap_or(0))
        } else {
            format!("{name} {path}").into_bytes()
        };
        if respond(&mut stream, 200, &name, &body, head_only).await.is_err() {
            return;
        }
    }
}

/// `len` bytes that differ from their neighbours (a byte lost, doubled or moved shows).
pub fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i % 251) as u8 ^ (i / 251) as u8).collect()
}

async fn respond<S: AsyncWrite + Unpin>(
    stream: &mut S,
    status: u16,
    name: &str,
    body: &[u8],
    head_only: bool,
) -> std::io::Result<()> {
    let mut out = format!(
        "HTTP/1.1 {status} OK\r\nContent-Length: {}\r\nX-Backend: {name}\r\nKeep-Alive: timeout=5\r\n\r\n",
        body.len()
    )
    .into_bytes();
    if !head_only {
        out.extend_from_slice(body);
    }
    stream.write_all(&out).await
}

/// Read one complete request (head and body); `None` at a clean or unclean end.
async fn read_request<S: AsyncRead + Unpin>(stream: &mut S, buf: &mut Vec<u8>) -> Option<Seen> {
    let limits = http1::Limits::default();
    let (head, len) = loop {
        if let Ok(Some(parsed)) = http1::parse_head(buf, &limits) {
            break parsed;
        }
        if !fill(stream, buf).await {
            return None;
        }
    };
    buf.drain(..len);
    let fields = head.headers.iter().map(|h| (h.name.as_str(), h.value.as_slice()));
    let framing = http1::framing::request_framing(fields, 1).ok()?;
    let mut body = Vec::new();
    match framing {
        BodyFraming::Empty | BodyFraming::UntilClose => {}
        BodyFraming::Length(n) => {
            while (buf.len() as u64) < n {
                if !fill(stream, buf).await {
                    return None;
                }
            }
            body.extend(buf.drain(..n as usize));
        }
        BodyFraming::Chunked => {
            let mut decoder = ChunkedDecoder::new(Default::default());
            loop {
                let (used, event) = decoder.feed(buf).ok()?;
                if let ChunkEvent::Data { start, len } = event {
                    body.extend_from_slice(&buf[start..start + len]);
                }
                buf.drain(..used);
                match event {
                    ChunkEvent::End => break,
                    ChunkEvent::NeedMore if !fill(stream, buf).await => return None,
                    _ => {}
                }
            }
        }
    }
    Some(Seen {
        method: head.method.as_str().to_string(),
        target: head.target.clone(),
        headers: head
            .headers
            .iter()
            .map(|h| (h.name.clone(), String::from_utf8_lossy(&h.value).into_owned()))
            .collect(),
        body,
    })
}

async fn fill<S: AsyncRead + Unpin>(stream: &mut S, buf: &mut Vec<u8>) -> bool {
    let mut chunk = [0u8; 16 * 1024];
    match stream.read(&mut chunk).await {
        Ok(0) | Err(_) => false,
        Ok(n) => {
            buf.extend_from_slice(&chunk[..n]);
            true
        }
    }
}

/// A router running in-process on 127.0.0.1:0 with its admin API.
pub struct RunningRouter {
    pub addr: SocketAddr,
    /// The TLS listener's address, for a router started with one.
    pub tls: Option<SocketAddr>,
    pub admin: SocketAddr,
    pub handle: RouterHandle,
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
}

impl RunningRouter {
    pub async fn start(config: RouterConfig) -> RunningRouter {
        Self::start_with(config, false).await
    }

    /// A router with a TLS listener too (its config names the certificates).
    pub async fn start_tls(config: RouterConfig) -> RunningRouter {
        Self::start_with(config, true).await
    }

    /// A router on a traffic listener the test bound (routers that name each other).
    pub async fn start_on(listener: TcpListener, config: RouterConfig) -> RunningRouter {
        Self::serve_on(listener, config, false).await
    }

    async fn start_with(config: RouterConfig, tls: bool) -> RunningRouter {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        Self::serve_on(listener, config, tls).await
    }

    async fn serve_on(listener: TcpListener, config: RouterConfig, tls: bool) -> RunningRouter {
        let admin = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let (addr, admin_addr) = (listener.local_addr().unwrap(), admin.local_addr().unwrap());
        let mut router = Router::new(config).unwrap();
        let mut tls_addr = None;
        if tls {
            let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
            tls_addr = Some(l.local_addr().unwrap());
            router = router.with_tls_listener(l);
        }
        let handle = router.handle();
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let shutdown = async {
                let _ = stopped.await;
            };
            router.serve(listener, Some(admin), shutdown).await.unwrap();
        });
        RunningRouter { addr, tls: tls_addr, admin: admin_addr, handle, stop: Some(stop), task }
    }

    /// Ask the router to drain and wait until `serve` returns.
    pub async fn stop(mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        tokio::time::timeout(LIMIT, &mut self.task).await.expect("router stops").unwrap();
    }
}

/// A router config over `backends` with policy `kind`, fast timeouts for tests.
pub fn config(backends: &[&Backend], kind: &str) -> RouterConfig {
    let mut c = RouterConfig {
        nodes: backends.iter().map(|b| b.node_config()).collect(),
        node_header: true,
        ..RouterConfig::default()
    };
    c.policy.kind = kind.parse().unwrap();
    c.timeouts.drain = Duration::from_millis(5_000);
    c
}

/// [`config`] with fast health checks on `/health` (every 50 ms) and a short slow start
/// (100 ms), for tests where nodes go away and come back.
pub fn health_checked_config(backends: &[&Backend], kind: &str) -> RouterConfig {
    let mut c = config(backends, kind);
    c.health.path = Some("/health".into());
    c.health.interval = Duration::from_millis(50);
    c.health.slow_start = Duration::from_millis(100);
    c
}

/// A keep-alive client connection.
pub struct Client {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Client {
    pub async fn connect(addr: SocketAddr) -> Client {
        let stream = tokio::time::timeout(LIMIT, TcpStream::connect(addr)).await.unwrap().unwrap();
        stream.set_nodelay(true).unwrap();
        Client { stream, buf: Vec::new() }
    }

    pub fn from_stream(stream: TcpStream) -> Client {
        Client { stream, buf: Vec::new() }
    }

    pub async fn send_raw(&mut self, raw: &[u8]) {
        self.stream.write_all(raw).await.unwrap();
    }

    /// Close the sending side: the router sees the end of the client's input.
    pub async fn finish_sending(&mut self) {
        self.stream.shutdown().await.unwrap();
    }

    /// GET `path` and read the reply.
    pub async fn get(&mut self, path: &str) -> Response {
        let raw = format!("GET {path} HTTP/1.1\r\nHost: test\r\n\r\n");
        self.send_raw(raw.as_bytes()).await;
        self.reply(false).await.expect("a reply")
    }

    /// Read one response; `None` if the connection ends first.
    pub async fn reply(&mut self, head_request: bool) -> Option<Response> {
        tokio::time::timeout(LIMIT, self.reply_inner(head_request)).await.expect("reply in time")
    }

    async fn reply_inner(&mut self, head_request: bool) -> Option<Response> {
        loop {
            if let Ok(Some((reply, len))) = Response::parse_head(&self.buf) {
                let fields = reply.headers.iter().map(|(n, v)| (n.as_str(), v.as_bytes()));
                let framing =
                    http1::framing::response_framing(fields, reply.status, head_request).unwrap();
                self.buf.drain(..len);
                let body = self.body(framing).await?;
                if (100..200).contains(&reply.status) {
                    continue;
                }
                return Some(Response { body, ..reply });
            }
            if !fill(&mut self.stream, &mut self.buf).await {
                return None;
            }
        }
    }

    async fn body(&mut self, framing: BodyFraming) -> Option<Vec<u8>> {
        match framing {
            BodyFraming::Empty => Some(Vec::new()),
            BodyFraming::Length(n) => {
                while (self.buf.len() as u64) < n {
                    if !fill(&mut self.stream, &mut self.buf).await {
                        return None;
                    }
                }
                Some(self.buf.drain(..n as usize).collect())
            }
            BodyFraming::UntilClose => {
                while fill(&mut self.stream, &mut self.buf).await {}
                Some(std::mem::take(&mut self.buf))
            }
            BodyFraming::Chunked => {
                let mut decoder = ChunkedDecoder::new(Default::default());
                let mut body = Vec::new();
                loop {
                    let (used, event) = decoder.feed(&self.buf).ok()?;
                    if let ChunkEvent::Data { start, len } = event {
                        body.extend_from_slice(&self.buf[start..start + len]);
                    }
                    self.buf.drain(..used);
                    match event {
                        ChunkEvent::End => return Some(body),
                        ChunkEvent::NeedMore if !fill(&mut self.stream, &mut self.buf).await => {
                            return None
                        }
                        _ => {}
                    }
                }
            }
        }
    }

    /// Read exactly `out.len()` bytes (an interim response, say).
    pub async fn read_exact(&mut self, out: &mut [u8]) {
        let wait = async {
            while self.buf.len() < out.len() {
                assert!(fill(&mut self.stream, &mut self.buf).await, "connection ended");
            }
        };
        tokio::time::timeout(LIMIT, wait).await.expect("bytes in time");
        out.copy_from_slice(&self.buf[..out.len()]);
        self.buf.drain(..out.len());
    }

    /// True once the router has closed this connection (reads end); bounded.
    pub async fn closed(&mut self) -> bool {
        let mut chunk = [0u8; 1024];
        loop {
            match tokio::time::timeout(LIMIT, self.stream.read(&mut chunk)).await {
                Ok(Ok(0)) | Ok(Err(_)) => return true,
                Ok(Ok(_)) => continue,
                Err(_) => return false,
            }
        }
    }
}

/// GET an admin path (one request per connection) and parse the JSON body.
pub async fn admin_json(admin: SocketAddr, path: &str) -> serde_json::Value {
    let reply = admin_get(admin, path).await;
    serde_json::from_slice(&reply.body).unwrap()
}

/// Poll `/stats` until `check` holds; bounded by [`LIMIT`].
pub async fn stats_until(
    router: &RunningRouter,
    check: impl Fn(&serde_json::Value) -> bool,
) -> bool {
    let started = tokio::time::Instant::now();
    while started.elapsed() < LIMIT {
        if check(&admin_json(router.admin, "/stats").await) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

pub async fn admin_get(admin: SocketAddr, path: &str) -> Response {
    let mut c = Client::connect(admin).await;
    c.get(path).await
}

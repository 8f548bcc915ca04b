//! A scriptable origin web server on 127.0.0.1:0 for the tests of caching nodes: each path
//! answers as the test set it (status, fields, body, length or chunked, conditional 304
//! on a matching `If-None-Match`), stays silent, or closes; it counts the requests per path,
//! keeps the last request's method, fields and body (Content-Length or chunked, decoded),
//! and can hold every answer until the test releases it.
//! One thread per connection, blocking I/O; every wait is bounded.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Longest any origin thread waits for anything (a held answer, a silent route).
const LIMIT: Duration = Duration::from_secs(30);

/// How the origin answers one path.
#[derive(Clone, Debug)]
pub enum Route {
    Respond {
        status: u16,
        fields: Vec<(String, String)>,
        body: Vec<u8>,
        chunked: bool,
        /// Send the head and this many body bytes, then wait for the release before the rest.
        pause_at: Option<usize>,
        /// Response fields copied from the request: `(response name, request name)`, the
        /// field sent only when the request carries it (a per-client `Set-Cookie`, say).
        echo: Vec<(String, String)>,
        /// Interim responses sent before this one: status and fields (103 Early Hints).
        interim: Vec<(u16, Vec<(String, String)>)>,
        /// Answer a single `bytes=a-b` Range with 206 (unless an `If-Range` names
        /// another ETag), as file servers do.
        ranges: bool,
    },
    /// Read the request, never answer (until the origin stops).
    Silent,
    /// Read the request and close the connection without a byte.
    Close,
}

impl Route {
    /// A 200 with these fields and body, framed by Content-Length.
    pub fn ok(fields: &[(&str, &str)], body: &[u8]) -> Route {
        Route::Respond {
            status: 200,
            fields: owned(fields),
            body: body.to_vec(),
            chunked: false,
            pause_at: None,
            echo: Vec::new(),
            interim: Vec::new(),
            ranges: false,
        }
    }

    /// The same, answering a single `bytes=a-b` (or `a-`) Range with 206 and its
    /// `Content-Range` when there is no `If-Range` or it names the route's ETag.
    pub fn ranges(mut self) -> Route {
        if let Route::Respond { ranges, .. } = &mut self {
            *ranges = true;
        }
        self
    }

    /// The same with another status.
    pub fn status(mut self, code: u16) -> Route {
        if let Route::Respond { status, .. } = &mut self {
            *status = code;
        }
        self
    }

    /// The same framed with the chunked coding.
    pub fn chunked(mut self) -> Route {
        if let Route::Respond { chunked, .. } = &mut self {
            *chunked = true;
        }
        self
    }

    /// The same, sending the head and `n` body bytes at once and the rest only once the
    /// origin is released ([`TestOrigin::hold`] applies mid-body instead of before the head).
    pub fn pause_at(mut self, n: usize) -> Route {
        if let Route::Respond { pause_at, .. } = &mut self {
            *pause_at = Some(n);
        }
        self
    }

    /// The same, answering each request that carries the field `request` with a field
    /// `response` of the same value (also on a 304): a per-client answer such as the
    /// `Set-Cookie` of a login, whose owner the test can tell.
    pub fn echo(mut self, request: &str, response: &str) -> Route {
        if let Route::Respond { echo, .. } = &mut self {
            echo.push((response.to_string(), request.to_string()));
        }
        self
    }

    /// The same, preceded by an interim response of `code` with `fields` (103 Early Hints).
    pub fn interim(mut self, code: u16, fields: &[(&str, &str)]) -> Route {
        if let Route::Respond { interim, .. } = &mut self {
            interim.push((code, owned(fields)));
        }
        self
    }
}

fn owned(fields: &[(&str, &str)]) -> Vec<(String, String)> {
    fields.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect()
}

#[derive(Default)]
struct State {
    routes: HashMap<String, Route>,
    hits: HashMap<String, u64>,
    last: HashMap<String, Vec<(String, String)>>,
    /// The last request's method and decoded body, by path.
    last_body: HashMap<String, (String, Vec<u8>)>,
    held: bool,
}

struct Shared {
    state: Mutex<State>,
    changed: Condvar,
    stop: AtomicBool,
    /// Connections accepted so far.
    connections: AtomicU64,
    /// Close each connection after one answer, without saying so in the answer (as an
    /// origin does when it drops idle keep-alive connections).
    one_answer_per_connection: AtomicBool,
}

/// The running origin; stopped on drop.
pub struct TestOrigin {
    pub addr: SocketAddr,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

impl TestOrigin {
    pub fn start() -> TestOrigin {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the test origin");
        let addr = listener.local_addr().expect("origin address");
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
            stop: AtomicBool::new(false),
            connections: AtomicU64::new(0),
            one_answer_per_connection: AtomicBool::new(false),
        });
        let s = Arc::clone(&shared);
        let accept = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if s.stop.load(Ordering::SeqCst) {
                    break;
                }
                if let Ok(conn) = conn {
                    s.connections.fetch_add(1, Ordering::SeqCst);
                    let s = Arc::clone(&s);
                    std::thread::spawn(move || serve(&s, conn));
                }
            }
        });
        TestOrigin { addr, shared, accept: Some(accept) }
    }

    /// `http://127.0.0.1:PORT`
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn set(&self, path: &str, route: Route) {
        self.shared.state.lock().unwrap().routes.insert(path.to_string(), route);
    }

    /// Requests received for `path` so far.
    pub fn hits(&self, path: &str) -> u64 {
        self.shared.state.lock().unwrap().hits.get(path).copied().unwrap_or(0)
    }

    /// The fields of the last request for `path`.
    pub fn last_request(&self, path: &str) -> Vec<(String, String)> {
        self.shared.state.lock().unwrap().last.get(path).cloned().unwrap_or_default()
    }

    /// The method and (decoded) body of the last request for `path`.
    pub fn last_body(&self, path: &str) -> Option<(String, Vec<u8>)> {
        self.shared.state.lock().unwrap().last_body.get(path).cloned()
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> u64 {
        self.shared.connections.load(Ordering::SeqCst)
    }

    /// From now on, close each connection after its first answer without announcing it.
    pub fn close_after_each_answer(&self) {
        self.shared.one_answer_per_connection.store(true, Ordering::SeqCst);
    }

    /// Hold every answer until [`TestOrigin::release`] (requests are still counted).
    pub fn hold(&self) {
        self.shared.state.lock().unwrap().held = true;
    }

    pub fn release(&self) {
        self.shared.state.lock().unwrap().held = false;
        self.shared.changed.notify_all();
    }
}

impl Drop for TestOrigin {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        self.shared.changed.notify_all();
        let _ = TcpStream::connect(self.addr);
        if let Some(t) = self.accept.take() {
            let _ = t.join();
        }
    }
}

/// Answer the requests of one connection until it closes.
fn serve(s: &Shared, mut conn: TcpStream) {
    let _ = conn.set_read_timeout(Some(LIMIT));
    let mut buf = Vec::new();
    loop {
        let (method, path, fields, used) = loop {
            let mut headers = [httparse::EMPTY_HEADER; 64];
            let mut req = httparse::Request::new(&mut headers);
            match req.parse(&buf) {
                Ok(httparse::Status::Complete(n)) => {
                    let fields: Vec<(String, String)> = req
                        .headers
                        .iter()
                        .map(|h| (h.name.to_string(), String::from_utf8_lossy(h.value).into()))
                        .collect();
                    let method = req.method.unwrap_or("").to_string();
                    break (method, req.path.unwrap_or("").to_string(), fields, n);
                }
                Ok(httparse::Status::Partial) => {}
                Err(_) => return,
            }
            let mut chunk = [0u8; 4096];
            match conn.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        buf.drain(..used);
        let Some(body) = read_body(&mut conn, &mut buf, &fields) else {
            return;
        };
        if s.stop.load(Ordering::SeqCst) {
            return;
        }
        // Decided when the request arrives: a test that changes the setting after reading
        // this answer must not change what happens to this connection.
        let last = s.one_answer_per_connection.load(Ordering::SeqCst);
        let route = {
            let mut st = s.state.lock().unwrap();
            *st.hits.entry(path.clone()).or_default() += 1;
            st.last.insert(path.clone(), fields.clone());
            st.last_body.insert(path.clone(), (method, body));
            let route = st.routes.get(&path).cloned();
            if !matches!(route, Some(Route::Respond { pause_at: Some(_), .. })) {
                st = wait_for_release(s, st);
            }
            drop(st);
            route
        };
        let answer = match route {
            None => b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n".to_vec(),
            Some(Route::Close) => return,
            Some(Route::Silent) => {
                let st = s.state.lock().unwrap();
                let _ = s.changed.wait_timeout_while(st, LIMIT, |_| !s.stop.load(Ordering::SeqCst));
                return;
            }
            Some(Route::Respond {
                status,
                fields: mut rf,
                body,
                chunked,
                pause_at,
                echo,
                interim,
                ranges,
            }) => {
                for (response, request) in &echo {
                    if let Some(v) = crate::header(&fields, request) {
                        rf.push((response.clone(), v.to_string()));
                    }
                }
                for (code, fields) in &interim {
                    let mut head = format!("HTTP/1.1 {code} Interim\r\n");
                    for (name, value) in fields {
                        head.push_str(&format!("{name}: {value}\r\n"));
                    }
                    head.push_str("\r\n");
                    if conn.write_all(head.as_bytes()).is_err() {
                        return;
                    }
                }
                let (status, body) = match ranged(ranges, &rf, &body, &fields) {
                    Some((first, last)) => {
                        let range = format!("bytes {first}-{last}/{}", body.len());
                        rf.push(("Content-Range".to_string(), range));
                        (206, body[first..=last].to_vec())
                    }
                    None => (status, body),
                };
                let answer = render(status, &rf, &body, chunked, &fields);
                if let Some(n) = pause_at {
                    let at = (answer.len() - body.len() + n).min(answer.len());
                    if conn.write_all(&answer[..at]).is_err() {
                        return;
                    }
                    drop(wait_for_release(s, s.state.lock().unwrap()));
                    answer[at..].to_vec()
                } else {
                    answer
                }
            }
        };
        if conn.write_all(&answer).is_err() || last {
            return;
        }
    }
}

/// The request body after the head, framed by Content-Length or chunked, decoded; `None`
/// when the connection broke or the body is malformed. Bytes past it stay in `buf`.
fn read_body(
    conn: &mut TcpStream,
    buf: &mut Vec<u8>,
    fields: &[(String, String)],
) -> Option<Vec<u8>> {
    let mut more = |buf: &mut Vec<u8>| {
        let mut chunk = [0u8; 64 * 1024];
        match conn.read(&mut chunk) {
            Ok(0) | Err(_) => false,
            Ok(n) => {
                buf.extend_from_slice(&chunk[..n]);
                true
            }
        }
    };
    let chunked = crate::header(fields, "transfer-encoding")
        .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
    if !chunked {
        let len: usize =
            crate::header(fields, "content-length").map_or(Some(0), |v| v.trim().parse().ok())?;
        while buf.len() < len {
            if !more(buf) {
                return None;
            }
        }
        return Some(buf.drain(..len).collect());
    }
    let mut body = Vec::new();
    loop {
        let line_end = loop {
            match buf.windows(2).position(|w| w == b"\r\n") {
                Some(i) => break i,
                None if more(buf) => {}
                None => return None,
            }
        };
        let size_text = String::from_utf8_lossy(&buf[..line_end]).to_string();
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        buf.drain(..line_end + 2);
        if size == 0 {
            // No trailers are sent by the node: the empty line ends the body.
            while buf.len() < 2 {
                if !more(buf) {
                    return None;
                }
            }
            buf.drain(..2);
            return Some(body);
        }
        while buf.len() < size + 2 {
            if !more(buf) {
                return None;
            }
        }
        body.extend_from_slice(&buf[..size]);
        buf.drain(..size + 2);
    }
}

/// Wait (bounded) while answers are held.
fn wait_for_release<'a>(
    s: &'a Shared,
    mut st: std::sync::MutexGuard<'a, State>,
) -> std::sync::MutexGuard<'a, State> {
    let deadline = Instant::now() + LIMIT;
    while st.held && !s.stop.load(Ordering::SeqCst) && Instant::now() < deadline {
        st = s.changed.wait_timeout(st, LIMIT).unwrap().0;
    }
    st
}

/// The bytes (inclusive) a request's single `Range` asks of `body`, when the route
/// answers ranges and the `If-Range` (if any) names its ETag.
fn ranged(
    ranges: bool,
    fields: &[(String, String)],
    body: &[u8],
    request: &[(String, String)],
) -> Option<(usize, usize)> {
    let spec = crate::header(request, "range")?.strip_prefix("bytes=")?;
    if !ranges || body.is_empty() || spec.contains(',') {
        return None;
    }
    if let Some(tag) = crate::header(request, "if-range") {
        if crate::header(fields, "etag") != Some(tag) {
            return None;
        }
    }
    let (first, last) = spec.split_once('-')?;
    let first: usize = first.trim().parse().ok()?;
    let last = match last.trim() {
        "" => body.len() - 1,
        l => l.parse::<usize>().ok()?.min(body.len() - 1),
    };
    (first <= last).then_some((first, last))
}

/// One response; 304 without a body when the request's If-None-Match names its ETag.
fn render(
    status: u16,
    fields: &[(String, String)],
    body: &[u8],
    chunked: bool,
    request: &[(String, String)],
) -> Vec<u8> {
    let etag = crate::header(fields, "etag");
    let inm = crate::header(request, "if-none-match");
    let not_modified = etag.is_some() && etag == inm;
    let status = if not_modified { 304 } else { status };
    let mut out = format!("HTTP/1.1 {status} X\r\n").into_bytes();
    for (n, v) in fields {
        out.extend_from_slice(format!("{n}: {v}\r\n").as_bytes());
    }
    if not_modified {
        out.extend_from_slice(b"\r\n");
    } else {
        frame_body(&mut out, body, chunked.then_some(1000));
    }
    out
}

/// End a message head and append `body`: framed by Content-Length, or (with `chunk`)
/// chunked in pieces of that many bytes. For requests and responses a test writes by hand.
pub fn frame_body(out: &mut Vec<u8>, body: &[u8], chunk: Option<usize>) {
    match chunk {
        Some(size) => {
            out.extend_from_slice(b"Transfer-Encoding: chunked\r\n\r\n");
            for piece in body.chunks(size) {
                out.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
                out.extend_from_slice(piece);
                out.extend_from_slice(b"\r\n");
            }
            out.extend_from_slice(b"0\r\n\r\n");
        }
        None => {
            out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
            out.extend_from_slice(body);
        }
    }
}

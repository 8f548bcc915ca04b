//! A deliberately lenient recording back-end, the kind request smuggling feeds on: it ends
//! a head at a blank line of bare LFs too, takes chunked framing from any
//! `Transfer-Encoding` that mentions "chunked" (before any `Content-Length`, whose first
//! value it reads leniently), reads chunk sizes from their leading hex digits and ignores
//! the rest of the line. Each request it parses gets a sequence number, recorded with its
//! target and sent back in `X-Seen`, so a test can match every request the back-end saw
//! with a response the client got: a request seen and never answered through the router
//! was smuggled past it.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

use crate::support::LIMIT;

#[derive(Default)]
struct Record {
    /// (sequence number, target) of every request parsed.
    seen: Vec<(u64, String)>,
}

pub struct Lenient {
    pub addr: SocketAddr,
    record: Arc<Mutex<Record>>,
    /// How many connections are open; [`Lenient::quiet`] waits for 0.
    open: watch::Receiver<usize>,
    task: tokio::task::JoinHandle<()>,
}

impl Lenient {
    pub async fn start() -> Lenient {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let record = Arc::new(Mutex::new(Record::default()));
        let (open_tx, open) = watch::channel(0usize);
        let open_tx = Arc::new(open_tx);
        let r = record.clone();
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                open_tx.send_modify(|n| *n += 1);
                let (r, open_tx) = (r.clone(), open_tx.clone());
                tokio::spawn(async move {
                    serve(stream, r).await;
                    open_tx.send_modify(|n| *n -= 1);
                });
            }
        });
        Lenient { addr, record, open, task }
    }

    /// Every request parsed so far: (sequence number, target).
    pub fn seen(&self) -> Vec<(u64, String)> {
        self.record.lock().unwrap().seen.clone()
    }

    /// Wait (bounded) until every connection to this back-end has closed, so that
    /// [`Lenient::seen`] is final.
    pub async fn quiet(&mut self) {
        let wait = self.open.wait_for(|n| *n == 0);
        tokio::time::timeout(LIMIT, wait).await.expect("connections close").unwrap();
    }
}

impl Drop for Lenient {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve(mut stream: TcpStream, record: Arc<Mutex<Record>>) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        while let Some((target, used)) = parse(&buf) {
            buf.drain(..used);
            let id = {
                let mut r = record.lock().unwrap();
                let id = r.seen.len() as u64;
                r.seen.push((id, target.clone()));
                id
            };
            let body = format!("seen {target}");
            let reply = format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nX-Seen: {id}\r\n\r\n{body}",
                body.len()
            );
            if stream.write_all(reply.as_bytes()).await.is_err() {
                return;
            }
        }
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

/// One whole request at the front of `buf`, leniently: its target and length.
fn parse(buf: &[u8]) -> Option<(String, usize)> {
    let head_end = find(buf, b"\r\n\r\n").map(|i| i + 4).into_iter();
    let head_end = head_end.chain(find(buf, b"\n\n").map(|i| i + 2)).min()?;
    let head = String::from_utf8_lossy(&buf[..head_end]);
    let mut lines = head.split('\n').map(|l| l.trim_end_matches('\r'));
    let target = lines.next()?.split_whitespace().nth(1).unwrap_or("").to_string();
    let mut chunked = false;
    let mut length = None;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else { continue };
        let (name, value) = (name.trim().to_ascii_lowercase(), value.trim().to_ascii_lowercase());
        if name == "transfer-encoding" && value.contains("chunked") {
            chunked = true;
        }
        if name == "content-length" && length.is_none() {
            let digits: String = value.chars().take_while(char::is_ascii_digit).collect();
            length = Some(digits.parse::<usize>().unwrap_or(0));
        }
    }
    let body_len = if chunked {
        chunked_len(&buf[head_end..])?
    } else {
        let n = length.unwrap_or(0);
        (buf.len() - head_end >= n).then_some(n)?
    };
    Some((target, head_end + body_len))
}

/// The length of a chunked body at the front of `body`, read leniently.
fn chunked_len(body: &[u8]) -> Option<usize> {
    let mut at = 0;
    loop {
        let line_end = at + find(&body[at..], b"\n")?;
        let line = String::from_utf8_lossy(&body[at..line_end]);
        let hex: String = line.trim().chars().take_while(char::is_ascii_hexdigit).collect();
        let size = usize::from_str_radix(&hex, 16).unwrap_or(0);
        at = line_end + 1;
        if size == 0 {
            // Trailer lines up to an empty one.
            loop {
                let end = at + find(&body[at..], b"\n")?;
                let empty = body[at..end].iter().all(|&b| b == b'\r');
                at = end + 1;
                if empty {
                    return Some(at);
                }
            }
        }
        if body.len() < at + size {
            return None;
        }
        at += size;
        at += find(&body[at..], b"\n")? + 1;
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

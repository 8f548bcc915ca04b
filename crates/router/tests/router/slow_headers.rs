//! A slow-header flood (many connections trickling a request head) does not stop a
//! normal client, and each slow connection is cut off by the header deadline however
//! steadily it trickles.

use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use crate::support::{config, Backend, Client, RunningRouter, LIMIT};

const FLOOD: usize = 300;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_header_flood_does_not_stop_a_normal_client() {
    let backend = Backend::start("a").await;
    let mut cfg = config(&[&backend], "rr");
    cfg.timeouts.header = Duration::from_millis(1_000);
    let router = RunningRouter::start(cfg).await;

    let mut flood = Vec::with_capacity(FLOOD);
    for _ in 0..FLOOD {
        let mut s = TcpStream::connect(router.addr).await.unwrap();
        s.write_all(b"GET / HTTP/1.1\r\nHost: t\r\nX-Slow: ").await.unwrap();
        flood.push(s);
    }
    // One flooder keeps trickling a byte at a time: pacing is what is under test here.
    let mut trickler = TcpStream::connect(router.addr).await.unwrap();
    let trickle = tokio::spawn(async move {
        let started = tokio::time::Instant::now();
        trickler.write_all(b"GET / HTTP/1.1\r\n").await.unwrap();
        while started.elapsed() < LIMIT {
            if trickler.write_all(b"a").await.is_err() {
                return true; // the router hung up on it
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        false
    });

    let mut client = Client::connect(router.addr).await;
    for i in 0..50 {
        let reply = client.get(&format!("/normal/{i}")).await;
        assert_eq!(reply.status, 200);
    }
    assert!(trickle.await.unwrap(), "a trickling head is cut off by header_ms");
    let mut first = Client::from_stream(flood.swap_remove(0));
    let reply = first.reply(false).await.expect("a 408 before the close");
    assert_eq!(reply.status, 408);
    assert!(first.closed().await);
    assert_eq!(backend.seen().len(), 50, "nothing of the flood was forwarded");
    router.stop().await;
}

//! Invalidation through the router: caching larder nodes in front of one test origin all
//! hold a target; an unsafe request for it through the router, answered by one node,
//! drops it on every node (the one that answered drops its own, the router tells the
//! others). And a client cannot reach the nodes' invalidation path through the router.

use std::net::SocketAddr;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use router::config::{NodeConfig, RouterConfig};
use testkit::{Route, TestOrigin};

use crate::support::{Client, RunningRouter, LIMIT};

/// Caching larder nodes on 127.0.0.1:0 in threads of their own, in front of `origin`.
struct CachingNodes {
    addrs: Vec<SocketAddr>,
    stops: Vec<tokio::sync::oneshot::Sender<()>>,
    threads: Vec<JoinHandle<Result<(), node::NodeError>>>,
}

impl CachingNodes {
    fn start(count: usize, origin: &TestOrigin) -> CachingNodes {
        let (mut addrs, mut stops, mut threads) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..count {
            let url = node::origin::OriginUrl::parse(&origin.url()).unwrap();
            let mut cfg = node::Config::new(std::env::temp_dir());
            cfg.disk_threads = 1;
            cfg.shutdown_grace = Duration::from_secs(5);
            cfg.origin = Some(node::origin::OriginConfig::new(vec![url]));
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            addrs.push(listener.local_addr().unwrap());
            let (tx, rx) = tokio::sync::oneshot::channel::<()>();
            stops.push(tx);
            threads.push(std::thread::spawn(move || {
                node::serve(listener, cfg, async move {
                    let _ = rx.await;
                })
            }));
        }
        CachingNodes { addrs, stops, threads }
    }

    fn router_config(&self) -> RouterConfig {
        let nodes = self
            .addrs
            .iter()
            .enumerate()
            .map(|(i, &addr)| NodeConfig { name: format!("n{}", i + 1), ..NodeConfig::new(addr) })
            .collect();
        let mut c = RouterConfig { nodes, node_header: true, ..RouterConfig::default() };
        c.policy.kind = "lard".parse().unwrap();
        c.timeouts.drain = Duration::from_millis(5_000);
        c
    }

    fn stop(self) {
        for s in self.stops {
            let _ = s.send(());
        }
        for t in self.threads {
            t.join().unwrap().unwrap();
        }
    }
}

/// GET `path` from the node at `addr` directly: its cache status and body.
async fn direct(addr: SocketAddr, path: &str) -> (String, Vec<u8>) {
    let r = Client::connect(addr).await.get(path).await;
    assert_eq!(r.status, 200, "{r:?}");
    (r.header("x-larder-cache").unwrap_or("").to_string(), r.body)
}

fn fresh(body: &[u8]) -> Route {
    Route::ok(&[("Cache-Control", "max-age=600")], body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unsafe_request_through_the_router_invalidates_every_node() {
    let origin = TestOrigin::start();
    origin.set("/obj?v", fresh(b"v0"));
    let nodes = CachingNodes::start(3, &origin);
    let router = RunningRouter::start(nodes.router_config()).await;
    for &addr in &nodes.addrs {
        direct(addr, "/obj?v").await;
        assert_eq!(direct(addr, "/obj?v").await, ("HIT".into(), b"v0".to_vec()));
    }
    for (i, method) in ["POST", "PUT", "DELETE"].iter().enumerate() {
        let new = format!("v{}", i + 1).into_bytes();
        origin.set("/obj?v", fresh(&new));
        let mut c = Client::connect(router.addr).await;
        let raw = format!("{method} /obj?v HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\nx=1");
        c.send_raw(raw.as_bytes()).await;
        let r = c.reply(false).await.expect("a reply");
        assert_eq!((r.status, r.body.as_slice()), (200, new.as_slice()), "{method}");
        assert_eq!(origin.last_body("/obj?v"), Some((method.to_string(), b"x=1".to_vec())));
        // The answering node dropped its copy before answering; the others hear from the
        // router after the answer: each is asked until it fetches the new body.
        for &addr in &nodes.addrs {
            let deadline = Instant::now() + LIMIT;
            loop {
                let (how, body) = direct(addr, "/obj?v").await;
                if body == new {
                    assert_eq!(how, "MISS", "{method}: node {addr}");
                    break;
                }
                assert_eq!(how, "HIT", "{method}: node {addr} still holds the old copy");
                assert!(Instant::now() < deadline, "{method}: node {addr} was never told");
                tokio::task::yield_now().await;
            }
        }
    }
    let mut c = Client::connect(router.addr).await;
    let inv = wire::Invalidation::exact("/obj?v");
    c.send_raw(format!("POST {} HTTP/1.1\r\nHost: t\r\n\r\n", inv.request_target()).as_bytes())
        .await;
    assert_eq!(c.reply(false).await.expect("a reply").status, 403, "a client may not invalidate");
    router.stop().await;
    nodes.stop();
}

//! Real larder nodes on 127.0.0.1:0, each in a thread of its own: what the tests that run
//! the router in front of real nodes (one placement, invalidation, purge) start.

use std::net::SocketAddr;
use std::thread::JoinHandle;

/// Running nodes, one per config given, in that order; stopped by [`InProcessNodes::stop`].
pub struct InProcessNodes {
    pub addrs: Vec<SocketAddr>,
    stops: Vec<tokio::sync::oneshot::Sender<()>>,
    threads: Vec<JoinHandle<Result<(), node::NodeError>>>,
}

impl InProcessNodes {
    pub fn start(configs: impl IntoIterator<Item = node::Config>) -> InProcessNodes {
        let (mut addrs, mut stops, mut threads) = (Vec::new(), Vec::new(), Vec::new());
        for cfg in configs {
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
        InProcessNodes { addrs, stops, threads }
    }

    /// Stop every node gracefully and wait for each to end cleanly.
    pub fn stop(self) {
        for s in self.stops {
            let _ = s.send(());
        }
        for t in self.threads {
            t.join().unwrap().unwrap();
        }
    }
}

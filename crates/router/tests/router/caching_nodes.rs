//! Caching larder nodes on 127.0.0.1:0, each in a thread of its own, in front of one test
//! origin: the cluster the invalidation and purge tests run through the router.

use std::net::SocketAddr;
use std::time::Duration;

use router::config::{NodeConfig, RouterConfig};
use testkit::{Route, TestOrigin};

use crate::in_process_nodes::InProcessNodes;
use crate::support::Client;

/// Caching larder nodes on 127.0.0.1:0 in threads of their own, in front of `origin`.
pub struct CachingNodes {
    pub addrs: Vec<SocketAddr>,
    nodes: InProcessNodes,
}

impl CachingNodes {
    pub fn start(count: usize, origin: &TestOrigin) -> CachingNodes {
        let config = || {
            let url = node::origin::OriginUrl::parse(&origin.url()).unwrap();
            let mut cfg = node::Config::new(std::env::temp_dir());
            cfg.disk_threads = 1;
            cfg.shutdown_grace = Duration::from_secs(5);
            cfg.origin = Some(node::origin::OriginConfig::new(vec![url]));
            cfg
        };
        let nodes = InProcessNodes::start((0..count).map(|_| config()));
        CachingNodes { addrs: nodes.addrs.clone(), nodes }
    }

    pub fn router_config(&self) -> RouterConfig {
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

    pub fn stop(self) {
        self.nodes.stop();
    }
}

/// GET `path` from the node at `addr` directly: its cache status and body.
pub async fn direct(addr: SocketAddr, path: &str) -> (String, Vec<u8>) {
    let r = Client::connect(addr).await.get(path).await;
    assert_eq!(r.status, 200, "{r:?}");
    (r.header("x-larder-cache").unwrap_or("").to_string(), r.body)
}

pub fn fresh(body: &[u8]) -> Route {
    Route::ok(&[("Cache-Control", "max-age=600")], body)
}

//! Peer mode: every peer runs a distributor beside its own node. A request another peer's
//! distributor forwarded is served by the receiving peer's own node, never placed again,
//! so even a peer list that wrongly names the peers' distributors cannot make a loop.

use router::{NodeConfig, RouterConfig};
use tokio::net::TcpListener;

use crate::support::{config, Backend, Client, RunningRouter};

/// A peer's distributor whose policy never picks its own node (weight 0) and sends
/// everything to `other`, a distributor: the misconfiguration that loops without the guard.
fn misconfigured_peer(own: &Backend, other: std::net::SocketAddr) -> RouterConfig {
    let mut c = config(&[own], "wrr");
    c.nodes[0].weight = 0;
    c.nodes.push(NodeConfig { name: format!("distributor-{other}"), ..NodeConfig::new(other) });
    c.local_node = Some(own.addr);
    c
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_forwarded_by_a_peer_is_served_there_never_forwarded_again() {
    let (a, b) = (Backend::start("a").await, Backend::start("b").await);
    let (la, lb) = (
        TcpListener::bind("127.0.0.1:0").await.unwrap(),
        TcpListener::bind("127.0.0.1:0").await.unwrap(),
    );
    let (pa, pb) = (la.local_addr().unwrap(), lb.local_addr().unwrap());
    let peer_a = RunningRouter::start_on(la, misconfigured_peer(&a, pb)).await;
    let peer_b = RunningRouter::start_on(lb, misconfigured_peer(&b, pa)).await;
    for (entry, server) in [(pa, "b"), (pb, "a")] {
        let mut client = Client::connect(entry).await;
        for i in 0..4 {
            let r = client.get(&format!("/p{i}.html")).await;
            assert_eq!(r.status, 200);
            assert_eq!(r.body, format!("{server} /p{i}.html").into_bytes(), "one hop, then served");
        }
    }
    // Each node saw each request once, having passed exactly one distributor before the
    // one that sent it there.
    for (node, n) in [(&a, 4), (&b, 4)] {
        let seen = node.seen();
        assert_eq!(seen.len(), n);
        for s in &seen {
            assert_eq!(s.header("via"), Some("1.1 larder, 1.1 larder"));
        }
    }
    peer_a.stop().await;
    peer_b.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_request_is_placed_by_the_policy_even_if_it_came_through_other_proxies() {
    let (a, b) = (Backend::start("a").await, Backend::start("b").await);
    let mut c = config(&[&a, &b], "wrr");
    c.nodes[0].weight = 0;
    c.local_node = Some(a.addr);
    let peer = RunningRouter::start(c).await;
    let mut client = Client::connect(peer.addr).await;
    client.send_raw(b"GET /x HTTP/1.1\r\nHost: t\r\nVia: 1.1 edge, 1.0 cdn\r\n\r\n").await;
    let r = client.reply(false).await.expect("an answer");
    assert_eq!((r.status, r.body.as_slice()), (200, &b"b /x"[..]), "placed, not pinned");
    peer.stop().await;
}

//! Connection handoff: a router with `handoff` on passes a plain HTTP/1.1 connection to
//! the real larder node of its first request over the node's Unix socket; the node serves
//! every later request on it, byte-exact. A node that refuses, never answers or dies
//! mid-handoff costs no request (the router relays it), and TLS and HTTP/2 connections
//! are relayed as before.

use std::fmt::Debug;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use node::LaterRequests;
use router::config::{NodeConfig, RouterConfig};
use router::PeerHandOn;
use testkit::TempDir;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixListener;
use tokio::sync::{mpsc, oneshot};

use crate::http2::{fetch, over_tls, prior_knowledge};
use crate::in_process_nodes::InProcessNodes;
use crate::support::{stats_until, Client, Response, RunningRouter};
use crate::tls::{text, tls_file};

const FILES: usize = 8;

fn body(i: usize) -> Vec<u8> {
    // Sizes from tiny to several reads' worth, each byte telling its file and offset.
    let len = 10 + i * 9_000;
    (0..len).map(|k| b'a' + ((i * 7 + k) % 26) as u8).collect()
}

/// Two real larder nodes over one docroot, each adopting on a socket of its own and
/// asking its own placement (attached when it runs as a peer) where later requests belong.
struct Cluster {
    nodes: InProcessNodes,
    /// Where the distributors find each node: its own address unless a test put a
    /// stand-in in front of it.
    listed: Vec<SocketAddr>,
    sockets: Vec<PathBuf>,
    hand_ons: Vec<PeerHandOn>,
    dir: TempDir,
}

impl Cluster {
    /// Later requests that belong elsewhere handed on (the nodes' peers place them).
    fn start() -> Cluster {
        Cluster::serving_later(LaterRequests::HandOn)
    }

    fn serving_later(later: LaterRequests) -> Cluster {
        Cluster::forwarding(later, |_| {})
    }

    /// Forwards bounded by 300 ms, then by what `tune` sets.
    fn forwarding(later: LaterRequests, tune: impl Fn(&mut node::ForwardConfig)) -> Cluster {
        let dir = TempDir::new("handoff");
        let root = dir.0.join("www");
        std::fs::create_dir_all(&root).unwrap();
        for i in 0..FILES {
            std::fs::write(root.join(format!("f{i}.txt")), body(i)).unwrap();
        }
        let sockets: Vec<PathBuf> = (0..2).map(|i| dir.0.join(format!("n{i}.sock"))).collect();
        let hand_ons: Vec<PeerHandOn> = sockets.iter().map(|_| PeerHandOn::new()).collect();
        let configs = sockets.iter().zip(&hand_ons).map(|(s, hand_on)| {
            let mut cfg = node::Config::new(&root);
            cfg.disk_threads = 1;
            cfg.shutdown_grace = Duration::from_secs(5);
            let mut handoff = node::HandoffConfig::new(s);
            handoff.hand_on = Some(node::SharedHandOn(Arc::new(hand_on.clone())));
            handoff.later = later;
            handoff.forward.timeout = Duration::from_millis(300);
            tune(&mut handoff.forward);
            cfg.handoff = Some(handoff);
            cfg
        });
        let nodes = InProcessNodes::start(configs.collect::<Vec<_>>());
        let listed = nodes.addrs.clone();
        Cluster { nodes, listed, sockets, hand_ons, dir }
    }

    /// Each node's distributor, as `larder peer --handoff` runs them: every one places
    /// over both nodes, its own node the local one, and its node asks it where later
    /// requests on an adopted connection belong.
    async fn peers(&self) -> Vec<RunningRouter> {
        let mut peers = Vec::new();
        for (i, hand_on) in self.hand_ons.iter().enumerate() {
            let mut config = self.router_config(true);
            config.local_node = Some(self.listed[i]);
            let peer = self.started(config).await;
            peer.handle.place_hand_ons(hand_on);
            peers.push(peer);
        }
        peers
    }

    fn router_config(&self, handoff: bool) -> RouterConfig {
        let nodes = self
            .listed
            .iter()
            .enumerate()
            .map(|(i, &addr)| NodeConfig {
                name: format!("n{i}"),
                load_report: true,
                ..NodeConfig::new(addr)
            })
            .collect();
        let mut c = RouterConfig { nodes, node_header: true, ..RouterConfig::default() };
        c.policy.kind = "hash".parse().unwrap();
        c.load.poll = Duration::from_millis(20);
        c.timeouts.drain = Duration::from_millis(5_000);
        c.handoff.enabled = handoff;
        c.handoff.answer = Duration::from_millis(300);
        c
    }

    /// A router that has heard every node's socket from its load reports.
    async fn router(&self, handoff: bool) -> RunningRouter {
        self.started(self.router_config(handoff)).await
    }

    async fn started(&self, config: RouterConfig) -> RunningRouter {
        let router = RunningRouter::start(config).await;
        let all_advertised = |s: &serde_json::Value| {
            s["nodes"].as_array().is_some_and(|nodes| {
                nodes.len() == 2 && nodes.iter().all(|n| n["report"]["handoff_socket"].is_string())
            })
        };
        assert!(stats_until(&router, all_advertised).await, "every node's socket reported");
        router
    }

    fn stop(self) {
        self.nodes.stop();
        drop(self.dir);
    }
}

fn get(path: &str) -> String {
    format!("GET {path} HTTP/1.1\r\nHost: test\r\n\r\n")
}

/// A response the node wrote itself: no router field in it.
fn served_by_node(r: &Response) -> bool {
    r.header("x-larder-node").is_none() && r.header("via").is_none()
}

async fn handoffs(router: &RunningRouter, handoffs: u64, fallbacks: u64) -> bool {
    stats_until(router, |s| {
        s["handoff"]["handoffs"] == handoffs && s["handoff"]["fallbacks"] == fallbacks
    })
    .await
}

#[tokio::test]
async fn a_handed_off_connection_serves_pipelined_requests_byte_exact() {
    let cluster = Cluster::start();
    let router = cluster.router(true).await;
    let mut client = Client::connect(router.addr).await;
    // Three requests in one write: the router reads them all with the first, and the node
    // starts from those bytes.
    let order = [0, 3, 0, 5];
    let pipelined: String = order.iter().map(|i| get(&format!("/f{i}.txt"))).collect();
    client.send_raw(pipelined.as_bytes()).await;
    for &i in &order {
        let r = client.reply(false).await.expect("a reply");
        assert_eq!(r.status, 200);
        assert!(served_by_node(&r), "served by the node: {:?}", r.headers);
        assert!(r.body == body(i), "body of f{i} byte-exact");
    }
    // And the connection goes on with the node.
    let r = client.get("/f7.txt").await;
    assert!(served_by_node(&r) && r.body == body(7));
    assert!(handoffs(&router, 1, 0).await);
    router.stop().await;
    cluster.stop();
}

#[tokio::test]
async fn requests_that_belong_to_other_nodes_are_served_byte_exact() {
    let cluster = Cluster::start();
    // The owners, as a relaying router places them: both nodes own some files.
    let relay = cluster.router(false).await;
    let mut owners = Vec::new();
    let mut c = Client::connect(relay.addr).await;
    for i in 0..FILES {
        owners
            .push(c.get(&format!("/f{i}.txt")).await.header("x-larder-node").unwrap().to_string());
    }
    assert!(owners.iter().any(|o| o != &owners[0]), "both nodes own files: {owners:?}");
    relay.stop().await;
    // One handed-off connection asks for all of them, each once and then again.
    let router = cluster.router(true).await;
    let mut client = Client::connect(router.addr).await;
    for i in (0..FILES).chain(0..FILES) {
        let r = client.get(&format!("/f{i}.txt")).await;
        assert_eq!(r.status, 200);
        assert!(served_by_node(&r), "f{i} from the node that took the connection");
        assert!(r.body == body(i), "body of f{i} byte-exact");
    }
    assert!(handoffs(&router, 1, 0).await);
    router.stop().await;
    cluster.stop();
}

/// Which node (`n0`, `n1`) owns each file, as a relaying router places them.
async fn owners(cluster: &Cluster) -> Vec<String> {
    let relay = cluster.router(false).await;
    let mut c = Client::connect(relay.addr).await;
    let mut owners = Vec::new();
    for i in 0..FILES {
        let r = c.get(&format!("/f{i}.txt")).await;
        owners.push(r.header("x-larder-node").expect("relayed").to_string());
    }
    relay.stop().await;
    assert!(owners.iter().any(|o| o != &owners[0]), "both nodes own files: {owners:?}");
    owners
}

/// Handoffs and fallbacks counted by all `peers` together, once they reach `expected`.
async fn peer_handoffs(peers: &[RunningRouter], expected: (u64, u64)) -> bool {
    // Each count settles as its exchange ends: poll until the sum is right, bounded.
    let started = tokio::time::Instant::now();
    while started.elapsed() < crate::support::LIMIT {
        let mut sum = (0, 0);
        for p in peers {
            let s = crate::support::admin_json(p.admin, "/stats").await;
            sum.0 += s["handoff"]["handoffs"].as_u64().unwrap_or(0);
            sum.1 += s["handoff"]["fallbacks"].as_u64().unwrap_or(0);
        }
        if sum == expected {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

/// The files `order` names on one connection to `peer`, pipelined in one write, then one
/// by one: each answered 200 by a node, byte-exact.
async fn served_byte_exact(peer: &RunningRouter, order: &[usize]) {
    let mut client = Client::connect(peer.addr).await;
    let pipelined: String = order.iter().map(|i| get(&format!("/f{i}.txt"))).collect();
    client.send_raw(pipelined.as_bytes()).await;
    for &i in order {
        let r = client.reply(false).await.unwrap_or_else(|| panic!("a reply to f{i}"));
        assert_eq!(r.status, 200);
        assert!(served_by_node(&r), "f{i} served by a node: {:?}", r.headers);
        assert!(r.body == body(i), "body of f{i} byte-exact");
    }
    for &i in order {
        let r = client.get(&format!("/f{i}.txt")).await;
        assert!(served_by_node(&r) && r.body == body(i), "f{i} one by one, byte-exact");
    }
}

#[tokio::test]
async fn on_peers_a_connection_whose_requests_change_owner_goes_to_each_owner_byte_exact() {
    let cluster = Cluster::start();
    let owners = owners(&cluster).await;
    let peers = cluster.peers().await;
    // Every file twice in a row, then every file again: pipelined in one write, then one
    // by one on the same connection.
    let order: Vec<usize> = (0..FILES).flat_map(|i| [i, i]).chain(0..FILES).collect();
    served_byte_exact(&peers[0], &order).await;
    // The first request handed off once, then one hand-on each time the owner changes.
    let owner_of = |k: usize| &owners[order[k % order.len()]];
    let changes = (1..2 * order.len()).filter(|&k| owner_of(k) != owner_of(k - 1)).count();
    assert!(changes > 0);
    assert!(peer_handoffs(&peers, (1 + changes as u64, 0)).await, "one handoff per owner");
    for p in peers {
        p.stop().await;
    }
    cluster.stop();
}

#[tokio::test]
async fn on_peers_a_node_that_refuses_hangs_or_dies_mid_hand_on_costs_no_request() {
    let stands = EVERY_STAND;
    for stand in stands {
        let cluster = Cluster::start();
        let owners = owners(&cluster).await;
        let peers = cluster.peers().await;
        // n1's socket is a stand-in, so every hand-on to n1 fails.
        let held = stand_in(&cluster.sockets[1], stand);
        n0_serves_what_n1_fails(&owners, &peers[0], &stand).await;
        assert!(peer_handoffs(&peers, (1, 3)).await, "{stand:?}: three hand-ons fell back");
        for p in peers {
            p.stop().await;
        }
        held.abort();
        cluster.stop();
    }
}

/// A connection to `peer` whose first request goes to n0, then requests n0 and n1 own by
/// turns, pipelined and then one more: n1 failing each (as `how` says), n0 serves every
/// one itself, byte-exact, and the connection goes on.
async fn n0_serves_what_n1_fails(owners: &[String], peer: &RunningRouter, how: &dyn Debug) {
    let first = owners.iter().position(|o| o == "n0").expect("n0 owns a file");
    let elsewhere = owners.iter().position(|o| o == "n1").expect("n1 owns a file");
    let mut client = Client::connect(peer.addr).await;
    let order = [first, elsewhere, first, elsewhere];
    let pipelined: String = order.iter().map(|i| get(&format!("/f{i}.txt"))).collect();
    client.send_raw(pipelined.as_bytes()).await;
    for i in order {
        let r = client.reply(false).await.unwrap_or_else(|| panic!("{how:?}: f{i}"));
        assert_eq!(r.status, 200, "{how:?}");
        assert!(served_by_node(&r), "{how:?}: served by n0");
        assert!(r.body == body(i), "{how:?}: f{i} byte-exact");
    }
    let r = client.get(&format!("/f{elsewhere}.txt")).await;
    assert!(r.body == body(elsewhere), "{how:?}: the connection goes on");
}

/// Every way a stand-in at a node's socket can fail a handoff.
const EVERY_STAND: [Stand; 5] =
    [Stand::Closes, Stand::Refuses, Stand::Silent, Stand::DiesBeforeCommit, Stand::DiesAfterCommit];

/// How a stand-in at a node's socket treats an offer.
#[derive(Clone, Copy, Debug)]
enum Stand {
    /// Closes the stream at once.
    Closes,
    /// Answers that it refuses.
    Refuses,
    /// Reads the offer and never answers.
    Silent,
    /// Takes the offer, then dies before serving (closes after the commit).
    DiesAfterCommit,
    /// Takes the offer, then dies before the commit.
    DiesBeforeCommit,
}

/// Put a stand-in at `socket` (the node keeps advertising it): it treats every offer as
/// `stand` says, holding what it was given until the test ends.
fn stand_in(socket: &PathBuf, stand: Stand) -> tokio::task::JoinHandle<()> {
    std::fs::remove_file(socket).unwrap();
    let listener = UnixListener::bind(socket).unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((mut s, _)) = listener.accept().await {
            let mut offer = [0u8; 64];
            match stand {
                Stand::Closes => continue,
                Stand::Refuses => {
                    let _ = s.read(&mut offer).await;
                    let _ = s.write_all(&[wire::HandoffStep::Refuse.byte()]).await;
                }
                Stand::Silent => {
                    let _ = s.read(&mut offer).await;
                    held.push(s);
                }
                Stand::DiesAfterCommit | Stand::DiesBeforeCommit => {
                    let _ = s.read(&mut offer).await;
                    let _ = s.write_all(&[wire::HandoffStep::Adopt.byte()]).await;
                    if matches!(stand, Stand::DiesAfterCommit) {
                        let mut commit = [0u8; 1];
                        let _ = s.read_exact(&mut commit).await;
                    }
                }
            }
        }
    })
}

#[tokio::test]
async fn a_node_that_refuses_hangs_or_dies_mid_handoff_costs_no_request() {
    let stands = EVERY_STAND;
    for (round, stand) in stands.into_iter().enumerate() {
        let cluster = Cluster::start();
        let router = cluster.router(true).await;
        let stands: Vec<_> = cluster.sockets.iter().map(|s| stand_in(s, stand)).collect();
        let mut client = Client::connect(router.addr).await;
        let pipelined = format!("{}{}", get("/f1.txt"), get("/f2.txt"));
        client.send_raw(pipelined.as_bytes()).await;
        for i in [1, 2] {
            let r = client.reply(false).await.unwrap_or_else(|| panic!("{stand:?}: a reply"));
            assert_eq!(r.status, 200, "{stand:?}");
            assert!(r.header("x-larder-node").is_some(), "{stand:?}: relayed");
            assert!(r.body == body(i), "{stand:?}: f{i} byte-exact");
        }
        let r = client.get("/f3.txt").await;
        assert!(r.body == body(3), "{stand:?}: the connection goes on");
        assert!(handoffs(&router, 0, 1).await, "{stand:?} (round {round}): one fallback");
        router.stop().await;
        for s in stands {
            s.abort();
        }
        cluster.stop();
    }
}

#[tokio::test]
async fn tls_http2_and_requests_with_a_body_are_relayed() {
    let cluster = Cluster::start();
    let mut config = cluster.router_config(true);
    config.tls.cert = text(&tls_file("localhost.pem"));
    config.tls.key = text(&tls_file("localhost.key"));
    let router = RunningRouter::start_tls(config).await;
    let all_advertised = |s: &serde_json::Value| {
        s["nodes"]
            .as_array()
            .is_some_and(|n| n.iter().all(|n| n["report"]["handoff_socket"].is_string()))
    };
    assert!(stats_until(&router, all_advertised).await);
    let h2c = prior_knowledge(router.addr).await;
    let tls = over_tls(router.tls.unwrap()).await;
    for send in [&h2c, &tls] {
        let got = fetch(send, "GET", "/f4.txt", b"").await;
        assert_eq!(got.status, 200);
        assert!(got.headers.contains_key("x-larder-node"), "relayed");
        assert!(got.body == body(4));
    }
    // A first request with a body is relayed, and so is the rest of its connection.
    let mut client = Client::connect(router.addr).await;
    client.send_raw(b"POST /f4.txt HTTP/1.1\r\nHost: test\r\nContent-Length: 3\r\n\r\nabc").await;
    let r = client.reply(false).await.expect("a reply");
    assert!(r.header("x-larder-node").is_some(), "relayed: {}", r.status);
    let r = client.get("/f4.txt").await;
    assert!(r.header("x-larder-node").is_some() && r.body == body(4));
    let s = crate::support::admin_json(router.admin, "/stats").await;
    assert_eq!(
        (s["handoff"]["handoffs"].as_u64(), s["handoff"]["fallbacks"].as_u64()),
        (Some(0), Some(0))
    );
    router.stop().await;
    cluster.stop();
}

/// The forwards the node `name` counted (`forwarded`, `forward_failures` of its load
/// report, as `peer` last heard it), once they reach `expected`.
async fn forwards(peer: &RunningRouter, name: &str, expected: (u64, u64)) -> bool {
    stats_until(peer, |s| {
        s["nodes"].as_array().is_some_and(|nodes| {
            nodes.iter().filter(|n| n["name"] == name).any(|n| {
                let r = &n["report"];
                (r["forwarded"].as_u64(), r["forward_failures"].as_u64())
                    == (Some(expected.0), Some(expected.1))
            })
        })
    })
    .await
}

#[tokio::test]
async fn on_peers_forwarding_serves_a_connection_whose_requests_change_owner_byte_exact() {
    forwarding_serves_every_owner_byte_exact(Cluster::serving_later(LaterRequests::Forward)).await;
}

#[tokio::test]
async fn on_peers_forwarded_bodies_relayed_as_they_arrive_are_byte_exact() {
    // Every file but the smallest is larger than this: relayed, not read whole first.
    let cluster = Cluster::forwarding(LaterRequests::Forward, |f| f.max_buffered_bytes = 64);
    forwarding_serves_every_owner_byte_exact(cluster).await;
}

async fn forwarding_serves_every_owner_byte_exact(cluster: Cluster) {
    let owners = owners(&cluster).await;
    let peers = cluster.peers().await;
    // Every file twice in a row, then every file again, starting with one of n0's:
    // pipelined in one write, then one by one on the same connection.
    let first = owners.iter().position(|o| o == "n0").expect("n0 owns a file");
    let order: Vec<usize> =
        std::iter::once(first).chain((0..FILES).flat_map(|i| [i, i])).chain(0..FILES).collect();
    served_byte_exact(&peers[0], &order).await;
    // One handoff, never a hand-on; n0 answered n1's requests with n1's responses.
    let of_n1 = order.iter().filter(|&&i| owners[i] == "n1").count() as u64;
    assert!(of_n1 > 0);
    assert!(peer_handoffs(&peers, (1, 0)).await, "the first request alone handed off");
    assert!(forwards(&peers[0], "n0", (2 * of_n1, 0)).await, "n1's requests forwarded");
    assert!(forwards(&peers[0], "n1", (0, 0)).await, "n1 forwarded nothing on");
    for p in peers {
        p.stop().await;
    }
    cluster.stop();
}

/// How a stand-in in front of a node treats a forwarded request.
#[derive(Clone, Debug)]
enum Owner {
    /// Closes the connection without an answer.
    Closes,
    /// Answers 503.
    Fails,
    /// Reads the request and never answers.
    Silent,
    /// Sends the head and part of the body, then closes.
    DiesMidBody,
    /// Sends the test a release, and passes the request to the node once released.
    Holds(mpsc::UnboundedSender<oneshot::Sender<()>>),
}

/// A stand-in at a new address in front of the node at `node`: every connection is
/// passed to the node, but one whose first request is a forwarded one (it carries the
/// peer-fill mark), which is treated as `owner` says. Held until the test ends.
async fn in_front(node: SocketAddr, owner: Owner) -> (SocketAddr, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            let owner = owner.clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    let mut buf = [0u8; 4096];
                    match s.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let marked = String::from_utf8_lossy(&head)
                    .to_ascii_lowercase()
                    .contains(&wire::PEER_FILL_HEADER.to_ascii_lowercase());
                match owner {
                    _ if !marked => {}
                    Owner::Closes => return,
                    Owner::Fails => {
                        let answer =
                            "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n";
                        let _ = s.write_all(answer.as_bytes()).await;
                        let _ = s.read(&mut [0u8; 64]).await;
                        return;
                    }
                    Owner::Silent => {
                        let _ = s.read(&mut [0u8; 64]).await;
                        return;
                    }
                    Owner::DiesMidBody => {
                        let answer = "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\nonly part";
                        let _ = s.write_all(answer.as_bytes()).await;
                        return;
                    }
                    Owner::Holds(held) => {
                        let (release, released) = oneshot::channel();
                        if held.send(release).is_err() || released.await.is_err() {
                            return;
                        }
                    }
                }
                let Ok(mut to) = tokio::net::TcpStream::connect(node).await else { return };
                if to.write_all(&head).await.is_ok() {
                    let _ = tokio::io::copy_bidirectional(&mut s, &mut to).await;
                }
            });
        }
    });
    (addr, task)
}

#[tokio::test]
async fn on_peers_an_owner_that_refuses_fails_hangs_or_dies_mid_forward_costs_no_request() {
    for owner in [Owner::Closes, Owner::Fails, Owner::Silent, Owner::DiesMidBody] {
        let mut cluster = Cluster::serving_later(LaterRequests::Forward);
        let (stand_in, held) = in_front(cluster.nodes.addrs[1], owner.clone()).await;
        cluster.listed[1] = stand_in;
        let owners = owners(&cluster).await;
        let peers = cluster.peers().await;
        // Every forward to n1 meets the stand-in.
        n0_serves_what_n1_fails(&owners, &peers[0], &owner).await;
        assert!(peer_handoffs(&peers, (1, 0)).await, "{owner:?}: one handoff");
        assert!(forwards(&peers[0], "n0", (0, 3)).await, "{owner:?}: three forwards failed");
        for p in peers {
            p.stop().await;
        }
        held.abort();
        cluster.stop();
    }
}

/// The release of the next forward the stand-in holds.
async fn next_held(held: &mut mpsc::UnboundedReceiver<oneshot::Sender<()>>) -> oneshot::Sender<()> {
    let got = tokio::time::timeout(crate::support::LIMIT, held.recv()).await;
    got.expect("a forward held in time").expect("the stand-in runs")
}

#[tokio::test]
async fn on_peers_forwards_to_one_node_stay_within_its_limit() {
    // One forward to a node at a time, each given all the time this test may take.
    let mut cluster = Cluster::forwarding(LaterRequests::Forward, |f| {
        f.max_connections_per_node = 1;
        f.timeout = crate::support::LIMIT;
    });
    let (releases, mut held) = mpsc::unbounded_channel();
    let (stand_in, task) = in_front(cluster.nodes.addrs[1], Owner::Holds(releases)).await;
    cluster.listed[1] = stand_in;
    let owners = owners(&cluster).await;
    let peers = cluster.peers().await;
    let first = owners.iter().position(|o| o == "n0").expect("n0 owns a file");
    let elsewhere = owners.iter().position(|o| o == "n1").expect("n1 owns a file");
    // Two connections handed off to n0, each asking next for a file n1 owns: the first
    // one's forward is held at n1's stand-in.
    let mut clients = Vec::new();
    for _ in 0..2 {
        let mut client = Client::connect(peers[0].addr).await;
        let r = client.get(&format!("/f{first}.txt")).await;
        assert!(served_by_node(&r) && r.body == body(first), "f{first} from n0");
        clients.push(client);
    }
    let later = get(&format!("/f{elsewhere}.txt"));
    clients[0].send_raw(later.as_bytes()).await;
    let release = next_held(&mut held).await;
    // The second is beyond n1's limit: n0 serves it, while the first is still held.
    clients[1].send_raw(later.as_bytes()).await;
    let r = tokio::select! {
        r = clients[1].reply(false) => r.expect("a reply"),
        _ = next_held(&mut held) => panic!("a second forward to n1 while one is under way"),
    };
    assert!(r.status == 200 && served_by_node(&r) && r.body == body(elsewhere), "{r:?}");
    // Released, the first forward is answered with n1's response.
    release.send(()).expect("the stand-in waits");
    let r = clients[0].reply(false).await.expect("a reply");
    assert!(r.status == 200 && served_by_node(&r) && r.body == body(elsewhere), "{r:?}");
    assert!(forwards(&peers[0], "n0", (1, 0)).await, "one forward, none failed");
    assert!(held.try_recv().is_err(), "one forward reached n1's stand-in");
    for p in peers {
        p.stop().await;
    }
    task.abort();
    cluster.stop();
}

#[tokio::test]
async fn on_peers_here_serves_every_later_request_where_the_connection_is() {
    let cluster = Cluster::serving_later(LaterRequests::Here);
    let owners = owners(&cluster).await;
    let peers = cluster.peers().await;
    let first = owners.iter().position(|o| o == "n0").expect("n0 owns a file");
    let order: Vec<usize> = std::iter::once(first).chain(0..FILES).collect();
    served_byte_exact(&peers[0], &order).await;
    assert!(peer_handoffs(&peers, (1, 0)).await, "one handoff, no hand-on");
    // Once n0's report counts every request it served, it has forwarded none.
    let served = 2 * order.len() as u64;
    let counted = stats_until(&peers[0], |s| {
        s["nodes"].as_array().is_some_and(|nodes| {
            nodes.iter().filter(|n| n["name"] == "n0").any(|n| {
                let r = &n["report"];
                r["requests"].as_u64().is_some_and(|c| c >= served)
                    && r["forwarded"].as_u64() == Some(0)
            })
        })
    })
    .await;
    assert!(counted, "n0 served all {served} requests itself");
    for p in peers {
        p.stop().await;
    }
    cluster.stop();
}

/// A target key no router would compute for the cluster's files, named by a client.
const SPOOFED_KEY: u64 = 0x5a5a_5a5a_5a5a_5a5a;

/// GET `path` naming the spoofed target in the placement hint only routers may send.
fn get_naming_spoofed_target(path: &str) -> String {
    let hint = wire::TargetHint { key: SPOOFED_KEY, tree: SPOOFED_KEY };
    let mut field = Vec::new();
    hint.write_field(&mut field);
    let field = String::from_utf8(field).unwrap();
    format!("GET {path} HTTP/1.1\r\nHost: test\r\n{field}\r\n")
}

/// What each node's load report says it holds: `None` for a node no router named a
/// target to, else whether the spoofed target is among its holdings.
async fn spoofed_held(cluster: &Cluster) -> Vec<Option<bool>> {
    let mut held = Vec::new();
    for &addr in &cluster.nodes.addrs {
        let r = Client::connect(addr).await.get(wire::LOAD_REPORT_PATH).await;
        assert_eq!(r.status, 200, "{r:?}");
        let report = wire::LoadReport::parse(&r.body).expect("a load report");
        held.push(report.holdings.map(|d| d.contains(SPOOFED_KEY)));
    }
    held
}

#[tokio::test]
async fn a_client_on_a_handed_off_connection_cannot_name_the_target_a_node_holds() {
    let cluster = Cluster::start();
    let router = cluster.router(true).await;
    let mut client = Client::connect(router.addr).await;
    // The first request (read by the router, handed over with the connection) and a
    // later one the node reads itself.
    for i in [0, 0, 1] {
        client.send_raw(get_naming_spoofed_target(&format!("/f{i}.txt")).as_bytes()).await;
        let r = client.reply(false).await.expect("a reply");
        assert!(r.status == 200 && served_by_node(&r) && r.body == body(i), "f{i}: {r:?}");
    }
    assert!(handoffs(&router, 1, 0).await);
    let held = spoofed_held(&cluster).await;
    assert!(held.iter().all(|h| *h != Some(true)), "a client named a holding: {held:?}");
    router.stop().await;
    // Relayed by a router whose policy places targets, its own hint is the one the node
    // records.
    let mut config = cluster.router_config(false);
    config.policy.kind = "lard".parse().unwrap();
    let relay = cluster.started(config).await;
    let mut client = Client::connect(relay.addr).await;
    for i in [2, 3] {
        client.send_raw(get_naming_spoofed_target(&format!("/f{i}.txt")).as_bytes()).await;
        let r = client.reply(false).await.expect("a reply");
        assert!(r.status == 200 && r.body == body(i), "f{i} relayed: {r:?}");
    }
    let held = spoofed_held(&cluster).await;
    assert!(held.iter().any(Option::is_some), "the relayed requests' targets are held: {held:?}");
    assert!(held.iter().all(|h| *h != Some(true)), "a client named a holding: {held:?}");
    relay.stop().await;
    cluster.stop();
}

/// One caching node in front of `origin`, adopting on `socket`, and a router (handing
/// connections off or relaying them) that has heard of the socket.
async fn caching_node_and_router(
    origin: &testkit::TestOrigin,
    socket: &std::path::Path,
    handoff: bool,
) -> (InProcessNodes, RunningRouter) {
    let url = node::origin::OriginUrl::parse(&origin.url()).unwrap();
    let mut cfg = node::Config::new(std::env::temp_dir());
    cfg.disk_threads = 1;
    cfg.shutdown_grace = Duration::from_secs(5);
    cfg.origin = Some(node::origin::OriginConfig::new(vec![url]));
    cfg.handoff = Some(node::HandoffConfig::new(socket));
    let nodes = InProcessNodes::start([cfg]);
    let node =
        NodeConfig { name: "n0".into(), load_report: true, ..NodeConfig::new(nodes.addrs[0]) };
    let mut c = RouterConfig { nodes: vec![node], node_header: true, ..RouterConfig::default() };
    c.load.poll = Duration::from_millis(20);
    c.timeouts.drain = Duration::from_millis(5_000);
    c.handoff.enabled = handoff;
    c.handoff.answer = Duration::from_millis(300);
    let router = RunningRouter::start(c).await;
    let advertised = |s: &serde_json::Value| s["nodes"][0]["report"]["handoff_socket"].is_string();
    assert!(stats_until(&router, advertised).await, "the node's socket reported");
    (nodes, router)
}

#[tokio::test]
async fn a_client_on_a_handed_off_connection_cannot_ask_a_node_for_a_slice() {
    let origin = testkit::TestOrigin::start();
    let object: Vec<u8> = (0..4_000u32).map(|k| b'a' + (k % 26) as u8).collect();
    let fields = [("Cache-Control", "max-age=600"), ("ETag", "\"v1\"")];
    origin.set("/big", testkit::Route::ok(&fields, &object).ranges());
    let dir = TempDir::new("handoff-slice");
    let slice = wire::SliceRequest { index: 1, size: 1_000, total: object.len() as u64 };
    let asking = format!(
        "GET /big HTTP/1.1\r\nHost: test\r\n{}: 1\r\n{}: {}\r\nIf-Range: \"v1\"\r\n\r\n",
        wire::PEER_FILL_HEADER,
        wire::SLICE_HEADER,
        slice.value(),
    );
    for handoff in [true, false] {
        let (nodes, router) =
            caching_node_and_router(&origin, &dir.0.join(format!("{handoff}.sock")), handoff).await;
        let mut client = Client::connect(router.addr).await;
        // The first request, then a later one on the same connection.
        for _ in 0..2 {
            client.send_raw(asking.as_bytes()).await;
            let r = client.reply(false).await.expect("a reply");
            assert_eq!(r.status, 200, "handoff {handoff}: {:?}", r.headers);
            assert!(r.body == object, "the whole object (handoff {handoff})");
        }
        if handoff {
            assert!(handoffs(&router, 1, 0).await);
        }
        router.stop().await;
        nodes.stop();
    }
}

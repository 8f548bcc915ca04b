//! DNS discovery end to end: a DNS server the test runs on 127.0.0.1 (`dns_server`), whose
//! records change while clients send requests through the router.
//!
//! "Within one refresh" is counted, not timed: `/stats` counts discovery's rounds, and a
//! change made while round k+1 may be under way is in the membership once round k+2 is.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use router::config::{DiscoveryConfig, DnsName};
use router::RouterConfig;
use tokio::net::TcpListener;
use wire::RouterStats;

use crate::dns_server::DnsServer;
use crate::support::{admin_get, Backend, Client, RunningRouter, LIMIT};

const SRV: &str = "_http._tcp.web.test";

/// A router with no node of its own, finding them through `dns` every 100 ms.
fn config(dns: &DnsServer, name: DnsName) -> RouterConfig {
    let mut c = RouterConfig { node_header: true, ..RouterConfig::default() };
    c.policy.kind = "rr".parse().unwrap();
    c.timeouts.drain = Duration::from_millis(5_000);
    c.discovery = DiscoveryConfig {
        refresh_ms: 100,
        resolver: dns.addr.to_string(),
        timeout_ms: 1_000,
        dns: vec![name],
        ..DiscoveryConfig::default()
    };
    c
}

/// The router's `/stats`, read as the type it writes.
async fn read_stats(router: &RunningRouter) -> RouterStats {
    RouterStats::parse(&admin_get(router.admin, "/stats").await.body).unwrap()
}

/// The names of the nodes in the membership, sorted.
fn members(stats: &RouterStats) -> Vec<String> {
    let mut names: Vec<String> =
        stats.nodes.iter().filter(|n| n.configured).map(|n| n.name.clone()).collect();
    names.sort();
    names
}

fn refreshes(stats: &RouterStats) -> u64 {
    stats.discovery.refreshes
}

/// The last error of the first configured name.
fn last_error(stats: &RouterStats) -> Option<&str> {
    stats.discovery.names[0].last_error.as_deref()
}

/// `/stats` once discovery has finished two more rounds than it had when the test changed
/// the records (bounded by [`LIMIT`]).
async fn after_next_round(router: &RunningRouter, before: u64) -> RouterStats {
    poll(router, |s| refreshes(s) >= before + 2).await
}

/// `/stats` once `check` holds; bounded by [`LIMIT`], short waits between polls.
async fn poll(router: &RunningRouter, check: impl Fn(&RouterStats) -> bool) -> RouterStats {
    let started = tokio::time::Instant::now();
    loop {
        let stats = read_stats(router).await;
        if check(&stats) {
            return stats;
        }
        assert!(started.elapsed() < LIMIT, "not within {LIMIT:?}: {stats:#?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Until `until` is polled true, keep-alive clients each send GETs one after another;
/// each returns (requests, failures) with the failures' descriptions. Bounded in count
/// and time.
fn clients(
    router: SocketAddr,
    n: usize,
    stop: Arc<AtomicBool>,
) -> Vec<tokio::task::JoinHandle<(u64, Vec<String>)>> {
    (0..n)
        .map(|c| {
            let stop = stop.clone();
            tokio::spawn(async move {
                let started = tokio::time::Instant::now();
                let (mut sent, mut failed) = (0u64, Vec::new());
                let mut client = Client::connect(router).await;
                while !stop.load(Ordering::Relaxed) && sent < 200_000 && started.elapsed() < LIMIT {
                    let path = format!("/c{c}/p{}", sent % 20);
                    client
                        .send_raw(format!("GET {path} HTTP/1.1\r\nHost: t\r\n\r\n").as_bytes())
                        .await;
                    sent += 1;
                    match client.reply(false).await {
                        Some(r) if r.status == 200 => {}
                        Some(r) => failed.push(format!("{path}: status {}", r.status)),
                        None => {
                            failed.push(format!("{path}: connection closed"));
                            client = Client::connect(router).await;
                        }
                    }
                }
                (sent, failed)
            })
        })
        .collect()
}

/// Wait until `backend` has seen `more` requests beyond `from` (bounded by [`LIMIT`]).
async fn served(backend: &Backend, from: usize, more: usize) {
    let started = tokio::time::Instant::now();
    while backend.seen().len() < from + more {
        assert!(
            started.elapsed() < LIMIT,
            "{} served {} requests",
            backend.name,
            backend.seen().len()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn srv_nodes_join_and_leave_within_one_refresh_with_no_failed_request() {
    let dns = DnsServer::start().await;
    let (a, b, c) =
        (Backend::start("a").await, Backend::start("b").await, Backend::start("c").await);
    for pod in ["pod-0", "pod-1", "pod-2"] {
        dns.set_a(&format!("{pod}.web.test"), &[Ipv4Addr::LOCALHOST]);
    }
    let pods = |list: &[(&str, &Backend)]| -> Vec<(String, u16)> {
        list.iter().map(|(pod, b)| (format!("{pod}.web.test"), b.addr.port())).collect()
    };
    let set_srv = |list: Vec<(String, u16)>| {
        let list: Vec<(&str, u16)> = list.iter().map(|(t, p)| (t.as_str(), *p)).collect();
        dns.set_srv(SRV, &list);
    };
    set_srv(pods(&[("pod-0", &a), ("pod-1", &b)]));
    let router = RunningRouter::start(config(&dns, DnsName::parse_srv(SRV).unwrap())).await;

    // The first round is in the membership before the router serves its first client.
    assert_eq!(Client::connect(router.addr).await.get("/first").await.status, 200);
    let stats = read_stats(&router).await;
    assert_eq!(members(&stats), ["pod-0.web.test", "pod-1.web.test"]);
    assert_eq!(stats.discovery.names[0].name, SRV);
    assert_eq!(stats.discovery.resolver, Some(dns.addr.to_string()));

    let stop = Arc::new(AtomicBool::new(false));
    let load = clients(router.addr, 2, stop.clone());
    served(&a, 0, 20).await;
    served(&b, 0, 20).await;

    // pod-2 joins.
    let before = refreshes(&read_stats(&router).await);
    set_srv(pods(&[("pod-0", &a), ("pod-1", &b), ("pod-2", &c)]));
    let stats = after_next_round(&router, before).await;
    assert_eq!(members(&stats), ["pod-0.web.test", "pod-1.web.test", "pod-2.web.test"]);
    served(&c, 0, 20).await;

    // pod-0 leaves: no new picks; what it had in flight finishes.
    let before = refreshes(&read_stats(&router).await);
    set_srv(pods(&[("pod-1", &b), ("pod-2", &c)]));
    let stats = after_next_round(&router, before).await;
    assert_eq!(members(&stats), ["pod-1.web.test", "pod-2.web.test"]);
    let a_then = a.seen().len();
    let (b_then, c_then) = (b.seen().len(), c.seen().len());
    served(&b, b_then, 50).await;
    served(&c, c_then, 50).await;
    assert!(a.seen().len() <= a_then + 2, "at most one request in flight per client");

    stop.store(true, Ordering::Relaxed);
    let mut total = 0;
    for task in load {
        let (sent, failed) = tokio::time::timeout(LIMIT, task).await.unwrap().unwrap();
        assert!(failed.is_empty(), "failed requests: {failed:?}");
        total += sent;
    }
    // Every request reached exactly one node, once (the "/first" one too).
    let seen = a.seen().len() + b.seen().len() + c.seen().len();
    assert_eq!(seen as u64, total + 1);
    assert_eq!(last_error(&read_stats(&router).await), None);
    router.stop().await;
}

/// Two listeners on one port at 127.0.0.2 and 127.0.0.3 (A records give addresses on one
/// port); a few tries in case the port is taken at the second address.
async fn same_port_pair() -> (TcpListener, TcpListener) {
    for _ in 0..20 {
        let first = TcpListener::bind("127.0.0.2:0").await.unwrap();
        let port = first.local_addr().unwrap().port();
        if let Ok(second) = TcpListener::bind(("127.0.0.3", port)).await {
            return (first, second);
        }
    }
    panic!("no port free at both 127.0.0.2 and 127.0.0.3");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn address_nodes_follow_a_records_and_outlive_a_failing_nameserver() {
    let dns = DnsServer::start().await;
    let (first, second) = same_port_pair().await;
    let port = first.local_addr().unwrap().port();
    let (x, y) = (Backend::on_listener("x", first), Backend::on_listener("y", second));
    let (ip_x, ip_y) = (Ipv4Addr::new(127, 0, 0, 2), Ipv4Addr::new(127, 0, 0, 3));
    dns.set_a("web.test", &[ip_x]);
    let name = DnsName::parse_addresses(&format!("web.test:{port}")).unwrap();
    let router = RunningRouter::start(config(&dns, name)).await;
    let mut client = Client::connect(router.addr).await;
    assert_eq!(client.get("/one").await.node(), "web.test/127.0.0.2");
    let stats = read_stats(&router).await;
    assert_eq!(members(&stats), ["web.test/127.0.0.2"]);

    let before = refreshes(&stats);
    dns.set_a("web.test", &[ip_x, ip_y]);
    let stats = after_next_round(&router, before).await;
    assert_eq!(members(&stats), ["web.test/127.0.0.2", "web.test/127.0.0.3"]);

    // The nameserver fails: the nodes stay, and /stats says why.
    let (before, asked) = (refreshes(&stats), dns.queries());
    dns.set_failing(true);
    let stats = after_next_round(&router, before).await;
    assert!(dns.queries() > asked);
    assert_eq!(members(&stats), ["web.test/127.0.0.2", "web.test/127.0.0.3"]);
    let error = last_error(&stats).unwrap_or_default();
    assert!(!error.is_empty(), "{stats:#?}");
    for _ in 0..4 {
        assert_eq!(client.get("/during").await.status, 200);
    }

    // An empty answer would leave no node at all: the last ones stay.
    dns.set_a("web.test", &[]);
    dns.set_failing(false);
    let stats =
        poll(&router, |s| last_error(s).is_some_and(|e| e.contains("rather than none"))).await;
    assert_eq!(members(&stats), ["web.test/127.0.0.2", "web.test/127.0.0.3"]);

    // A new answer replaces them.
    let before = refreshes(&stats);
    dns.set_a("web.test", &[ip_y]);
    let stats = after_next_round(&router, before).await;
    assert_eq!(members(&stats), ["web.test/127.0.0.3"]);
    assert_eq!(last_error(&stats), None);
    assert_eq!(client.get("/two").await.node(), "web.test/127.0.0.3");
    assert!(!x.seen().is_empty() && !y.seen().is_empty());
    router.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_with_a_short_ttl_are_asked_again_before_refresh_ms() {
    let dns = DnsServer::start().await;
    let a = Backend::start("a").await;
    dns.set_a("web.test", &[Ipv4Addr::LOCALHOST]);
    dns.set_ttl(0);
    let name = DnsName::parse_addresses(&format!("web.test:{}", a.addr.port())).unwrap();
    let mut c = config(&dns, name);
    // Rounds every 10 minutes unless the TTL says sooner; never within 50 ms.
    (c.discovery.refresh_ms, c.discovery.min_refresh_ms) = (600_000, 50);
    let router = RunningRouter::start(c).await;
    let stats = poll(&router, |s| refreshes(s) >= 4).await;
    assert_eq!(stats.discovery.names[0].ttl_s, Some(0));
    assert_eq!(members(&stats), ["web.test/127.0.0.1"]);
    router.stop().await;
}

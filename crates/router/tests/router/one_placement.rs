//! One placement across many routers: routers with their own policy instances in front
//! of the same real larder nodes send a target to the same node, and a router started
//! late follows what the nodes report they hold from its first request.

use std::net::SocketAddr;
use std::time::Duration;

use router::config::{NodeConfig, RouterConfig};
use testkit::TempDir;

use crate::in_process_nodes::InProcessNodes;
use crate::support::{admin_json, Client, RunningRouter};

/// Targets, each in a directory of its own so that `hacc` (which places subtrees) places
/// each one on its own too.
const TARGETS: usize = 24;
const POLICIES: [&str; 3] = ["lard", "lard-r", "hacc"];

fn path(i: usize) -> String {
    format!("/d{i}/page.html")
}

/// Real larder nodes on 127.0.0.1:0, each in a thread of its own, over one docroot.
struct Nodes {
    addrs: Vec<SocketAddr>,
    nodes: InProcessNodes,
    _scratch: TempDir,
}

impl Nodes {
    fn start(count: usize) -> Nodes {
        let scratch = TempDir::new("one-placement");
        for i in 0..TARGETS {
            let dir = scratch.0.join(format!("d{i}"));
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("page.html"), format!("page {i}\n")).unwrap();
        }
        let config = || {
            let mut cfg = node::Config::new(&scratch.0);
            cfg.disk_threads = 1;
            cfg.shutdown_grace = Duration::from_secs(5);
            cfg
        };
        let nodes = InProcessNodes::start((0..count).map(|_| config()));
        Nodes { addrs: nodes.addrs.clone(), nodes, _scratch: scratch }
    }

    /// A router over these nodes, named n1.., polling their load reports every 20 ms.
    fn router_config(&self, kind: &str, placement: &str) -> RouterConfig {
        let nodes = self
            .addrs
            .iter()
            .enumerate()
            .map(|(i, &addr)| NodeConfig {
                name: format!("n{}", i + 1),
                load_report: true,
                ..NodeConfig::new(addr)
            })
            .collect();
        let mut c = RouterConfig { nodes, node_header: true, ..RouterConfig::default() };
        c.policy.kind = kind.parse().unwrap();
        c.policy.placement = placement.parse().unwrap();
        c.load.poll = Duration::from_millis(20);
        c.timeouts.drain = Duration::from_millis(5_000);
        // One subtree per target directory (`/dN/`), whose copies the nodes' digests list:
        // adaptive subtrees start from the root on a router's own counts, and a late
        // router would not follow the holders until it has split them.
        c.mapping.tree_depth = Some(1);
        // The nodes have just started, so their warmths rise while the routers place
        // targets, and each router sees them at its own poll: two routers agree on first
        // choices from the same view, which here means warm nodes.
        c.policy.warmup_max = Duration::ZERO;
        // Likewise the CPU figures each router polls at its own moment: on a busy machine
        // they could call a node overloaded for one router and not the other.
        c.load.w_cpu = 0.0;
        c.load.w_disk = 0.0;
        c
    }

    fn stop(self) {
        self.nodes.stop();
    }
}

/// The node that served `path` through `router`.
async fn served_by(router: &RunningRouter, path: &str) -> String {
    let mut c = Client::connect(router.addr).await;
    let r = c.get(path).await;
    assert_eq!(r.status, 200, "{path}");
    r.node().to_string()
}

/// Ask each target once through routers a and b alternately, first the one then the
/// other: how many targets went to different nodes. Router a first places one target of
/// its own, as a router that has seen other traffic would have.
async fn disagreements(a: &RunningRouter, b: &RunningRouter) -> usize {
    let elsewhere = Client::connect(a.addr).await.get("/elsewhere/page.html").await;
    assert_eq!(elsewhere.status, 404);
    let mut differ = 0;
    for i in 0..TARGETS {
        let (first, second) = if i % 2 == 0 { (a, b) } else { (b, a) };
        let one = served_by(first, &path(i)).await;
        let other = served_by(second, &path(i)).await;
        differ += usize::from(one != other);
    }
    differ
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_routers_send_a_target_to_the_same_node() {
    let nodes = Nodes::start(3);
    for kind in POLICIES {
        let a = RunningRouter::start(nodes.router_config(kind, "shared")).await;
        let b = RunningRouter::start(nodes.router_config(kind, "shared")).await;
        wait_for_capacities(&a, 3).await;
        wait_for_capacities(&b, 3).await;
        // Both know they are not alone (alone, a router places as per-router).
        wait_for_routers(&a, 2).await;
        wait_for_routers(&b, 2).await;
        assert_eq!(disagreements(&a, &b).await, 0, "{kind}: shared placement");
        let stats = admin_json(a.admin, "/stats").await;
        assert_eq!(stats["placement"]["mode"], "shared");
        assert_eq!(stats["placement"]["following"], "shared", "{kind}: not alone");
        a.stop().await;
        b.stop().await;
        // The same with each router's own least-loaded choices: they do disagree, which
        // is what shared placement is for.
        let a = RunningRouter::start(nodes.router_config(kind, "per-router")).await;
        let b = RunningRouter::start(nodes.router_config(kind, "per-router")).await;
        assert!(disagreements(&a, &b).await > 0, "{kind}: per-router tables disagree");
        a.stop().await;
        b.stop().await;
    }
    nodes.stop();
}

/// Wait (bounded) until `router` has every node's cache capacity from its load report:
/// shared first choices weigh capacities, so two routers agree once both know them all.
async fn wait_for_capacities(router: &RunningRouter, nodes: usize) {
    for _ in 0..400 {
        let stats = admin_json(router.admin, "/stats").await;
        let known = stats["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|n| n["cache_capacity_bytes"].as_u64().is_some_and(|c| c > 0))
            .count();
        if known == nodes {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("the router never got the nodes' cache capacities");
}

/// Wait (bounded) until the nodes tell `router` that `count` routers poll them.
async fn wait_for_routers(router: &RunningRouter, count: u64) {
    for _ in 0..400 {
        let stats = admin_json(router.admin, "/stats").await;
        if stats["placement"]["routers"].as_u64() == Some(count) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("the router never heard of {count} routers");
}

/// What the node at `addr` reports as the routers polling it (a plain GET, which names
/// no router and so is not counted).
fn node_routers(addr: SocketAddr) -> u64 {
    let raw = testkit::get_once(&addr.to_string(), wire::LOAD_REPORT_PATH, Duration::from_secs(5));
    let body = raw.split_once("\r\n\r\n").map_or("", |(_, body)| body);
    wire::LoadReport::parse(body.as_bytes()).unwrap().routers
}

/// Every node counts the routers that poll it, by the id each names, and a router
/// hears that count: 1 with one router, 2 once a second polls (forgetting routers that
/// stopped is the node's own unit test).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nodes_count_the_routers_polling_them() {
    let nodes = Nodes::start(2);
    assert_eq!(node_routers(nodes.addrs[0]), 0, "nobody polled yet");
    let a = RunningRouter::start(nodes.router_config("lard", "shared")).await;
    wait_for_routers(&a, 1).await;
    assert_eq!(node_routers(nodes.addrs[0]), 1);
    assert_eq!(node_routers(nodes.addrs[1]), 1);
    // Alone in front of two equal nodes, the router says it follows LARD's own rule.
    wait_for_capacities(&a, 2).await;
    served_by(&a, &path(0)).await;
    let stats = admin_json(a.admin, "/stats").await;
    assert_eq!(stats["placement"]["mode"], "shared");
    assert_eq!(stats["placement"]["following"], "per-router");
    let b = RunningRouter::start(nodes.router_config("lard", "shared")).await;
    wait_for_routers(&a, 2).await;
    wait_for_routers(&b, 2).await;
    assert_eq!(node_routers(nodes.addrs[0]), 2);
    b.stop().await;
    a.stop().await;
    nodes.stop();
}

/// Wait (bounded) until `router` has folded every node's holdings with at least `keys`
/// keys in all.
async fn wait_for_holdings(router: &RunningRouter, nodes: usize, keys: u64) {
    for _ in 0..400 {
        let stats = admin_json(router.admin, "/stats").await;
        let reporting = stats["placement"]["nodes_reporting_holdings"].as_u64().unwrap();
        let held: u64 = stats["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|n| n["holdings_keys"].as_u64())
            .sum();
        if reporting as usize == nodes && held >= keys {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("the router never saw the nodes' holdings");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_router_started_late_follows_what_the_nodes_hold() {
    for kind in POLICIES {
        let nodes = Nodes::start(3);
        // The first router places targets by its own load (least loaded, ties rotating),
        // so many sit away from where hashing on names would put them.
        let first = RunningRouter::start(nodes.router_config(kind, "per-router")).await;
        let mut placed = Vec::new();
        for i in 0..TARGETS {
            placed.push(served_by(&first, &path(i)).await);
        }
        let late = RunningRouter::start(nodes.router_config(kind, "shared")).await;
        wait_for_holdings(&late, 3, TARGETS as u64).await;
        for (i, node) in placed.iter().enumerate() {
            assert_eq!(&served_by(&late, &path(i)).await, node, "{kind}: {}", path(i));
        }
        let stats = admin_json(late.admin, "/stats").await;
        let share = stats["placement"]["recent_picks_on_holders"].as_f64().unwrap();
        assert_eq!(share, 1.0, "{kind}: every pick went to a node holding the target");
        assert!(stats["nodes"][0]["report_age_ms"].as_u64().is_some());
        first.stop().await;
        late.stop().await;
        nodes.stop();
    }
}

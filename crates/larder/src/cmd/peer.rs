//! `larder peer`: one peer of a cluster without a router tier — a node and a distributor
//! (the router, as a library) in one process.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context;
use policy::PolicyKind;
use router::config::DnsName;
use router::{NodeConfig, RouterConfig, RouterError};

/// Serve as one peer of a cluster with no router tier: a node and a distributor in one
/// process.
///
/// The node (the server of `larder node`, with its flags) listens on --backend, where the
/// other peers reach it. The distributor (the router of `larder route`: the same
/// placement, health checks, drain, reload and admin API) accepts clients on --listen and
/// places each request over this node and the other peers' nodes (--peer, one for each
/// other peer's --backend or --advertise address, or --peers-dns; this peer's own node is
/// always one of them) with the same policy, load reports and holdings a router uses, so every peer agrees
/// where a document lives. What this node should serve it serves; every other request is
/// forwarded to the node that should serve it, over pooled keep-alive connections.
///
/// Never more than one hop: a distributor forwards only to nodes, and a request that
/// already passed another peer's distributor (its Via names the distributors' token,
/// `via` in --router-config, before this one's) is served by the node that received it,
/// so even a --peer that names a distributor by mistake cannot make a loop. --listen is
/// bound with SO_REUSEPORT: peers on one host share one address and the kernel spreads
/// clients among them; across hosts, any layer-4 balancer or a Kubernetes Service fronts
/// them.
///
/// SIGHUP re-reads --router-config (the peer flags stay on top); SIGTERM or Ctrl-C drains
/// the distributor, then stops the node. The admin API (/stats, /metrics, /targets,
/// /healthz) listens where --admin says.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Address clients connect to, bound with SO_REUSEPORT (port 0 takes a free port; the
    /// ready line names the bound one).
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// Address this peer's node listens on, for the distributors of every peer (port 0
    /// takes a free port; the ready line names it as `backend`).
    #[arg(long, default_value = "127.0.0.1:8081")]
    backend: SocketAddr,
    /// This node's address as the other peers list it, when it is not --backend (e.g. the
    /// pod's address when --backend is 0.0.0.0:8081).
    #[arg(long, value_name = "ADDR")]
    advertise: Option<SocketAddr>,
    /// Find the peers' nodes through DNS: every A and AAAA record of NAME is a peer's
    /// node on PORT (a Kubernetes headless Service, say), this peer's own included (it is
    /// found under --advertise); asked again as `larder route --nodes-dns` does.
    #[arg(long = "peers-dns", value_name = "NAME:PORT", value_parser = router::overrides::dns_flag)]
    peers_dns: Vec<DnsName>,
    /// Distribution policy: rr, wrr, least, hash, bounded, lard, lard-r, hacc or class
    /// [default: lard-r, or --router-config's].
    #[arg(long)]
    policy: Option<PolicyKind>,
    /// Admin API address, e.g. 127.0.0.1:9090 [default: --router-config's, none without].
    #[arg(long, value_name = "ADDR")]
    admin: Option<String>,
    // --help prints this text as written: its <…> are not HTML.
    #[allow(rustdoc::invalid_html_tags)]
    /// The distributor's name in X-Larder-Router [default: peer-<pid>].
    #[arg(long)]
    name: Option<String>,
    /// Distributor configuration (TOML, as `larder route --config`; see
    /// examples/router.toml) for everything else. Its nodes are peers' nodes as --peer
    /// names them (re-read on SIGHUP, so peers join without a restart); its listen
    /// address gives way to --listen, its DNS names to --peers-dns.
    #[arg(long, value_name = "FILE")]
    router_config: Option<PathBuf>,
    /// Hand each plain HTTP/1.1 client connection to the node of its first request (this
    /// peer's or another peer's on this host) over the node's --handoff-socket, instead of
    /// relaying its responses; a later request on it that belongs to another node is
    /// served as --handoff-later says, and a handoff that fails is relayed as without this
    /// flag (`[handoff] enabled` in --router-config).
    #[arg(long, requires = "handoff_socket")]
    handoff: bool,
    /// What the node holding a handed-off connection does with a later request on it that
    /// belongs to another node: `forward` fetches it from that node over pooled
    /// keep-alive connections and answers it itself (one loopback round trip per such
    /// request), `hand-on` passes the connection on to that node (a Unix-socket connect,
    /// the descriptor and two round trips per change of owner: costly when consecutive
    /// requests keep changing owner), `here` serves it without asking anyone. A forward or hand-on that fails is served here.
    #[arg(long, value_enum, value_name = "HOW", default_value_t = node::LaterRequests::default())]
    handoff_later: node::LaterRequests,
    /// Later requests forwarded to one other node at once; beyond it they are served
    /// here.
    #[arg(long, value_name = "N", default_value_t = node::ForwardConfig::default().max_connections_per_node)]
    forward_max_connections: usize,
    /// Bound on a forward from connect to the response head and on each wait for its body;
    /// beyond it the request is served here.
    #[arg(long, value_name = "MS", default_value_t = node::ForwardConfig::default().timeout.as_millis() as u64)]
    forward_timeout_ms: u64,
    /// Largest forwarded response body held whole before it is answered (a larger one is
    /// relayed as it arrives, so a node failing within it ends the client's connection).
    #[arg(long, value_name = "KIB", default_value_t = node::ForwardConfig::default().max_buffered_bytes >> 10)]
    forward_max_buffered_kb: u64,
    #[command(flatten, next_help_heading = "Node")]
    node: node::Flags,
}

/// The peer's addresses and distributor settings: what SIGHUP reads again.
#[derive(Clone, Debug)]
struct Peering {
    listen: SocketAddr,
    /// This node as the peers name it.
    own: SocketAddr,
    peers: Vec<SocketAddr>,
    peers_dns: Vec<DnsName>,
    policy: Option<PolicyKind>,
    admin: Option<String>,
    name: Option<String>,
    router_config: Option<PathBuf>,
    handoff: bool,
    /// The node caches an origin's content: the distributor names a target's first node
    /// to the others it sends the target to (replicas, local copies), and the node fills
    /// from that peer (when --peer lists it) instead of from the origin.
    fill_from_peers: bool,
}

impl Peering {
    /// The distributor's configuration: the file (or defaults with lard-r), then the
    /// peers as its nodes, this node as its local one.
    fn config(&self) -> Result<RouterConfig, RouterError> {
        let mut c = match &self.router_config {
            Some(path) => RouterConfig::load(path)?,
            None => {
                let mut c = RouterConfig::default();
                c.policy.kind = PolicyKind::LardR;
                c
            }
        };
        c.listen = self.listen;
        c.reuseport = true;
        c.handoff.enabled |= self.handoff;
        c.peer_fill |= self.fill_from_peers;
        if let Some(p) = self.policy {
            c.policy.kind = p;
        }
        if let Some(a) = &self.admin {
            c.admin.listen.clone_from(a);
        }
        c.name = Some(self.name.clone().unwrap_or_else(|| format!("peer-{}", std::process::id())));
        let mut peers = self.peers.clone();
        peers.extend(c.nodes.iter().map(|n| n.addr));
        if !self.peers_dns.is_empty() {
            c.discovery.dns.clone_from(&self.peers_dns);
        }
        for name in &mut c.discovery.dns {
            name.load_report = true;
        }
        c.nodes = peer_nodes(self.own, &peers, !c.discovery.dns.is_empty());
        c.local_node = Some(self.own);
        Ok(c)
    }
}

/// Every peer's node in one order (each a larder node, polled for its load report), so
/// every distributor lists the same nodes alike: the
/// peers named, and this one's own unless DNS finds it (under the name DNS gives every
/// peer's node, which placement hashes).
fn peer_nodes(own: SocketAddr, peers: &[SocketAddr], by_dns: bool) -> Vec<NodeConfig> {
    let mut addrs: Vec<SocketAddr> = peers.to_vec();
    if !by_dns {
        addrs.push(own);
    }
    addrs.sort();
    addrs.dedup();
    addrs.into_iter().map(|a| NodeConfig { load_report: true, ..NodeConfig::new(a) }).collect()
}

pub fn run(args: Args) -> anyhow::Result<()> {
    serve(args).context("larder peer")
}

/// The node on a thread of its own (its own event loop, as `larder node` runs it), the
/// distributor on a runtime beside it; the node stops once the distributor has drained.
fn serve(args: Args) -> anyhow::Result<()> {
    let peers = args.node.peers.clone();
    let (mut cfg, _docroot) = args.node.config()?;
    // The node asks the distributor where later requests on a connection it adopted belong.
    let hand_on = router::PeerHandOn::new();
    if let Some(h) = &mut cfg.handoff {
        h.hand_on = Some(node::SharedHandOn(std::sync::Arc::new(hand_on.clone())));
        h.later = args.handoff_later;
        h.forward = node::ForwardConfig {
            max_connections_per_node: args.forward_max_connections,
            timeout: std::time::Duration::from_millis(args.forward_timeout_ms),
            max_buffered_bytes: args.forward_max_buffered_kb << 10,
        };
    }
    cfg.validate()?;
    super::node::raise_fd_limit(&cfg)?;
    let backend = std::net::TcpListener::bind(args.backend)
        .with_context(|| format!("binding the node's address {}", args.backend))?;
    let bound = backend.local_addr()?;
    let peering = Peering {
        listen: args.listen,
        own: args.advertise.unwrap_or(bound),
        peers,
        peers_dns: args.peers_dns,
        policy: args.policy,
        admin: args.admin,
        name: args.name,
        router_config: args.router_config,
        handoff: args.handoff,
        fill_from_peers: cfg.origin.is_some(),
    };
    let config = peering.config()?;
    let (stop_node, node_stopped) = tokio::sync::oneshot::channel::<()>();
    let node = std::thread::Builder::new()
        .name("larder-node".into())
        .spawn(move || {
            node::serve(backend, cfg, async move {
                let _ = node_stopped.await;
            })
        })
        .context("starting the node")?;
    let runtime = super::route::runtime(config.worker_threads(), "larder-peer")?;
    let distributed =
        runtime.block_on(super::route::distribute(config, Some(bound), Some(hand_on), move || {
            peering.config()
        }));
    let _ = stop_node.send(());
    let served = node.join().map_err(|_| anyhow::anyhow!("the node's thread panicked"))?;
    distributed?;
    Ok(served?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    /// `larder peer` as the Kubernetes manifest runs it, with the pod's address filled in.
    #[test]
    fn the_kubernetes_peers_arguments_parse_as_larder_peer_takes_them() {
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            args: Args,
        }
        let manifest = include_str!("../../../../deploy/kubernetes/peers/peers.yaml");
        let mut lines = manifest.lines().map(str::trim).skip_while(|l| *l != "- peer").skip(1);
        let args: Vec<String> = lines
            .by_ref()
            .filter(|l| !l.starts_with('#'))
            .map_while(|l| l.strip_prefix("- --"))
            .map(|a| format!("--{}", a.replace("$(POD_IP)", "10.1.2.3")))
            .collect();
        assert!(args.len() >= 6, "{args:?}");
        let cli = <Cli as clap::Parser>::try_parse_from(
            std::iter::once("peer".to_string()).chain(args.iter().cloned()),
        )
        .unwrap_or_else(|e| panic!("{args:?}: {e}"));
        let a = cli.args;
        assert_eq!(a.advertise, Some(addr("10.1.2.3:8081")));
        assert_eq!(a.peers_dns.len(), 1);
        assert_eq!((a.listen.port(), a.backend.port()), (8080, 8081));
    }

    #[test]
    fn every_peer_lists_the_same_nodes_in_the_same_order() {
        let (a, b, c) = (addr("10.0.0.1:8081"), addr("10.0.0.2:8081"), addr("10.0.0.3:8081"));
        let names = |own, peers: &[SocketAddr]| -> Vec<SocketAddr> {
            peer_nodes(own, peers, false).iter().map(|n| n.addr).collect()
        };
        let on_a = names(a, &[c, b]);
        assert_eq!(on_a, [a, b, c]);
        assert_eq!(names(b, &[a, c]), on_a);
        assert_eq!(names(c, &[a, b, c]), on_a, "naming itself too changes nothing");
        assert_eq!(peer_nodes(a, &[b], true).len(), 1, "DNS finds this node");
    }

    #[test]
    fn the_distributor_serves_clients_with_reuseport_and_knows_its_own_node() {
        let peering = Peering {
            listen: addr("127.0.0.1:0"),
            own: addr("127.0.0.1:9001"),
            peers: vec![addr("127.0.0.1:9002")],
            peers_dns: Vec::new(),
            policy: None,
            admin: None,
            name: Some("p1".into()),
            router_config: None,
            handoff: false,
            fill_from_peers: true,
        };
        let c = peering.config().unwrap();
        assert!(c.reuseport);
        assert!(c.peer_fill, "a caching peer's replicas fill from the first node");
        assert_eq!(c.local_node, Some(addr("127.0.0.1:9001")));
        assert_eq!(c.policy.kind, PolicyKind::LardR);
        assert_eq!(c.nodes.len(), 2);
        assert_eq!(c.name.as_deref(), Some("p1"));
    }
}

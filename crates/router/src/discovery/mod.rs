//! DNS discovery of nodes (as pingora's load-balancing crate keeps its service discovery
//! beside the health checks). This file is the loop: every round asks the configured
//! nameserver for each `[[discovery.dns]]` name (`resolve`), hands the answers (`answers`
//! names them) to the state machine (`state`: last good answer, TTL) and applies the
//! nodes through [`Cluster::set_discovered`], the same path as a reload. A name that
//! fails keeps its last nodes and says so in one event line. Its settings are `config`'s
//! ([`DiscoveryConfig`]), its `/stats` part `view`'s.

mod answers;
pub(crate) mod config;
mod resolve;
mod state;
mod view;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hickory_resolver::TokioResolver;
use tokio::sync::oneshot;

pub(crate) use state::Discovered;

use crate::cluster::Cluster;
use crate::config::NodeConfig;
use crate::discovery::config::DiscoveryConfig;
use crate::discovery::resolve::{build, resolve, ResolverKey};
use crate::discovery::state::Note;
use crate::log::event;

/// Where the system names its nameservers.
const RESOLV_CONF: &str = "/etc/resolv.conf";

/// Run discovery rounds until the task is dropped; `first` hears when the first round is
/// in the membership (at once when no name is configured).
pub(crate) async fn run(cluster: Arc<Cluster>, first: oneshot::Sender<()>) {
    let mut first = Some(first);
    let mut resolver: Option<(ResolverKey, TokioResolver)> = None;
    loop {
        let config = cluster.settings().config.discovery.clone();
        let wait = round(&cluster, &config, &mut resolver).await;
        if let Some(first) = first.take() {
            let _ = first.send(());
        }
        tokio::time::sleep(wait).await;
    }
}

/// One round over every configured name; returns how long to wait for the next.
async fn round(
    cluster: &Cluster,
    config: &DiscoveryConfig,
    resolver: &mut Option<(ResolverKey, TokioResolver)>,
) -> Duration {
    let resolv_conf = if config.resolver.is_empty() && !config.dns.is_empty() {
        std::fs::read_to_string(RESOLV_CONF).ok()
    } else {
        None
    };
    // Checked when the config was loaded; a failure here can only be a changed file.
    let addr = config
        .resolver_addr(resolv_conf.as_deref())
        .unwrap_or(SocketAddr::from(([127, 0, 0, 1], 53)));
    cluster.discovered().begin(&config.dns, (!config.dns.is_empty()).then_some(addr));
    if !config.dns.is_empty() {
        let key = ResolverKey { addr, timeout_ms: config.timeout_ms, attempts: config.attempts };
        if resolver.as_ref().is_none_or(|(k, _)| *k != key) {
            let built = build(&key);
            *resolver = Some((key, built));
        }
        let r = &resolver.as_ref().expect("built above").1;
        // Answers are asked for afresh every round; their TTLs set when the next one is.
        r.clear_cache();
        // A name never takes longer than this: an SRV lookup, then its targets at once.
        let limit = Duration::from_millis(config.timeout_ms)
            .saturating_mul(config.attempts as u32)
            .saturating_mul(3);
        for (i, name) in config.dns.iter().enumerate() {
            let result = match tokio::time::timeout(limit, resolve(r, name)).await {
                Ok(result) => result,
                Err(_) => Err(format!("no answer within {} ms", limit.as_millis())),
            };
            let note = cluster.discovered().record(i, result, Instant::now());
            say(note);
        }
    }
    let (nodes, wait) = {
        let mut d = cluster.discovered();
        for note in d.finish(cluster.static_nodes()) {
            say(Some(note));
        }
        let nodes: Vec<NodeConfig> = d
            .nodes(config.max_nodes)
            .into_iter()
            .map(|(spec, f)| NodeConfig {
                name: f.name.clone(),
                weight: spec.weight,
                load_report: spec.load_report,
                ..NodeConfig::new(f.addr)
            })
            .collect();
        (nodes, config.next_wait(d.shortest_ttl()))
    };
    match cluster.set_discovered(nodes) {
        Ok(Some(change)) => event(
            "info",
            "discovered nodes changed",
            &[("joined", &change.joined.join(" ")), ("left", &change.left.join(" "))],
        ),
        Ok(None) => {}
        Err(e) => event("error", "discovered nodes refused", &[("error", &e)]),
    }
    cluster.discovered().applied(Instant::now() + wait);
    wait
}

/// The event line for a note.
fn say(note: Option<Note>) {
    match note {
        Some(Note::Failed { name, error }) => event(
            "warn",
            "discovery failed; the last nodes found stay",
            &[("name", &name), ("error", &error)],
        ),
        Some(Note::Recovered { name }) => {
            event("info", "discovery answers again", &[("name", &name)])
        }
        Some(Note::KeptRatherThanNone { name }) => {
            event("warn", "discovery found no node; the last nodes found stay", &[("name", &name)])
        }
        None => {}
    }
}

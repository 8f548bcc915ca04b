//! DNS discovery of nodes, the loop (as pingora's load-balancing crate keeps its service
//! discovery beside the health checks): every round asks the configured nameserver for
//! each `[[discovery.dns]]` name (A and AAAA, or SRV and then each target's A and AAAA),
//! hands the answers to `discovered` (naming, last good answer, TTL) and applies the
//! nodes through [`Cluster::set_discovered`], the same path as a reload. A name that
//! fails keeps its last nodes and says so in one event line.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hickory_resolver::config::{NameServerConfigGroup, ResolverConfig, ResolverOpts};
use hickory_resolver::name_server::TokioConnectionProvider;
use hickory_resolver::proto::op::ResponseCode;
use hickory_resolver::proto::rr::{Name, RData, RecordType};
use hickory_resolver::proto::ProtoErrorKind;
use hickory_resolver::{ResolveError, TokioResolver};
use tokio::sync::oneshot;
use tokio::task::JoinSet;

use crate::cluster::Cluster;
use crate::config::{DiscoveryConfig, DnsKind, DnsName, NodeConfig};
use crate::discovered::{address_nodes, srv_nodes, Answer, Note, SrvTarget};
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

/// What a resolver is built from; a reload that changes it builds a new one.
#[derive(PartialEq)]
struct ResolverKey {
    addr: SocketAddr,
    timeout_ms: u64,
    attempts: usize,
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

/// A resolver that asks `key.addr` only (UDP, TCP for truncated answers), with no search
/// domains and no hosts file.
fn build(key: &ResolverKey) -> TokioResolver {
    let servers = NameServerConfigGroup::from_ips_clear(&[key.addr.ip()], key.addr.port(), true);
    let config = ResolverConfig::from_parts(None, Vec::new(), servers);
    let mut opts = ResolverOpts::default();
    opts.timeout = Duration::from_millis(key.timeout_ms);
    opts.attempts = key.attempts;
    opts.use_hosts_file = hickory_resolver::config::ResolveHosts::Never;
    opts.ndots = 0;
    TokioResolver::builder_with_config(config, TokioConnectionProvider::default())
        .with_options(opts)
        .build()
}

/// One name's answer, or why there is none. "No such name" and "no records" are an empty
/// answer, not an error.
async fn resolve(r: &TokioResolver, spec: &DnsName) -> Result<Answer, String> {
    match spec.kind {
        DnsKind::A => {
            let (ips, ttl) = addresses(r, &spec.name).await?;
            Ok(Answer { found: address_nodes(&spec.name, spec.port, &ips), ttl })
        }
        DnsKind::Srv => {
            let lookup = match r.lookup(fqdn(&spec.name)?, RecordType::SRV).await {
                Ok(lookup) => lookup,
                Err(e) if no_records(&e) => return Ok(Answer::default()),
                Err(e) => return Err(said(&e)),
            };
            let mut ttl = None;
            let mut asks = JoinSet::new();
            for record in lookup.records() {
                let RData::SRV(srv) = record.data() else { continue };
                ttl = shorter(ttl, record.ttl());
                let (r, target, port) = (r.clone(), srv.target().to_utf8(), srv.port());
                asks.spawn(async move {
                    let found = addresses(&r, &target).await;
                    (target, port, found)
                });
            }
            let mut targets = Vec::new();
            while let Some(joined) = asks.join_next().await {
                let Ok((target, port, found)) = joined else { continue };
                let (ips, target_ttl) = found.map_err(|e| format!("{target}: {e}"))?;
                ttl = match (ttl, target_ttl) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
                targets.push(SrvTarget { target, port, ips });
            }
            Ok(Answer { found: srv_nodes(&targets), ttl })
        }
    }
}

/// The A and AAAA records of `name` and their shortest TTL.
async fn addresses(
    r: &TokioResolver,
    name: &str,
) -> Result<(Vec<IpAddr>, Option<Duration>), String> {
    let lookup = match r.lookup_ip(fqdn(name)?).await {
        Ok(lookup) => lookup,
        Err(e) if no_records(&e) => return Ok((Vec::new(), None)),
        Err(e) => return Err(said(&e)),
    };
    let mut ttl = None;
    let mut ips = Vec::new();
    for record in lookup.as_lookup().records() {
        let ip = match record.data() {
            RData::A(a) => IpAddr::V4(a.0),
            RData::AAAA(a) => IpAddr::V6(a.0),
            _ => continue,
        };
        ttl = shorter(ttl, record.ttl());
        ips.push(ip);
    }
    Ok((ips, ttl))
}

fn shorter(ttl: Option<Duration>, secs: u32) -> Option<Duration> {
    let this = Duration::from_secs(u64::from(secs));
    Some(ttl.map_or(this, |t| t.min(this)))
}

/// `name` as an absolute name, so no search domain is tried.
fn fqdn(name: &str) -> Result<Name, String> {
    let mut n = Name::from_utf8(name).map_err(|e| format!("{name}: {e}"))?;
    n.set_fqdn(true);
    Ok(n)
}

/// The name has no such records, or does not exist: an empty answer. (hickory reports a
/// nameserver's failure, SERVFAIL or REFUSED, as "no records" too; those are errors.)
fn no_records(e: &ResolveError) -> bool {
    match e.proto().map(|p| p.kind()) {
        Some(ProtoErrorKind::NoRecordsFound { response_code, .. }) => {
            matches!(response_code, ResponseCode::NoError | ResponseCode::NXDomain)
        }
        _ => false,
    }
}

/// A resolver error as the event line and `/stats` say it.
fn said(e: &ResolveError) -> String {
    e.to_string()
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

//! Asking the nameserver: a resolver pointed at the configured one only, and one name's
//! records turned into an [`Answer`] (A and AAAA, or SRV and then each target's A and
//! AAAA, asked at once), with "no such name" and "no records" as an empty answer.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use hickory_resolver::config::{NameServerConfigGroup, ResolverConfig, ResolverOpts};
use hickory_resolver::name_server::TokioConnectionProvider;
use hickory_resolver::proto::op::ResponseCode;
use hickory_resolver::proto::rr::{Name, RData, RecordType};
use hickory_resolver::proto::ProtoErrorKind;
use hickory_resolver::{ResolveError, TokioResolver};
use tokio::task::JoinSet;

use crate::discovery::answers::{address_nodes, srv_nodes, Answer, SrvTarget};
use crate::discovery::config::{DnsKind, DnsName};

/// What a resolver is built from; a reload that changes it builds a new one.
#[derive(PartialEq)]
pub(crate) struct ResolverKey {
    pub addr: SocketAddr,
    pub timeout_ms: u64,
    pub attempts: usize,
}

/// A resolver that asks `key.addr` only (UDP, TCP for truncated answers), with no search
/// domains and no hosts file.
pub(crate) fn build(key: &ResolverKey) -> TokioResolver {
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
pub(crate) async fn resolve(r: &TokioResolver, spec: &DnsName) -> Result<Answer, String> {
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

//! `larder purge URL`: send `PURGE` to a router ([`wire::PurgeRequest`]) and print its
//! answer ([`wire::PurgeReport`]).

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use anyhow::{bail, Context};
use wire::{Invalidation, InvalidationMode, InvalidationScope, PurgeRequest};

/// Purge a target from every caching node behind a router.
///
/// Sends `PURGE /path` to the router at URL (its traffic listener, plain http://); the
/// router asks every node to drop what it stores for the target and answers on how many
/// nodes it was held, e.g. `purged on 2 of 3 nodes`, which this prints. A URL ending in
/// `*` (quote it in the shell), or --prefix, purges every target starting with the path.
/// The router accepts purges only from its `purge_from` networks (loopback by default)
/// and answers others 403. Exits 1 unless the router answered 200.
///
/// Example: larder purge 'http://127.0.0.1:8080/static/*' --soft
#[derive(clap::Args, Debug)]
pub struct Args {
    // --help prints this text as written: its brackets are not links.
    #[allow(rustdoc::broken_intra_doc_links)]
    /// The router and the target: http://HOST[:PORT]/PATH[?QUERY], or ending in `*` for a
    /// prefix.
    url: String,
    /// Mark the stored responses stale instead of removing them: the next request
    /// revalidates with the origin, and an origin error can still be answered with them
    /// (stale-if-error).
    #[arg(long)]
    soft: bool,
    /// Purge every target that starts with the path (the same as ending the URL in `*`).
    #[arg(long)]
    prefix: bool,
    // --help prints this text as written: its brackets are not links.
    #[allow(rustdoc::broken_intra_doc_links)]
    /// The site to purge on nodes that keep one object per site (`larder node
    /// --origin-host client`), sent as the purge's Host [default: the URL's HOST[:PORT]].
    #[arg(long, value_name = "HOST")]
    site: Option<String>,
    /// Give up after this many seconds.
    #[arg(long, value_name = "S", default_value_t = 10)]
    timeout: u64,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let (authority, target) = split_url(&args.url)?;
    let mut purge =
        PurgeRequest::parse(target, None).map_err(|e| anyhow::anyhow!("{:?}: {e}", args.url))?.0;
    if args.soft {
        purge.mode = InvalidationMode::Soft;
    }
    if args.prefix {
        purge.scope = InvalidationScope::Prefix;
    }
    let site = args.site.as_deref().unwrap_or(authority);
    if site.is_empty() || site.bytes().any(|b| b <= b' ' || b == 0x7f || b == b'/') {
        bail!("{site:?} is not a host[:port] for --site");
    }
    let timeout = Duration::from_secs(args.timeout.max(1));
    let (status, body) = send(authority, site, &purge, timeout)
        .with_context(|| format!("purging at {authority}"))?;
    print!("{body}");
    if !body.ends_with('\n') {
        println!();
    }
    if status != 200 {
        bail!("the router answered {status}");
    }
    Ok(())
}

/// `http://host:port/path` as its authority and origin-form target.
fn split_url(url: &str) -> anyhow::Result<(&str, &str)> {
    let Some(rest) = url.strip_prefix("http://") else {
        bail!("{url:?}: give the router as http://HOST[:PORT]/PATH (https is not supported)");
    };
    let slash = rest.find('/').unwrap_or(rest.len());
    let (authority, target) = rest.split_at(slash);
    if authority.is_empty() || target.is_empty() {
        bail!("{url:?}: give the router as http://HOST[:PORT]/PATH, with the path to purge");
    }
    Ok((authority, target))
}

/// Send the purge for `site` to the router at `authority` and read the whole answer (the
/// router closes after it).
fn send(
    authority: &str,
    site: &str,
    purge: &Invalidation,
    timeout: Duration,
) -> anyhow::Result<(u16, String)> {
    let with_port =
        if authority.contains(':') { authority.to_string() } else { format!("{authority}:80") };
    let addr = with_port
        .to_socket_addrs()
        .with_context(|| format!("resolving {with_port}"))?
        .next()
        .with_context(|| format!("{with_port} has no address"))?;
    let mut stream = TcpStream::connect_timeout(&addr, timeout)?;
    stream.set_read_timeout(Some(timeout))?;
    stream.set_write_timeout(Some(timeout))?;
    stream.write_all(&PurgeRequest(purge.clone()).request(site))?;
    let mut answer = Vec::new();
    stream.take(1 << 20).read_to_end(&mut answer).context("reading the answer")?;
    let text = String::from_utf8_lossy(&answer);
    let (head, body) = text.split_once("\r\n\r\n").context("the answer was not HTTP")?;
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse::<u16>().ok())
        .with_context(|| format!("the answer was not HTTP: {head:?}"))?;
    Ok((status, body.to_string()))
}

//! The standing corpus (`tests/corpus/desync.txt`: request-smuggling and bad-input
//! vectors) through the router, in front of a deliberately lenient back-end that numbers
//! every request it parses. Every vector must be answered, and every request the back-end
//! saw must have had its response delivered to the client that sent it: a request seen
//! but never answered through the router was smuggled past it, and a pooled upstream
//! connection left out of step would hand a later client someone else's response (each
//! vector is followed by a probe on a fresh connection that checks exactly that).

use std::collections::HashSet;

use crate::lenient::Lenient;
use crate::support::{Client, RunningRouter};

const CORPUS: &str = include_str!("../corpus/desync.txt");

/// The vectors: `name | bytes` lines, bytes with `\r \n \t \0 \\ \xHH` escapes.
fn vectors() -> Vec<(&'static str, Vec<u8>)> {
    CORPUS
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (name, raw) = l.split_once(" | ").unwrap_or_else(|| panic!("no ` | ` in {l:?}"));
            (name, unescape(raw))
        })
        .collect()
}

fn unescape(text: &str) -> Vec<u8> {
    let mut out = Vec::new();
    let mut bytes = text.bytes();
    while let Some(b) = bytes.next() {
        if b != b'\\' {
            out.push(b);
            continue;
        }
        match bytes.next() {
            Some(b'r') => out.push(b'\r'),
            Some(b'n') => out.push(b'\n'),
            Some(b't') => out.push(b'\t'),
            Some(b'0') => out.push(0),
            Some(b'\\') => out.push(b'\\'),
            Some(b'x') => {
                let hex = [bytes.next().unwrap(), bytes.next().unwrap()];
                out.push(u8::from_str_radix(std::str::from_utf8(&hex).unwrap(), 16).unwrap());
            }
            other => panic!("bad escape {other:?} in {text:?}"),
        }
    }
    out
}

/// Most responses one vector can get (it holds at most a few requests).
const MAX_REPLIES: usize = 8;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_vector_desyncs_or_smuggles_and_every_vector_is_answered() {
    let vectors = vectors();
    assert!(vectors.len() >= 80, "{} vectors", vectors.len());
    let mut backend = Lenient::start().await;
    let mut config = router::RouterConfig {
        nodes: vec![router::NodeConfig::new(backend.addr)],
        ..router::RouterConfig::default()
    };
    config.timeouts.drain = std::time::Duration::from_millis(5_000);
    let router = RunningRouter::start(config).await;
    let mut delivered = HashSet::new();
    for (i, (name, raw)) in vectors.iter().enumerate() {
        let mut client = Client::connect(router.addr).await;
        client.send_raw(raw).await;
        // Nothing more comes: the router answers what it has, then sees the end.
        client.finish_sending().await;
        let head_request = raw.starts_with(b"HEAD ");
        let mut statuses = Vec::new();
        while let Some(reply) = client.reply(head_request).await {
            statuses.push(reply.status);
            if let Some(id) = reply.header("x-seen") {
                delivered.insert(id.parse::<u64>().unwrap());
            }
            assert!(statuses.len() <= MAX_REPLIES, "{name}: {statuses:?}");
        }
        assert!(!statuses.is_empty(), "{name}: no answer");

        let probe = format!("/probe-{i}");
        let reply = Client::connect(router.addr).await.get(&probe).await;
        let body = String::from_utf8_lossy(&reply.body);
        assert_eq!(body, format!("seen {probe}"), "after {name}: someone else's response");
        delivered.insert(reply.header("x-seen").unwrap().parse::<u64>().unwrap());
    }
    router.stop().await;
    backend.quiet().await;
    let seen = backend.seen();
    assert!(seen.len() > vectors.len(), "the back-end answered the probes and more");
    // Between the probes that follow them, the requests each vector got through.
    let after = |id: u64| {
        let probe = seen[..id as usize].iter().rev().find_map(|(_, t)| t.strip_prefix("/probe-"));
        let next = probe.map_or(0, |p| p.parse::<usize>().unwrap() + 1);
        vectors[next].0
    };
    for &(id, ref target) in &seen {
        assert!(!target.contains("smuggled"), "{target} reached the back-end ({})", after(id));
        let vector = after(id);
        assert!(delivered.contains(&id), "{target} (#{id}, {vector}) was never answered");
    }
}

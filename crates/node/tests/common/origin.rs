//! Helpers for the tests of caching nodes: a node in front of test origins, the cache
//! status of a response, a GET with extra fields and the node's load report.

use super::{Client, TestNode};
use node::origin::{OriginConfig, OriginUrl};
use std::net::SocketAddr;
use testkit::Response;

/// A node caching in front of `origins`, tried in order; `tune` adjusts the origin settings.
pub fn caching_node(origins: &[String], tune: impl FnOnce(&mut OriginConfig)) -> TestNode {
    let urls = origins.iter().map(|u| OriginUrl::parse(u).unwrap()).collect();
    let mut o = OriginConfig::new(urls);
    tune(&mut o);
    TestNode::start(move |cfg| cfg.origin = Some(o))
}

/// A caching node in front of `origins` whose origin settings `tune` adjusts knowing the
/// address the node listens on (to name it among its own peers).
pub fn caching_node_at(
    origins: &[String],
    tune: impl FnOnce(&mut OriginConfig, SocketAddr),
) -> TestNode {
    let urls = origins.iter().map(|u| OriginUrl::parse(u).unwrap()).collect();
    let mut o = OriginConfig::new(urls);
    TestNode::start_knowing_addr(move |cfg, addr| {
        tune(&mut o, addr);
        cfg.origin = Some(o);
    })
}

/// `X-Larder-Cache`: HIT, MISS, REVALIDATED, STALE, GRACE or PASS.
pub fn cache_status(r: &Response) -> &str {
    r.header("x-larder-cache").unwrap_or("")
}

/// A GET for `path` with the raw header lines `extra` (each ending in CRLF).
pub fn get_with(c: &mut Client, path: &str, extra: &str) -> Response {
    c.send(format!("GET {path} HTTP/1.1\r\nHost: t\r\n{extra}\r\n").as_bytes());
    c.response(false)
}

/// The node's JSON load report.
pub fn load(addr: SocketAddr) -> serde_json::Value {
    let r = Client::connect(addr).get(wire::LOAD_REPORT_PATH);
    serde_json::from_slice(&r.body).unwrap()
}

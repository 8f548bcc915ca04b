//! The "ready" lines children print once their listener is bound: how `larder up` and the
//! experiments learn the port a child got when it was given port 0.

use std::net::SocketAddr;

/// `larder node: serving DIR on http://ADDR (cache …)`.
pub fn node_address(line: &str) -> Option<SocketAddr> {
    let rest = line.strip_prefix("larder node: serving ")?;
    let (_, after) = rest.rsplit_once(" on http://")?;
    after.split(' ').next()?.parse().ok()
}

/// The router's `{"level":"info","msg":"listening","addr":…}` event.
pub fn router_address(line: &str) -> Option<SocketAddr> {
    let event: serde_json::Value = serde_json::from_str(line).ok()?;
    if event.get("msg")?.as_str()? != "listening" {
        return None;
    }
    event.get("addr")?.as_str()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_address_lines() {
        let node = "larder node: serving /a on http://x on http://127.0.0.1:4100 (cache 2 MiB)";
        assert_eq!(node_address(node), Some("127.0.0.1:4100".parse().unwrap()));
        assert_eq!(node_address("larder node: warning: open-file limit"), None);
        let router = r#"{"level":"info","msg":"listening","addr":"127.0.0.1:8080","threads":"2"}"#;
        assert_eq!(router_address(router), Some("127.0.0.1:8080".parse().unwrap()));
        assert_eq!(router_address(r#"{"msg":"node down","addr":"127.0.0.1:1"}"#), None);
        assert_eq!(router_address("not json"), None);
    }
}

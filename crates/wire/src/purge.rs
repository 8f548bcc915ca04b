//! A purge: an operator asks the router to drop (or mark stale) what the nodes store for
//! a target, and hears back on how many nodes it was held.
//!
//! `PURGE <target> HTTP/1.1` on the router's traffic listener (from `purge_from`
//! networks only). A target ending in `*` names every target starting with what comes
//! before it; `X-Larder-Purge: soft` marks stale instead of removing (the tokens `soft`,
//! `hard`, `prefix` and `exact`, comma-separated). The router turns it into a
//! [`Invalidation`] to each node and answers 200 with a [`PurgeReport`] body. Written and
//! parsed here only, so `larder purge`, the router and its admin API agree.

use crate::invalidation::{Invalidation, InvalidationError, Mode, Scope};

/// The method on the router's traffic listener.
pub const PURGE_METHOD: &str = "PURGE";
/// The request field carrying the purge's options.
pub const PURGE_HEADER: &str = "X-Larder-Purge";

/// A client's purge request, as the invalidation the router sends to the nodes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PurgeRequest(pub Invalidation);

impl PurgeRequest {
    /// Read a `PURGE` from its target and its `X-Larder-Purge` value.
    pub fn parse(target: &str, options: Option<&[u8]>) -> Result<PurgeRequest, InvalidationError> {
        let (mut mode, mut scope) = (Mode::Hard, Scope::Exact);
        let mut target = target;
        if let Some(start) = target.strip_suffix('*') {
            target = start;
            scope = Scope::Prefix;
        }
        for token in options.unwrap_or_default().split(|&b| b == b',') {
            match token.trim_ascii().to_ascii_lowercase().as_slice() {
                b"" => {}
                b"soft" => mode = Mode::Soft,
                b"hard" => mode = Mode::Hard,
                b"prefix" => scope = Scope::Prefix,
                b"exact" => scope = Scope::Exact,
                _ => return Err(InvalidationError::Target),
            }
        }
        let well_formed =
            target.starts_with('/') && !target.bytes().any(|b| b <= b' ' || b == 0x7f);
        if !well_formed {
            return Err(InvalidationError::Target);
        }
        Ok(PurgeRequest(Invalidation { target: target.to_string(), mode, scope, site: None }))
    }

    /// The whole request to a router at `host`, closing the connection after it.
    pub fn request(&self, host: &str) -> Vec<u8> {
        let inv = &self.0;
        let star = if inv.scope == Scope::Prefix { "*" } else { "" };
        let mut out = format!("{PURGE_METHOD} {}{star} HTTP/1.1\r\nHost: {host}\r\n", inv.target);
        if inv.mode == Mode::Soft {
            out.push_str(PURGE_HEADER);
            out.push_str(": soft\r\n");
        }
        out.push_str("Content-Length: 0\r\nConnection: close\r\n\r\n");
        out.into_bytes()
    }
}

/// The router's answer to a purge: on how many of the nodes it asked the target was
/// held, and how many it could not reach.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PurgeReport {
    /// Nodes that held (and dropped or marked stale) something the purge named.
    pub purged: usize,
    /// Nodes asked.
    pub nodes: usize,
    /// Nodes asked that did not answer with an [`crate::InvalidationOutcome`].
    pub unreachable: usize,
}

impl PurgeReport {
    /// The answer's body: `purged on 2 of 3 nodes` and, when some could not be told,
    /// `, 1 unreachable`.
    pub fn body(&self) -> String {
        let mut out = format!("purged on {} of {} nodes", self.purged, self.nodes);
        if self.unreachable > 0 {
            out.push_str(&format!(", {} unreachable", self.unreachable));
        }
        out.push('\n');
        out
    }

    /// Read [`PurgeReport::body`] back.
    pub fn parse(body: &str) -> Option<PurgeReport> {
        let rest = body.trim().strip_prefix("purged on ")?;
        let (purged, rest) = rest.split_once(" of ")?;
        let (nodes, rest) = rest.split_once(" nodes")?;
        let unreachable = match rest.strip_prefix(", ") {
            Some(u) => u.strip_suffix(" unreachable")?.parse().ok()?,
            None if rest.is_empty() => 0,
            None => return None,
        };
        Some(PurgeReport { purged: purged.parse().ok()?, nodes: nodes.parse().ok()?, unreachable })
    }

    /// The status: 502 when nodes were asked and none could be reached, else 200 (a
    /// target no node held is still a purge done).
    pub fn status(&self) -> u16 {
        if self.nodes > 0 && self.unreachable == self.nodes {
            502
        } else {
            200
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_target_and_options() {
        let p = PurgeRequest::parse("/static/*", Some(b" Soft ")).unwrap().0;
        assert_eq!((p.target.as_str(), p.mode, p.scope), ("/static/", Mode::Soft, Scope::Prefix));
        let p = PurgeRequest::parse("/a?b", None).unwrap().0;
        assert_eq!(p, Invalidation::exact("/a?b"));
        let p = PurgeRequest::parse("/a", Some(b"prefix,hard")).unwrap().0;
        assert_eq!((p.mode, p.scope), (Mode::Hard, Scope::Prefix));
        assert!(PurgeRequest::parse("a", None).is_err());
        assert!(PurgeRequest::parse("*", None).is_err());
        assert!(PurgeRequest::parse("/a", Some(b"sideways")).is_err());
    }

    #[test]
    fn request_reads_back() {
        let p = PurgeRequest::parse("/p/*", Some(b"soft")).unwrap();
        let req = String::from_utf8(p.request("r:1")).unwrap();
        assert!(req.starts_with("PURGE /p/* HTTP/1.1\r\nHost: r:1\r\nX-Larder-Purge: soft\r\n"));
    }

    #[test]
    fn report_reads_back() {
        for r in [
            PurgeReport { purged: 2, nodes: 3, unreachable: 0 },
            PurgeReport { purged: 0, nodes: 3, unreachable: 3 },
        ] {
            assert_eq!(PurgeReport::parse(&r.body()), Some(r));
        }
        assert_eq!(PurgeReport { purged: 0, nodes: 2, unreachable: 0 }.status(), 200);
        assert_eq!(PurgeReport { purged: 0, nodes: 2, unreachable: 2 }.status(), 502);
        assert_eq!(PurgeReport::parse("purged on 1 of 2 nodes, x"), None);
    }
}

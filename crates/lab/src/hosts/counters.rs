//! What crossed each host's link: the byte counters of the HTB class that shapes each end
//! (what the host sent, at its `eth0`; what it received, at its port on the switch). They
//! count every byte put on the link, TCP/IP headers and retransmissions included, so a
//! host's figures are its link's load whatever runs on it.

use serde::{Deserialize, Serialize};

/// Bytes one host's link carried each way.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkBytes {
    pub host: String,
    /// Sent by the host.
    pub sent: u64,
    /// Received by the host.
    pub received: u64,
}

impl LinkBytes {
    /// What was carried since `earlier` (the same host's counters read before).
    pub fn since(&self, earlier: &LinkBytes) -> LinkBytes {
        LinkBytes {
            host: self.host.clone(),
            sent: self.sent.saturating_sub(earlier.sent),
            received: self.received.saturating_sub(earlier.received),
        }
    }
}

/// Each host's bytes in `after` less those in `before` (hosts matched by name; a host
/// created meanwhile counts from zero).
pub fn since(after: &[LinkBytes], before: &[LinkBytes]) -> Vec<LinkBytes> {
    after
        .iter()
        .map(|a| match before.iter().find(|b| b.host == a.host) {
            Some(b) => a.since(b),
            None => a.clone(),
        })
        .collect()
}

/// The N of the first `Sent N bytes` in `tc -s` output.
pub fn parse_sent(text: &str) -> Option<u64> {
    let rest = &text[text.find("Sent ")? + 5..];
    rest.split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_counts_what_crossed_it() {
        let shown = "class htb 1:1 root prio 0 rate 400Mbit ceil 400Mbit burst 1600b cburst 1600b \n                      Sent 123456789 bytes 4567 pkt (dropped 0, overlimits 0 requeues 0) \n";
        assert_eq!(parse_sent(shown), Some(123_456_789));
        assert_eq!(parse_sent("class htb 1:1 root"), None);
        assert_eq!(parse_sent(" Sent many bytes"), None);
    }

    #[test]
    fn what_each_link_carried_meanwhile() {
        let at = |host: &str, sent, received| LinkBytes { host: host.into(), sent, received };
        let before = [at("n1", 100, 10), at("origin", 5, 50)];
        let after = [at("origin", 905, 60), at("n1", 150, 30), at("client", 7, 8)];
        assert_eq!(
            since(&after, &before),
            [at("origin", 900, 10), at("n1", 50, 20), at("client", 7, 8)]
        );
    }
}

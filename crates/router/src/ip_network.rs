//! An IP network (`127.0.0.0/8`, `::1/128`, or one address) as the router's config names
//! the peers allowed to purge (`purge_from`).

use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// An address and how many leading bits of it a peer must share.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(try_from = "String", into = "String")]
pub struct IpNetwork {
    addr: IpAddr,
    bits: u8,
}

/// Why a network did not parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IpNetworkError(String);

impl fmt::Display for IpNetworkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} is not an IP network (like 10.0.0.0/8, ::1/128 or 192.0.2.7)", self.0)
    }
}

impl std::error::Error for IpNetworkError {}

impl IpNetwork {
    /// Whether `peer` is in this network (an IPv4-mapped IPv6 peer counts as IPv4).
    pub fn contains(&self, peer: IpAddr) -> bool {
        match (self.addr, peer.to_canonical()) {
            (IpAddr::V4(net), IpAddr::V4(p)) => {
                same_prefix(u32::from(net).into(), u32::from(p).into(), 32, self.bits)
            }
            (IpAddr::V6(net), IpAddr::V6(p)) => {
                same_prefix(u128::from(net), u128::from(p), 128, self.bits)
            }
            _ => false,
        }
    }

    /// Loopback, both families: the default of `purge_from`.
    pub fn loopback() -> Vec<IpNetwork> {
        ["127.0.0.0/8", "::1/128"].iter().filter_map(|s| s.parse().ok()).collect()
    }
}

fn same_prefix(a: u128, b: u128, width: u8, bits: u8) -> bool {
    let shift = u32::from(width - bits.min(width));
    shift >= 128 || (a >> shift) == (b >> shift)
}

impl FromStr for IpNetwork {
    type Err = IpNetworkError;

    fn from_str(s: &str) -> Result<IpNetwork, IpNetworkError> {
        let bad = || IpNetworkError(s.to_string());
        let (addr, bits) = match s.split_once('/') {
            Some((a, b)) => (a, Some(b)),
            None => (s, None),
        };
        let addr: IpAddr = addr.trim().parse().map_err(|_| bad())?;
        let width = if addr.is_ipv4() { 32 } else { 128 };
        let bits = match bits {
            Some(b) => b.trim().parse::<u8>().ok().filter(|&b| b <= width).ok_or_else(bad)?,
            None => width,
        };
        Ok(IpNetwork { addr, bits })
    }
}

impl TryFrom<String> for IpNetwork {
    type Error = IpNetworkError;

    fn try_from(s: String) -> Result<IpNetwork, IpNetworkError> {
        s.parse()
    }
}

impl From<IpNetwork> for String {
    fn from(n: IpNetwork) -> String {
        format!("{}/{}", n.addr, n.bits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn net(s: &str) -> IpNetwork {
        s.parse().unwrap()
    }

    #[test]
    fn contains_by_prefix() {
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        assert!(net("127.0.0.0/8").contains(ip("127.9.9.9")));
        assert!(!net("127.0.0.0/8").contains(ip("128.0.0.1")));
        assert!(net("127.0.0.0/8").contains(ip("::ffff:127.0.0.1")));
        assert!(net("::1/128").contains(ip("::1")) && !net("::1/128").contains(ip("::2")));
        assert!(net("0.0.0.0/0").contains(ip("8.8.8.8")));
        assert!(!net("0.0.0.0/0").contains(ip("::1")));
        assert!(
            net("10.1.2.3").contains(ip("10.1.2.3")) && !net("10.1.2.3").contains(ip("10.1.2.4"))
        );
        assert!(!net("192.0.2.0/24").contains(ip("127.0.0.1")));
    }

    #[test]
    fn refuses_what_is_not_a_network() {
        for bad in ["", "x/8", "10.0.0.0/33", "::/129", "10.0.0.0/", "10.0.0.0/-1"] {
            assert!(bad.parse::<IpNetwork>().is_err(), "{bad}");
        }
        assert_eq!(String::from(net("::1")), "::1/128");
    }
}

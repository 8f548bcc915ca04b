//! The addresses a run gives its hosts: one private IPv4 subnet, which exists only on the
//! run's own bridge (inside a namespace of its own), so it can never meet the machine's
//! real networks, nor another run's.

use std::fmt;
use std::net::Ipv4Addr;
use std::str::FromStr;

/// The narrowest prefix: room for a switch's worth of hosts.
const MAX_PREFIX: u8 = 30;
/// The widest prefix accepted (more hosts than a run could start).
const MIN_PREFIX: u8 = 16;

/// A private IPv4 subnet (10/8, 172.16/12 or 192.168/16), written `10.77.0.0/24`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Subnet {
    network: Ipv4Addr,
    prefix: u8,
}

impl Default for Subnet {
    /// 10.77.0.0/24: 254 hosts.
    fn default() -> Subnet {
        Subnet { network: Ipv4Addr::new(10, 77, 0, 0), prefix: 24 }
    }
}

impl Subnet {
    /// The prefix length (the `/24`).
    pub fn prefix(&self) -> u8 {
        self.prefix
    }

    /// The address of the `index`th host (0: the first address after the network's), or
    /// None past the last one (the broadcast address is never given).
    pub fn host(&self, index: usize) -> Option<Ipv4Addr> {
        let size = 1u64 << (32 - self.prefix);
        let offset = u64::try_from(index).ok()?.checked_add(1)?;
        if offset >= size - 1 {
            return None;
        }
        Some(Ipv4Addr::from(u32::from(self.network) + u32::try_from(offset).ok()?))
    }
}

impl FromStr for Subnet {
    type Err = String;

    fn from_str(s: &str) -> Result<Subnet, String> {
        let bad = || format!("{s:?}: expected a private IPv4 subnet such as 10.77.0.0/24");
        let (addr, prefix) = s.trim().split_once('/').ok_or_else(bad)?;
        let addr: Ipv4Addr = addr.parse().map_err(|_| bad())?;
        let prefix: u8 = prefix.parse().map_err(|_| bad())?;
        if !(MIN_PREFIX..=MAX_PREFIX).contains(&prefix) {
            return Err(format!("{s:?}: the prefix must be in /{MIN_PREFIX}../{MAX_PREFIX}"));
        }
        if !addr.is_private() {
            return Err(format!(
                "{s:?}: not a private subnet; the hosts take addresses only from 10.0.0.0/8, \
                 172.16.0.0/12 or 192.168.0.0/16"
            ));
        }
        let mask = u32::MAX << (32 - prefix);
        if u32::from(addr) & !mask != 0 {
            return Err(format!("{s:?}: host bits set; the network is {}/{prefix}", {
                Ipv4Addr::from(u32::from(addr) & mask)
            }));
        }
        Ok(Subnet { network: addr, prefix })
    }
}

impl fmt::Display for Subnet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.network, self.prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_take_the_addresses_between_network_and_broadcast() {
        let s = Subnet::default();
        assert_eq!(s.to_string(), "10.77.0.0/24");
        assert_eq!(s.host(0), Some(Ipv4Addr::new(10, 77, 0, 1)));
        assert_eq!(s.host(253), Some(Ipv4Addr::new(10, 77, 0, 254)));
        assert_eq!(s.host(254), None);
        let small: Subnet = "192.168.5.8/30".parse().unwrap();
        assert_eq!(small.host(1), Some(Ipv4Addr::new(192, 168, 5, 10)));
        assert_eq!(small.host(2), None);
    }

    #[test]
    fn only_private_networks_are_taken() {
        assert!("172.16.0.0/16".parse::<Subnet>().is_ok());
        let err = "8.8.8.0/24".parse::<Subnet>().unwrap_err();
        assert!(err.contains("not a private subnet"), "{err}");
        let err = "10.77.0.5/24".parse::<Subnet>().unwrap_err();
        assert!(err.contains("10.77.0.0/24"), "{err}");
        assert!("10.0.0.0/8".parse::<Subnet>().is_err());
        assert!("10.0.0.0".parse::<Subnet>().is_err());
        assert!("ten/24".parse::<Subnet>().is_err());
    }
}

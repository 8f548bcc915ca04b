//! A client address the router cut off for abusing HTTP/2 (a Rapid Reset, a flood of
//! control frames: the connection closed with `ENHANCE_YOUR_CALM`) gets no new connection
//! for a while (`http2.calm_down_ms`). Closing one connection costs an attacker nothing
//! when it can open the next at once; every connection it opens costs the router an
//! accept, a handshake and the frames it reads before the limit trips again. Refused at
//! accept, a connection costs the router an accept and a close.
//!
//! The accept path reads one atomic while no address is calming down, so clients pay
//! nothing for it in normal times. The table is bounded (`MAX_ADDRESSES`): beyond it the
//! oldest entry gives way.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::poison::Recover;

/// Most addresses held at once.
const MAX_ADDRESSES: usize = 4096;

#[derive(Debug, Default)]
pub(crate) struct CalmDown {
    /// Each address calming down, and until when.
    until: Mutex<HashMap<IpAddr, Instant>>,
    /// How many entries `until` holds (read without the lock).
    held: AtomicUsize,
}

impl CalmDown {
    /// `ip` broke a limit at `now`: refuse its connections for `period` (none when 0).
    pub(crate) fn penalise(&self, ip: IpAddr, now: Instant, period: Duration) {
        if period.is_zero() {
            return;
        }
        let mut until = self.until.lock().recover();
        until.retain(|_, end| *end > now);
        if until.len() >= MAX_ADDRESSES && !until.contains_key(&ip) {
            let oldest = until.iter().min_by_key(|(_, end)| **end).map(|(ip, _)| *ip);
            oldest.map(|ip| until.remove(&ip));
        }
        until.insert(ip, now + period);
        self.held.store(until.len(), Ordering::Relaxed);
    }

    /// Whether a connection from `ip` is refused now (no clock read while no address is
    /// calming down).
    pub(crate) fn refuses_now(&self, ip: IpAddr) -> bool {
        self.held.load(Ordering::Relaxed) > 0 && self.refuses(ip, Instant::now())
    }

    /// Whether a connection from `ip` at `now` is refused.
    pub(crate) fn refuses(&self, ip: IpAddr, now: Instant) -> bool {
        if self.held.load(Ordering::Relaxed) == 0 {
            return false;
        }
        let mut until = self.until.lock().recover();
        match until.get(&ip) {
            Some(end) if *end > now => true,
            Some(_) => {
                until.remove(&ip);
                self.held.store(until.len(), Ordering::Relaxed);
                false
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(last: u8) -> IpAddr {
        IpAddr::from([127, 0, 0, last])
    }

    #[test]
    fn an_address_is_refused_for_its_period_and_no_other_is() {
        let calm = CalmDown::default();
        let t0 = Instant::now();
        assert!(!calm.refuses(ip(1), t0));
        calm.penalise(ip(1), t0, Duration::from_secs(2));
        assert!(calm.refuses(ip(1), t0 + Duration::from_secs(1)));
        assert!(!calm.refuses(ip(2), t0 + Duration::from_secs(1)));
        assert!(!calm.refuses(ip(1), t0 + Duration::from_secs(2)), "the period is over");
        assert_eq!(calm.held.load(Ordering::Relaxed), 0, "and its entry gone");
        calm.penalise(ip(3), t0, Duration::ZERO);
        assert!(!calm.refuses(ip(3), t0), "a zero period turns it off");
    }

    #[test]
    fn the_table_stays_bounded() {
        let calm = CalmDown::default();
        let t0 = Instant::now();
        for i in 0..(MAX_ADDRESSES as u32 + 10) {
            let at = t0 + Duration::from_millis(u64::from(i));
            calm.penalise(IpAddr::from(i.to_be_bytes()), at, Duration::from_secs(3600));
        }
        assert_eq!(calm.until.lock().unwrap().len(), MAX_ADDRESSES);
        assert!(!calm.refuses(IpAddr::from(0u32.to_be_bytes()), t0), "the oldest gave way");
    }
}

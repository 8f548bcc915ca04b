//! A client address the router cut off for abusing HTTP/2 (a Rapid Reset, a flood of
//! control frames: the connection closed with `ENHANCE_YOUR_CALM`) gets no new connection
//! for a while (`http2.calm_down_ms`). Closing one connection costs an attacker nothing
//! when it can open the next at once; every connection it opens costs the router an
//! accept, a handshake and the frames it reads before the limit trips again. Refused at
//! accept, a connection is held unread until the address's time is up (a tarpit, as
//! HAProxy's): an attacker that reconnects at once would otherwise loop on accept and
//! close as fast as it can, while a held connection keeps it waiting for nothing. At most
//! `MAX_HELD` connections are held; beyond that they are closed at once.
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

/// Most refused connections held open at once.
const MAX_HELD: usize = 1024;

#[derive(Debug, Default)]
pub(crate) struct CalmDown {
    /// Each address calming down, and until when.
    until: Mutex<HashMap<IpAddr, Instant>>,
    /// How many entries `until` holds (read without the lock).
    held: AtomicUsize,
    /// Refused connections held open now.
    tarpitted: AtomicUsize,
}

/// A refused connection's place in the tarpit, given back when dropped.
pub(crate) struct Held<'a>(&'a AtomicUsize);

impl Drop for Held<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
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

    /// Until when a connection from `ip` is refused, if it is now (no clock read while
    /// no address is calming down).
    pub(crate) fn refused_now(&self, ip: IpAddr) -> Option<Instant> {
        if self.held.load(Ordering::Relaxed) == 0 {
            return None;
        }
        self.refused_until(ip, Instant::now())
    }

    /// Until when a connection from `ip` at `now` is refused, if it is.
    pub(crate) fn refused_until(&self, ip: IpAddr, now: Instant) -> Option<Instant> {
        if self.held.load(Ordering::Relaxed) == 0 {
            return None;
        }
        let mut until = self.until.lock().recover();
        match until.get(&ip) {
            Some(end) if *end > now => Some(*end),
            Some(_) => {
                until.remove(&ip);
                self.held.store(until.len(), Ordering::Relaxed);
                None
            }
            None => None,
        }
    }

    /// A place in the tarpit for a refused connection; none when it is full.
    pub(crate) fn hold(&self) -> Option<Held<'_>> {
        let before = self.tarpitted.fetch_add(1, Ordering::Relaxed);
        let held = Held(&self.tarpitted);
        (before < MAX_HELD).then_some(held)
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
        let second = Duration::from_secs(1);
        assert_eq!(calm.refused_until(ip(1), t0), None);
        calm.penalise(ip(1), t0, 2 * second);
        assert_eq!(calm.refused_until(ip(1), t0 + second), Some(t0 + 2 * second));
        assert_eq!(calm.refused_until(ip(2), t0 + second), None);
        assert_eq!(calm.refused_until(ip(1), t0 + 2 * second), None, "the period is over");
        assert_eq!(calm.held.load(Ordering::Relaxed), 0, "and its entry gone");
        calm.penalise(ip(3), t0, Duration::ZERO);
        assert_eq!(calm.refused_until(ip(3), t0), None, "a zero period turns it off");
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
        let first = IpAddr::from(0u32.to_be_bytes());
        assert_eq!(calm.refused_until(first, t0), None, "the oldest gave way");
    }

    #[test]
    fn the_tarpit_holds_a_bounded_number_and_gives_places_back() {
        let calm = CalmDown::default();
        let held: Vec<_> = (0..MAX_HELD).map(|_| calm.hold().expect("room")).collect();
        assert!(calm.hold().is_none(), "full");
        drop(held);
        assert!(calm.hold().is_some(), "the places came back");
    }
}

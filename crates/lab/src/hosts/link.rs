//! A host's link to the switch, shaped as a real link is: a rate and a queue. Both ends
//! of the link get an HTB qdisc whose one class (every packet falls into it) has the
//! link's rate, with a FIFO of the link's queue below it, so what a host sends and what
//! it receives are each limited to the rate, and what waits beyond the queue is dropped.

use std::fmt;
use std::str::FromStr;

/// The smallest HTB burst: one GSO segment (veth hands segments of up to 64 KiB to the
/// qdisc), so a single segment never exceeds the bucket.
const MIN_BURST_BYTES: u64 = 64 << 10;
/// The burst also covers this many microseconds at the link's rate, so a fast link is not
/// held back by the timer's granularity.
const BURST_MICROS: u64 = 1_000;
/// HTB's quantum: what one class may send per round; larger than any segment.
const QUANTUM_BYTES: u64 = 60_000;

/// A link's bandwidth in bits per second, written as `tc` writes it: `1gbit`, `100mbit`,
/// `512kbit`, `64000bit`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Rate(u64);

/// The units a rate is written in, largest first.
const RATE_UNITS: [(&str, u64); 4] =
    [("gbit", 1_000_000_000), ("mbit", 1_000_000), ("kbit", 1_000), ("bit", 1)];

impl Rate {
    /// Bits per second.
    pub fn bits_per_second(self) -> u64 {
        self.0
    }

    /// A rate of `bits` per second (at least 1).
    pub fn from_bits(bits: u64) -> Rate {
        Rate(bits.max(1))
    }
}

impl FromStr for Rate {
    type Err = String;

    fn from_str(s: &str) -> Result<Rate, String> {
        let text = s.trim().to_ascii_lowercase();
        let bad = || format!("{s:?}: expected a rate such as 1gbit, 100mbit or 512kbit");
        let (number, scale) = RATE_UNITS
            .iter()
            .find_map(|&(unit, scale)| text.strip_suffix(unit).map(|n| (n, scale)))
            .ok_or_else(bad)?;
        let n: u64 = number.trim().parse().map_err(|_| bad())?;
        match n.checked_mul(scale) {
            Some(0) => Err(format!("{s:?}: a link's rate must be above zero")),
            Some(bits) => Ok(Rate(bits)),
            None => Err(format!("{s:?}: too large a rate")),
        }
    }
}

impl fmt::Display for Rate {
    /// The largest unit that writes it exactly: `1gbit`, `250mbit`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (unit, scale) = RATE_UNITS
            .into_iter()
            .find(|&(_, scale)| self.0.is_multiple_of(scale))
            .unwrap_or(("bit", 1));
        write!(f, "{}{unit}", self.0 / scale)
    }
}

/// How much a link's queue holds before it drops: packets (`1000p`, as a NIC's transmit
/// queue counts) or bytes (`256KiB`, `1MB`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Queue {
    Packets(u32),
    Bytes(u64),
}

impl FromStr for Queue {
    type Err = String;

    fn from_str(s: &str) -> Result<Queue, String> {
        let text = s.trim();
        let lower = text.to_ascii_lowercase();
        if let Some(n) = lower.strip_suffix("packets").or_else(|| lower.strip_suffix('p')) {
            let n: u32 = n.trim().parse().map_err(|_| {
                format!("{s:?}: expected packets such as 1000p, or bytes such as 256KiB")
            })?;
            return if n == 0 {
                Err(format!("{s:?}: a queue must hold at least one packet"))
            } else {
                Ok(Queue::Packets(n))
            };
        }
        if text.chars().all(|c| c.is_ascii_digit()) {
            return Err(format!(
                "{s:?}: say whether the queue counts packets (1000p) or bytes (256KiB)"
            ));
        }
        match trace::parse_size(text)? {
            0 => Err(format!("{s:?}: a queue must hold at least one byte")),
            bytes => Ok(Queue::Bytes(bytes)),
        }
    }
}

impl fmt::Display for Queue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Queue::Packets(n) => write!(f, "{n} packets"),
            Queue::Bytes(n) => write!(f, "{n} bytes"),
        }
    }
}

/// One host's link: its rate each way and its queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkShape {
    /// Bandwidth each way. Default is 1gbit: a real cluster's link, and one that this
    /// machine's processes can fill, so the link is a limit a run can meet.
    pub rate: Rate,
    /// The queue at each end of the link. Default is 1000 packets (Linux's default
    /// transmit queue).
    pub queue: Queue,
}

impl Default for LinkShape {
    fn default() -> LinkShape {
        LinkShape { rate: Rate(1_000_000_000), queue: Queue::Packets(1000) }
    }
}

impl LinkShape {
    /// The link as the results describe it.
    pub fn describe(&self) -> String {
        format!("{} each way, queue {}", self.rate, self.queue)
    }

    /// The HTB burst: [`MIN_BURST_BYTES`], or [`BURST_MICROS`] at the rate if more.
    fn burst_bytes(&self) -> u64 {
        (self.rate.0 / 8 * BURST_MICROS / 1_000_000).max(MIN_BURST_BYTES)
    }

    /// The `tc` arguments (after `tc -n NAMESPACE`) that shape what leaves through `dev`,
    /// which has no qdisc of its own yet.
    pub fn tc_install(&self, dev: &str) -> Vec<Vec<String>> {
        // Every packet falls into class 1:1 (the default): the link's rate.
        let root = ["qdisc", "add", "dev", dev, "root", "handle", "1:", "htb", "default", "1"];
        let mut all = vec![root.iter().map(|s| s.to_string()).collect()];
        all.extend(self.tc_change(dev));
        all
    }

    /// The `tc` arguments that give `dev`, shaped by [`LinkShape::tc_install`], this
    /// link's rate and queue (each a `replace`: HTB's root cannot be replaced in place).
    pub fn tc_change(&self, dev: &str) -> Vec<Vec<String>> {
        let rate = format!("{}bit", self.rate.0);
        let burst = self.burst_bytes().to_string();
        let quantum = QUANTUM_BYTES.to_string();
        let (fifo, limit) = match self.queue {
            Queue::Packets(n) => ("pfifo", n.to_string()),
            Queue::Bytes(n) => ("bfifo", n.to_string()),
        };
        let lines: [Vec<&str>; 2] = [
            vec![
                "class", "replace", "dev", dev, "parent", "1:", "classid", "1:1", "htb", "rate",
                &rate, "ceil", &rate, "burst", &burst, "cburst", &burst, "quantum", &quantum,
            ],
            vec![
                "qdisc", "replace", "dev", dev, "parent", "1:1", "handle", "10:", fifo, "limit",
                &limit,
            ],
        ];
        lines.iter().map(|l| l.iter().map(|s| s.to_string()).collect()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_read_and_write_as_tc_does() {
        assert_eq!("1gbit".parse::<Rate>().unwrap().bits_per_second(), 1_000_000_000);
        assert_eq!("100Mbit".parse::<Rate>().unwrap().bits_per_second(), 100_000_000);
        assert_eq!("512kbit".parse::<Rate>().unwrap().to_string(), "512kbit");
        assert_eq!("1500mbit".parse::<Rate>().unwrap().to_string(), "1500mbit");
        assert_eq!("64000bit".parse::<Rate>().unwrap().to_string(), "64kbit");
        for bad in ["", "fast", "1gb", "0mbit", "-1mbit", "1.5gbit", "99999999999gbit"] {
            assert!(bad.parse::<Rate>().is_err(), "{bad}");
        }
    }

    #[test]
    fn queues_count_packets_or_bytes() {
        assert_eq!("1000p".parse::<Queue>(), Ok(Queue::Packets(1000)));
        assert_eq!("50 packets".parse::<Queue>(), Ok(Queue::Packets(50)));
        assert_eq!("256KiB".parse::<Queue>(), Ok(Queue::Bytes(256 << 10)));
        let err = "1000".parse::<Queue>().unwrap_err();
        assert!(err.contains("packets (1000p) or bytes"), "{err}");
        assert!("0p".parse::<Queue>().is_err());
        assert!("lots".parse::<Queue>().is_err());
    }

    #[test]
    fn both_directions_get_the_rate_and_the_queue() {
        let link = LinkShape { rate: "100mbit".parse().unwrap(), queue: Queue::Packets(50) };
        let cmds: Vec<String> = link.tc_install("eth0").iter().map(|c| c.join(" ")).collect();
        assert_eq!(cmds[0], "qdisc add dev eth0 root handle 1: htb default 1");
        assert!(cmds[1].contains("classid 1:1 htb rate 100000000bit ceil 100000000bit burst 65536"));
        assert_eq!(cmds[2], "qdisc replace dev eth0 parent 1:1 handle 10: pfifo limit 50");
        let fast = LinkShape { rate: "10gbit".parse().unwrap(), queue: Queue::Bytes(1 << 20) };
        let cmds: Vec<String> = fast.tc_change("v1").iter().map(|c| c.join(" ")).collect();
        assert!(cmds[0].contains("burst 1250000 "), "{cmds:?}");
        assert!(cmds[1].ends_with("bfifo limit 1048576"), "{cmds:?}");
        assert_eq!(LinkShape::default().describe(), "1gbit each way, queue 1000 packets");
    }
}

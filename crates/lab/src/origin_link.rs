//! The origin's link: its bandwidth really limited, so origin egress is the scarce
//! resource it is in production. Everything runs on loopback, so the limit is a `tc` HTB
//! class on `lo` that only the origin's replies (source port = the origin's) are filtered
//! into (u32); every other packet on loopback passes unshaped. Shaping loopback is only
//! done inside a private network namespace (`unshare -n`), where `lo` is the run's own.

use std::process::Command;

use crate::error::{LabError, Result};
use crate::hosts::parse_sent;

/// The HTB burst: one loopback segment (GSO makes them up to 64 KiB).
const BURST_BYTES: u64 = 64 << 10;

/// The limited link to the origin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OriginLink {
    /// Bandwidth from the origin to the nodes, in Mbit/s.
    pub mbit: u64,
    /// The link's queue (a byte FIFO), in KiB: what waits beyond it is dropped.
    pub queue_kb: u64,
}

impl OriginLink {
    /// The link as the results describe it.
    pub fn describe(&self) -> String {
        format!(
            "origin link {} Mbit/s ({:.1} MB/s): tc HTB class (burst {} KiB) with a {} KiB \
             byte FIFO on loopback, u32 filter on the origin's source port",
            self.mbit,
            self.mbit as f64 / 8.0,
            BURST_BYTES >> 10,
            self.queue_kb
        )
    }

    /// The `tc` commands that shape the replies from `port`.
    pub fn commands(&self, port: u16) -> Vec<Vec<String>> {
        let rate = format!("{}mbit", self.mbit);
        let burst = BURST_BYTES.to_string();
        let lines: [&[&str]; 4] = [
            // Unclassified traffic goes to a class that does not exist: HTB sends it
            // directly, unshaped.
            &[
                "tc", "qdisc", "replace", "dev", "lo", "root", "handle", "1:", "htb", "default",
                "99",
            ],
            &[
                "tc", "class", "add", "dev", "lo", "parent", "1:", "classid", "1:1", "htb", "rate",
                &rate, "ceil", &rate, "burst", &burst, "cburst", &burst, "quantum", "60000",
            ],
            &[
                "tc",
                "qdisc",
                "add",
                "dev",
                "lo",
                "parent",
                "1:1",
                "handle",
                "10:",
                "bfifo",
                "limit",
                &format!("{}", self.queue_kb << 10),
            ],
            &[
                "tc",
                "filter",
                "add",
                "dev",
                "lo",
                "parent",
                "1:",
                "protocol",
                "ip",
                "prio",
                "1",
                "u32",
                "match",
                "ip",
                "sport",
                &port.to_string(),
                "0xffff",
                "flowid",
                "1:1",
            ],
        ];
        lines.iter().map(|l| l.iter().map(|s| s.to_string()).collect()).collect()
    }
}

/// Prepares this network namespace for the origin experiment: in a private one (loopback
/// only, as `unshare -n` makes it) brings `lo` up and, if `link` is given, shapes the
/// replies from `port`; `link` outside a private namespace is refused, so the machine's
/// own loopback is never touched.
pub fn prepare(link: Option<&OriginLink>, port: u16) -> Result<()> {
    let interfaces = namespace_interfaces()?;
    let private = interfaces == ["lo"];
    if !private && link.is_some() {
        return Err(LabError::Invalid(format!(
            "shaping the origin link needs a private network namespace with loopback only \
             (run it as `unshare -n larder bench experiment origin …`, as \
             bench/experiments.sh does); this one has {}",
            interfaces.join(", ")
        )));
    }
    if private {
        run(&["ip", "link", "set", "lo", "up"].map(String::from))?;
    }
    for argv in link.map(|l| l.commands(port)).unwrap_or_default() {
        run(&argv)?;
    }
    Ok(())
}

/// Bytes the origin's replies have put on the link so far (the shaping class's counter:
/// what crossed it, TCP/IP headers included, never what an aborted reply left behind in a
/// socket).
pub fn sent_bytes() -> Result<u64> {
    let argv = ["tc", "-s", "class", "show", "dev", "lo", "classid", "1:1"].map(String::from);
    let out = Command::new(&argv[0])
        .args(&argv[1..])
        .output()
        .map_err(|e| LabError::Invalid(format!("running tc: {e} (iproute2 is needed)")))?;
    let text = String::from_utf8_lossy(&out.stdout);
    parse_sent(&text).ok_or_else(|| {
        LabError::Invalid(format!("`{}` gave no byte count: {}", argv.join(" "), text.trim()))
    })
}

fn run(argv: &[String]) -> Result<()> {
    let out = Command::new(&argv[0])
        .args(&argv[1..])
        .output()
        .map_err(|e| LabError::Invalid(format!("running {}: {e} (iproute2 is needed)", argv[0])))?;
    if !out.status.success() {
        return Err(LabError::Invalid(format!(
            "`{}` failed: {}",
            argv.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(())
}

/// The network interfaces of this process's namespace (/proc/self/net/dev, which follows
/// the namespace where /sys/class/net follows the mount).
fn namespace_interfaces() -> Result<Vec<String>> {
    let text = std::fs::read_to_string("/proc/self/net/dev")
        .map_err(|e| LabError::Invalid(format!("reading /proc/self/net/dev: {e}")))?;
    Ok(text
        .lines()
        .skip(2)
        .filter_map(|l| l.split(':').next())
        .map(|n| n.trim().to_string())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_origins_replies_are_shaped() {
        let link = OriginLink { mbit: 160, queue_kb: 512 };
        let cmds: Vec<String> = link.commands(8123).iter().map(|c| c.join(" ")).collect();
        assert_eq!(cmds[0], "tc qdisc replace dev lo root handle 1: htb default 99");
        assert!(
            cmds[1].contains("classid 1:1 htb rate 160mbit ceil 160mbit burst 65536"),
            "{cmds:?}"
        );
        assert!(cmds[2].ends_with("bfifo limit 524288"), "{cmds:?}");
        assert!(cmds[3].ends_with("match ip sport 8123 0xffff flowid 1:1"), "{cmds:?}");
        assert!(link.describe().contains("160 Mbit/s (20.0 MB/s)"), "{}", link.describe());
    }
}

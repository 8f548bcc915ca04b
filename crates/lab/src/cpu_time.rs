//! CPU time of the processes an experiment started, and of the load generator, from
//! /proc: the experiments report CPU per request of each part.

/// User plus system CPU seconds of process `pid` so far (0 if it is gone).
pub fn cpu_seconds(pid: u32) -> f64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return 0.0 };
    // The command name (field 2) may hold spaces; fields after its ')' are plain.
    let Some((_, rest)) = stat.rsplit_once(')') else { return 0.0 };
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the ')'.
    let ticks: u64 = fields.iter().skip(11).take(2).filter_map(|f| f.parse::<u64>().ok()).sum();
    // SAFETY: sysconf has no preconditions.
    let per_sec = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    ticks as f64 / per_sec.max(1) as f64
}

/// User plus system CPU seconds so far of every process in process group `pgid` (a child
/// the lab started leads its own group, so this counts what it forked too, such as
/// Varnish's cache process).
pub fn group_cpu_seconds(pgid: u32) -> f64 {
    let Ok(entries) = std::fs::read_dir("/proc") else { return cpu_seconds(pgid) };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| process_group(pid) == Some(pgid))
        .map(cpu_seconds)
        .sum()
}

/// The process group of `pid` (field 5 of its stat line, 3rd after the ')').
fn process_group(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.split_whitespace().nth(2)?.parse().ok()
}

/// CPU seconds this process (the load generator) has used so far.
pub fn own_cpu_seconds() -> f64 {
    cpu_seconds(std::process::id())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn own_cpu_time_is_read() {
        // Burn CPU until the counter moves (a clock tick of CPU, however busy the machine
        // is), bounded in time.
        let mut x = 0u64;
        let start = Instant::now();
        while own_cpu_seconds() == 0.0 && start.elapsed() < Duration::from_secs(30) {
            for _ in 0..100_000 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            }
        }
        std::hint::black_box(x);
        assert!(own_cpu_seconds() > 0.0);
        // The test runs in some process group; its own process is in it.
        let own = std::process::id();
        let group = process_group(own).unwrap();
        let before = own_cpu_seconds();
        assert!(group_cpu_seconds(group) >= before);
        assert_eq!(cpu_seconds(u32::MAX), 0.0);
    }
}

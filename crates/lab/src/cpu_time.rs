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
        // Burn a little CPU so the counter cannot be 0 by accident of timing.
        let mut x = 0u64;
        let start = Instant::now();
        while start.elapsed() < Duration::from_millis(30) {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        assert!(own_cpu_seconds() > 0.0);
        assert_eq!(cpu_seconds(u32::MAX), 0.0);
    }
}

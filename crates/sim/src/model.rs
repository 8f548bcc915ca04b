//! The cost model of one back-end node: what a request costs its CPU and its disk.
//!
//! Defaults are the LARD paper's simulation model (Pai et al., ASPLOS 1998, §4.1) for
//! 300 MHz-class nodes, as DESIGN.md records them:
//! - CPU: connection set-up 145 µs and tear-down 145 µs; transmitting 40 µs per 512 bytes.
//! - Disk: 28 ms per read (two seeks plus rotation) plus 410 µs per 4 KB, and 14 ms more
//!   for every 44 KB beyond the first 44 KB (large files are not laid out contiguously).
//!
//! The request path follows HTTP/1.0 as LARD simulated it, one connection per request:
//! a hit costs the CPU set-up + transmit + tear-down as one job; a miss costs the CPU
//! set-up, then a disk read, then the CPU transmit + tear-down. Disk reads and
//! transmission are not overlapped (a simplification the paper also made for its CPU
//! and disk queues); every partial unit (512-byte packet, 4 KB block, 44 KB chunk) is
//! charged in full.
//!
//! Two costs the paper's model lacks, both 0 by default, fit a cluster on one machine
//! (see `cpu_pool.rs`): CPU per request outside the nodes (front-end and clients), and
//! CPU per miss on the node's helper thread (a dynamic page's computation, or the work of
//! reading a file in), run between the set-up and the disk read.

use serde::Serialize;

/// Costs of one node, all in nanoseconds and bytes. Every field can be set.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Model {
    /// CPU to accept a connection and parse the request.
    pub setup_ns: u64,
    /// CPU to close the connection.
    pub teardown_ns: u64,
    /// CPU per transmit unit of response bytes.
    pub transmit_ns: u64,
    /// Bytes per transmit unit (a network packet).
    pub transmit_unit_bytes: u64,
    /// Disk time for any read: positioning (seeks and rotation).
    pub disk_read_ns: u64,
    /// Disk time per block read.
    pub disk_block_ns: u64,
    pub disk_block_bytes: u64,
    /// Disk time for every further chunk beyond the first (another positioning).
    pub disk_chunk_ns: u64,
    pub disk_chunk_bytes: u64,
    /// CPU per request spent outside the nodes (the front-end's and the clients'): 0 in
    /// the LARD model, whose front-end and clients had machines of their own.
    pub front_ns: u64,
    /// CPU a miss costs on the node's helper thread, before its disk read.
    pub miss_cpu_ns: u64,
}

impl Default for Model {
    fn default() -> Self {
        Model {
            setup_ns: 145_000,
            teardown_ns: 145_000,
            transmit_ns: 40_000,
            transmit_unit_bytes: 512,
            disk_read_ns: 28_000_000,
            disk_block_ns: 410_000,
            disk_block_bytes: 4096,
            disk_chunk_ns: 14_000_000,
            disk_chunk_bytes: 44 * 1024,
            front_ns: 0,
            miss_cpu_ns: 0,
        }
    }
}

/// Units of `unit` bytes needed for `bytes`, a partial unit counting whole.
fn units(bytes: u64, unit: u64) -> u64 {
    bytes.div_ceil(unit.max(1))
}

impl Model {
    /// CPU time of a request served from the cache (set-up, transmit, tear-down).
    pub fn hit_cpu_ns(&self, bytes: u64) -> u64 {
        self.setup_ns.saturating_add(self.send_cpu_ns(bytes))
    }

    /// CPU time after a miss's disk read: transmit and tear-down.
    pub fn send_cpu_ns(&self, bytes: u64) -> u64 {
        units(bytes, self.transmit_unit_bytes)
            .saturating_mul(self.transmit_ns)
            .saturating_add(self.teardown_ns)
    }

    /// Disk time to read a file of `bytes`.
    pub fn disk_ns(&self, bytes: u64) -> u64 {
        let extra_chunks =
            units(bytes.saturating_sub(self.disk_chunk_bytes), self.disk_chunk_bytes);
        self.disk_read_ns
            .saturating_add(units(bytes, self.disk_block_bytes).saturating_mul(self.disk_block_ns))
            .saturating_add(extra_chunks.saturating_mul(self.disk_chunk_ns))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_costs() {
        let m = Model::default();
        assert_eq!(m.hit_cpu_ns(512), 145_000 + 40_000 + 145_000);
        assert_eq!(m.hit_cpu_ns(513), 145_000 + 80_000 + 145_000);
        assert_eq!(m.send_cpu_ns(0), 145_000);
        assert_eq!(m.disk_ns(4096), 28_000_000 + 410_000);
        assert_eq!(m.disk_ns(44 * 1024), 28_000_000 + 11 * 410_000);
        assert_eq!(m.disk_ns(44 * 1024 + 1), 28_000_000 + 12 * 410_000 + 14_000_000);
        assert_eq!(m.disk_ns(100 * 1024), 28_000_000 + 25 * 410_000 + 2 * 14_000_000);
    }

    #[test]
    fn zero_units_do_not_divide_by_zero() {
        let m = Model {
            transmit_unit_bytes: 0,
            disk_block_bytes: 0,
            disk_chunk_bytes: 0,
            ..Model::default()
        };
        assert!(m.hit_cpu_ns(10) > 0 && m.disk_ns(10) > 0);
        assert_eq!(Model::default().disk_ns(u64::MAX), u64::MAX, "saturates, never wraps");
    }
}

//! What the simulator fit needs to know of an experiment besides its rows — the machine's
//! CPUs, the nodes' caches and CPU cap, and the users — written by the experiment as `shape.json`
//! beside `rows.json` and read back by [`crate::sim_fit`], so `table.md` stays prose for
//! people and nobody parses it.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Context, Result};

/// The file beside `rows.json`.
pub const FILE: &str = "shape.json";

/// The shape of one experiment run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunShape {
    /// CPUs the machine had online.
    pub cpus: u32,
    /// Each node's cache in MiB, one entry per node.
    pub cache_mb: Vec<u64>,
    /// Closed-loop users.
    pub users: u32,
    /// Every node process's CPU cap, as a share of one core (None: uncapped).
    #[serde(default)]
    pub node_cpu_share: Option<f64>,
}

impl RunShape {
    /// Writes `dir/shape.json`.
    pub fn write(&self, dir: &Path) -> Result<()> {
        let path = dir.join(FILE);
        let text = serde_json::to_string_pretty(self).context("encoding the run's shape")?;
        std::fs::write(&path, text + "\n").with_context(|| format!("writing {}", path.display()))
    }

    /// Reads `dir/shape.json`.
    pub fn read(dir: &Path) -> Result<RunShape> {
        let path = dir.join(FILE);
        let text = std::fs::read_to_string(&path).with_context(|| {
            format!("reading {}: results from larder bench experiment carry it", path.display())
        })?;
        serde_json::from_str(&text).with_context(|| format!("reading {}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_and_reads_back() {
        let dir = std::env::temp_dir().join(format!("larder-run-shape-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let shape = RunShape {
            cpus: 2,
            cache_mb: vec![16, 16, 8, 8],
            users: 32,
            node_cpu_share: Some(0.25),
        };
        shape.write(&dir).unwrap();
        assert_eq!(RunShape::read(&dir).unwrap(), shape);
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(RunShape::read(&dir).unwrap_err().to_string().contains("shape.json"));
    }
}

//! A directory for one run's files (configurations, children's logs), removed when the
//! run ends.

use std::path::{Path, PathBuf};

use crate::error::{Context, Result};

pub struct RunDir(PathBuf);

impl RunDir {
    /// `$TMPDIR/larder-<what>-<pid>`.
    pub fn create(what: &str) -> Result<RunDir> {
        let dir = std::env::temp_dir().join(format!("larder-{what}-{}", std::process::id()));
        // A leftover of an earlier process with our pid.
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir(&dir).with_context(|| format!("creating {}", dir.display()))?;
        Ok(RunDir(dir))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for RunDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

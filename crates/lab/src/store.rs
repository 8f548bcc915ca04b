//! The synthetic document store `larder up` serves when no `--docroot` is given (HACC's
//! static size mix) and the experiments' static stores: written once per size and mix
//! into a cache directory and reused after.
//!
//! A store is built in a directory of its own (named after this process) and renamed into
//! place only when every file is written, so a store under its final name is complete
//! and an interrupted build is never mistaken for one.

use std::path::{Path, PathBuf};

use trace::{docs_for_dataset, generate, served_url, write_docroot, SizeMix, SynthConfig};

use crate::error::{Context, LabError, Result};
use crate::report::Report;

/// Changes whenever the bytes a store holds for a given size would change.
const LAYOUT_VERSION: u32 = 1;
/// The generator's seed for every store (`larder bench --synth-seed` to load one).
pub const SEED: u64 = 1;
/// Documents up to this size are preferred as the example to fetch (the HACC mix's small
/// HTML files).
const EXAMPLE_MAX_BYTES: u64 = 8 * 1024;

pub struct Store {
    pub dir: PathBuf,
    pub docs: u32,
    pub bytes: u64,
    /// URL path of a document worth fetching first.
    pub example: String,
}

/// `given`, or where stores are kept by default.
pub fn root(given: Option<&Path>) -> Result<PathBuf> {
    given.map_or_else(default_root, |d| Ok(d.to_path_buf()))
}

/// Where stores are kept unless `--store-dir` says otherwise.
pub fn default_root() -> Result<PathBuf> {
    let absolute = |v: std::ffi::OsString| Some(PathBuf::from(v)).filter(|p| p.is_absolute());
    if let Some(xdg) = std::env::var_os("XDG_CACHE_HOME").and_then(absolute) {
        return Ok(xdg.join("larder"));
    }
    match std::env::var_os("HOME").and_then(absolute) {
        Some(home) => Ok(home.join(".cache").join("larder")),
        None => Err(LabError::Invalid(
            "neither XDG_CACHE_HOME nor HOME is set: give --store-dir".into(),
        )),
    }
}

/// The generator settings whose documents make the store of about `bytes` in `sizes`
/// (no requests: a caller that wants a request stream over the store sets them).
pub fn synth_config(bytes: u64, sizes: SizeMix) -> Result<SynthConfig> {
    let docs = docs_for_dataset(bytes, sizes, SEED)?;
    Ok(SynthConfig { docs, requests: 0, seed: SEED, sizes, ..SynthConfig::default() })
}

/// The store of about `bytes` in `sizes` under `root`: reused if it is there, built
/// otherwise (which `report` hears of: it takes a while).
pub fn ensure(root: &Path, bytes: u64, sizes: SizeMix, report: &dyn Report) -> Result<Store> {
    let config = synth_config(bytes, sizes)?;
    let docs = config.docs;
    let workload = generate(&config)?;
    let total = workload.targets.iter().map(|t| t.size).sum();
    let example = workload
        .targets
        .iter()
        .find(|t| t.size <= EXAMPLE_MAX_BYTES)
        .or(workload.targets.first())
        .map(|t| served_url(&t.path))
        .transpose()
        .map_err(|e| LabError::Invalid(format!("a store document's URL: {e:?}")))?
        .unwrap_or_else(|| "/".into());
    let mix = sizes.to_string().replace(':', "-");
    let dir = root.join(format!("store-v{LAYOUT_VERSION}-{mix}-seed{SEED}-{bytes}"));
    let store = Store { dir, docs, bytes: total, example };
    if store.dir.is_dir() {
        return Ok(store);
    }
    report.warn(&format!(
        "larder up: writing a {:.1} MiB synthetic store to {} (once; later runs reuse it)",
        total as f64 / (1 << 20) as f64,
        store.dir.display()
    ));
    let building = root.join(format!(".building-{}-{}", std::process::id(), docs));
    let result = write_docroot(&workload, &building)
        .with_context(|| format!("writing the store in {}", building.display()))
        .and_then(|_| match std::fs::rename(&building, &store.dir) {
            Ok(()) => Ok(()),
            // Another `larder up` finished the same store first: use theirs.
            Err(_) if store.dir.is_dir() => Ok(()),
            Err(e) => {
                Err(e).with_context(|| format!("moving the store to {}", store.dir.display()))
            }
        });
    if building.exists() {
        // Best effort: a leftover only costs disk space and is never taken for a store.
        let _ = std::fs::remove_dir_all(&building);
    }
    result.map(|()| store)
}

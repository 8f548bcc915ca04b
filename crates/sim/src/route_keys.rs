//! Targets keyed as larder route keys their URLs (`--route-keys`), so the simulated
//! hashing and placement see what the real router sees.

use std::path::Path;

use policy::{MapperConfig, Target, TargetMapper};
use trace::Workload;

use crate::SimError;

/// The URL a static server gives each of the workload's targets (its path, escaped).
pub fn served_urls(workload: &Workload) -> Result<Vec<String>, SimError> {
    workload
        .targets
        .iter()
        .map(|t| {
            trace::served_url(&t.path)
                .map_err(|e| SimError::Config(format!("target {:?} has no URL: {e:?}", t.path)))
        })
        .collect()
}

/// The URL of each target: one per line of `file` in target order (e.g. larder node's
/// dynamic view URLs), or without a file [`served_urls`].
pub fn target_urls(file: Option<&Path>, workload: &Workload) -> Result<Vec<String>, SimError> {
    let Some(path) = file else { return served_urls(workload) };
    let text = std::fs::read_to_string(path)
        .map_err(|error| SimError::Read { path: path.to_path_buf(), error })?;
    let urls: Vec<String> = text.lines().map(str::to_string).collect();
    if urls.len() != workload.targets.len() {
        return Err(SimError::Flag(format!(
            "{}: {} URLs for {} targets (one URL per target, in order)",
            path.display(),
            urls.len(),
            workload.targets.len()
        )));
    }
    Ok(urls)
}

/// The router's mapping of each URL (with a fixed `tree_depth`, or the mapper's default:
/// subtrees at every depth).
pub fn route_targets(urls: &[String], tree_depth: Option<usize>) -> Result<Vec<Target>, SimError> {
    let mapper = TargetMapper::new(MapperConfig { tree_depth, ..MapperConfig::default() });
    urls.iter()
        .enumerate()
        .map(|(i, url)| {
            mapper
                .map(url.as_bytes())
                .map(|m| m.target)
                .map_err(|e| SimError::Config(format!("target {i}: URL {url:?}: {e}")))
        })
        .collect()
}

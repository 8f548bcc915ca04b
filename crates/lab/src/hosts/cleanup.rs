//! What runs that died left behind: their namespaces (with the bridge and links inside)
//! stay mounted when a run is killed before it can remove them. Each is named with its
//! run's pid, so the next run removes those whose process is gone, and never another
//! live run's.

use std::path::Path;

use super::namespace;
use crate::error::Result;
use crate::report::Report;

/// Among `names`, the namespaces of runs whose process is not `alive`.
pub fn stale(names: &[String], alive: impl Fn(u32) -> bool) -> Vec<String> {
    names.iter().filter(|n| namespace::owner(n).is_some_and(|pid| !alive(pid))).cloned().collect()
}

/// Removes every namespace left by a run that is gone, saying so to `report`; one that
/// cannot be removed is a warning (it holds none of this run's names).
pub fn remove_stale(report: &dyn Report) -> Result<()> {
    let mut left = stale(&namespace::list()?, |pid| Path::new(&format!("/proc/{pid}")).exists());
    left.retain(|name| match namespace::delete(name) {
        Ok(()) => true,
        Err(e) => {
            report.warn(&format!("larder: could not remove {name}, left by a run that died: {e}"));
            false
        }
    });
    if !left.is_empty() {
        report.note(&format!(
            "larder: removed {} network namespaces left by runs that died: {}",
            left.len(),
            left.join(" ")
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_namespaces_of_dead_runs_are_stale() {
        let names: Vec<String> =
            ["larder-10-switch", "larder-10-n1", "larder-20-n1", "blue", "larder-x-n1"]
                .map(String::from)
                .into();
        assert_eq!(stale(&names, |pid| pid == 20), ["larder-10-switch", "larder-10-n1"]);
        assert!(stale(&names, |_| true).is_empty());
    }
}

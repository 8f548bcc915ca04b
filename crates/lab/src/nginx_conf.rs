//! What every nginx the lab starts (origin, front-end anchor, caching node) has in its
//! configuration alike.

use std::path::Path;

/// nginx's temporary-file directives, one per line inside the `http` block, all pointing
/// at `dir/tmp`: each nginx of a run keeps its temporary files in its own run directory
/// rather than in the distribution's default (`/var/lib/nginx`), so it needs no
/// directory made for it beforehand and leaves nothing behind the run.
pub fn temp_paths(dir: &Path) -> String {
    let d = dir.display();
    ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]
        .iter()
        .map(|kind| format!("    {kind}_temp_path {d}/tmp;\n"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_temporary_file_goes_under_the_run_directory() {
        let lines = temp_paths(Path::new("/tmp/run/c1"));
        assert_eq!(lines.lines().count(), 5, "{lines}");
        assert!(lines.lines().all(|l| l.starts_with("    ") && l.ends_with(" /tmp/run/c1/tmp;")));
        assert!(lines.contains("    proxy_temp_path /tmp/run/c1/tmp;\n"), "{lines}");
    }
}

//! The live dashboard served at `/` on the admin address: one self-contained HTML page
//! (its CSS and JavaScript inline, nothing fetched from elsewhere) that polls `/stats`
//! every second and draws per-node rows, the policy's figures, the hottest targets and
//! charts of the last minutes from successive snapshots.

/// The page, built into the binary.
pub(crate) const PAGE: &str = include_str!("dashboard.html");

//! The workloads of the experiments: what the nodes serve, how they serve it, and the
//! stream of request paths the load generator sends.
//!
//! - static: files of one size (`--file-size`) in a store written once and reused; the
//!   nodes read misses with O_DIRECT, so a miss costs a disk read as in the papers.
//! - dynamic: larder node's Domino-like views (`/app/<db>/<view>/<doc>?OpenDocument`); a
//!   miss costs the view's computation, a hit cuts a document out of the cached view.
//! - trace: the targets of a real access log, written as files of their logged sizes.
//!
//! Popularity over documents (or views) is uniform or Zipf; the stream is generated once
//! with a fixed seed, so every front-end gets the same requests in the same order.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use trace::{generate, load_workload, served_url, LoadOptions, Popularity, SizeMix};

use bench::plan::RequestShape;

use crate::error::{Context, LabError, Result};
use crate::report::Report;
use crate::store;
use crate::video::{self, LargeObjects};

/// Requests in a generated stream; the load generator cycles through it.
pub const STREAM_REQUESTS: u64 = 1_000_000;
/// Documents cut out of one dynamic view (all share the view's cache entry).
const DOCS_PER_VIEW: u32 = 4;
/// Views per dynamic database (`/app/db<N>/…`).
const VIEWS_PER_DB: u32 = 64;

/// The URL of document `doc` of dynamic view `view`.
pub fn view_url(view: u32, doc: u32) -> String {
    format!("/app/db{}/v{}/d{doc}?OpenDocument", view / VIEWS_PER_DB, view % VIEWS_PER_DB)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Content {
    Static,
    Dynamic,
    Trace,
    /// Large objects fetched whole and by ranges ([`crate::video`]).
    Video,
    /// A cold crowd on the largest of them.
    VideoCrowd,
}

/// One of the workloads `--workloads` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorkloadKind {
    pub content: Content,
    /// Zipf popularity (with `--alpha`) instead of uniform; a trace has its own.
    pub zipf: bool,
}

impl WorkloadKind {
    pub fn new(content: Content, zipf: bool) -> WorkloadKind {
        WorkloadKind { content, zipf }
    }
}

impl FromStr for WorkloadKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let (content, zipf) = match s {
            "static-uniform" => (Content::Static, false),
            "static-zipf" => (Content::Static, true),
            "dynamic-uniform" => (Content::Dynamic, false),
            "dynamic-zipf" => (Content::Dynamic, true),
            "trace" => (Content::Trace, false),
            "video" => (Content::Video, true),
            "video-crowd" => (Content::VideoCrowd, false),
            _ => {
                return Err(format!(
                    "{s:?}: expected static-uniform, static-zipf, dynamic-uniform, \
                     dynamic-zipf, trace, video or video-crowd"
                ))
            }
        };
        Ok(WorkloadKind { content, zipf })
    }
}

impl fmt::Display for WorkloadKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let popularity = if self.zipf { "zipf" } else { "uniform" };
        match self.content {
            Content::Static => write!(f, "static-{popularity}"),
            Content::Dynamic => write!(f, "dynamic-{popularity}"),
            Content::Trace => f.write_str("trace"),
            Content::Video => f.write_str("video"),
            Content::VideoCrowd => f.write_str("video-crowd"),
        }
    }
}

/// What a dynamic view miss costs, as the node is told.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DynCost {
    /// CPU microseconds, calibrated by each node when it starts.
    Micros(u64),
    /// Hash-loop rounds.
    Iterations(u64),
}

impl DynCost {
    /// From the two ways the flags can give it: rounds, if given, else microseconds.
    pub fn new(micros: u64, iterations: Option<u64>) -> DynCost {
        iterations.map_or(DynCost::Micros(micros), DynCost::Iterations)
    }
}

/// How the workloads are sized.
#[derive(Clone, Debug, PartialEq)]
pub struct Sizing {
    /// Bytes of the static data set, or of all dynamic views together.
    pub dataset_bytes: u64,
    pub file_bytes: u64,
    pub view_bytes: u64,
    pub doc_bytes: u64,
    pub dyn_cost: DynCost,
    pub alpha: f64,
    pub seed: u64,
    /// The large-object workloads' shape.
    pub large: LargeObjects,
}

/// A workload ready to run: the nodes' docroot and flags, and the requests.
pub struct Workload {
    pub kind: WorkloadKind,
    pub docroot: PathBuf,
    /// Flags every node gets for this workload.
    pub node_args: Vec<String>,
    /// URL paths; the stream holds indices into them.
    pub paths: Vec<String>,
    pub stream: Vec<u32>,
    /// Bytes the caches would need to hold everything requested.
    pub dataset_bytes: u64,
    /// Distinct cacheable objects (files or views).
    pub objects: u64,
    /// The largest object.
    pub largest_bytes: u64,
    /// Per path, what is asked and the answer it needs (empty: whole GETs).
    pub shapes: Vec<RequestShape>,
    /// A path that answers without fetching a measured object (None: the first request's).
    pub probe: Option<String>,
    /// Measured cold: no warm-up (a flash crowd).
    pub cold: bool,
}

impl Workload {
    /// A path that answers 200 quickly, to see that a front-end is up.
    pub fn probe_path(&self) -> &str {
        self.probe.as_deref().unwrap_or(&self.paths[self.stream[0] as usize])
    }

    /// Whether its objects are large ones, cached as slices and counted at the origin.
    pub fn large(&self) -> bool {
        matches!(self.kind.content, Content::Video | Content::VideoCrowd)
    }

    /// Flags of a node caching this workload's files from an origin: every file small
    /// enough to be cached whole; large objects as slices, by the node's defaults.
    pub fn caching_node_args(&self) -> Vec<String> {
        if self.large() {
            return Vec::new();
        }
        vec!["--max-cached-file-kb".into(), self.largest_bytes.div_ceil(1024).max(1).to_string()]
    }
}

/// Builds `kind`: writes or reuses its store under `store_root`.
pub fn build(
    kind: WorkloadKind,
    sizing: &Sizing,
    trace: Option<&Path>,
    store_root: &Path,
    report: &dyn Report,
) -> Result<Workload> {
    let popularity =
        if kind.zipf { Popularity::Zipf { alpha: sizing.alpha } } else { Popularity::Uniform };
    match kind.content {
        Content::Static => {
            let sizes = SizeMix::Fixed(sizing.file_bytes);
            let store = store::ensure(store_root, sizing.dataset_bytes, sizes, report)?;
            let mut config = store::synth_config(sizing.dataset_bytes, sizes)?;
            config.requests = STREAM_REQUESTS;
            config.popularity = popularity;
            config.seed = sizing.seed;
            let w = generate(&config).context("generating the request stream")?;
            let paths = urls(w.targets.iter().map(|t| t.path.as_str()))?;
            Ok(Workload {
                kind,
                docroot: store.dir,
                node_args: static_node_args(sizing.file_bytes),
                paths,
                stream: w.requests.iter().map(|r| r.target).collect(),
                dataset_bytes: w.dataset_bytes(),
                objects: w.targets.len() as u64,
                largest_bytes: sizing.file_bytes,
                shapes: Vec::new(),
                probe: None,
                cold: false,
            })
        }
        Content::Dynamic => {
            let views = (sizing.dataset_bytes / sizing.view_bytes).max(1);
            let views = u32::try_from(views)
                .map_err(|_| LabError::Invalid("too many dynamic views".into()))?;
            let config = trace::SynthConfig {
                docs: views,
                requests: STREAM_REQUESTS,
                seed: sizing.seed,
                sizes: SizeMix::Fixed(sizing.view_bytes),
                popularity,
                ..trace::SynthConfig::default()
            };
            let w = generate(&config).context("generating the request stream")?;
            let paths =
                (0..views).flat_map(|v| (0..DOCS_PER_VIEW).map(move |d| view_url(v, d))).collect();
            // Requests walk through a view's documents, so a view's hits are not all one URL.
            let stream = w
                .requests
                .iter()
                .enumerate()
                .map(|(i, r)| r.target * DOCS_PER_VIEW + i as u32 % DOCS_PER_VIEW)
                .collect();
            // Static requests never come, but a node needs a docroot.
            let docroot = store_root.join("empty-docroot");
            std::fs::create_dir_all(&docroot)
                .with_context(|| format!("creating {}", docroot.display()))?;
            Ok(Workload {
                kind,
                docroot,
                node_args: dynamic_node_args(sizing),
                paths,
                stream,
                dataset_bytes: u64::from(views) * sizing.view_bytes,
                objects: u64::from(views),
                largest_bytes: sizing.view_bytes,
                shapes: Vec::new(),
                probe: None,
                cold: false,
            })
        }
        Content::Trace => {
            let path = trace
                .ok_or_else(|| LabError::Invalid("the trace workload needs --trace FILE".into()))?;
            let (w, loaded) = load_workload(path, &LoadOptions::default())
                .with_context(|| format!("loading {}", path.display()))?;
            let name = path.file_name().map_or("trace".into(), |n| n.to_string_lossy());
            let docroot = store_root.join(format!("trace-{name}-{}", w.dataset_bytes()));
            if !docroot.is_dir() {
                report.warn(&format!(
                    "larder experiment: writing {} files of {} ({} requests) to {} (once)",
                    w.targets.len(),
                    path.display(),
                    loaded.requests,
                    docroot.display()
                ));
                trace::write_docroot(&w, &docroot)
                    .with_context(|| format!("writing {}", docroot.display()))?;
            }
            let largest = w.targets.iter().map(|t| t.size).max().unwrap_or(0);
            Ok(Workload {
                kind,
                docroot,
                node_args: static_node_args(largest),
                paths: urls(w.targets.iter().map(|t| t.path.as_str()))?,
                stream: w.requests.iter().map(|r| r.target).collect(),
                dataset_bytes: w.dataset_bytes(),
                objects: w.targets.len() as u64,
                largest_bytes: largest,
                shapes: Vec::new(),
                probe: None,
                cold: false,
            })
        }
        Content::Video | Content::VideoCrowd => {
            let crowd = kind.content == Content::VideoCrowd;
            let b =
                video::build(&sizing.large, crowd, sizing.alpha, sizing.seed, store_root, report)?;
            Ok(Workload {
                kind,
                docroot: b.docroot,
                node_args: Vec::new(),
                paths: b.paths,
                stream: b.stream,
                dataset_bytes: b.dataset_bytes,
                objects: b.objects,
                largest_bytes: b.largest_bytes,
                shapes: b.shapes,
                probe: Some(video::PROBE_PATH.into()),
                cold: crowd,
            })
        }
    }
}

/// The URL paths where a node serving a written docroot has each target.
fn urls<'a>(targets: impl Iterator<Item = &'a str>) -> Result<Vec<String>> {
    targets
        .map(|t| served_url(t).map_err(|e| LabError::Invalid(format!("target {t:?}: {e:?}"))))
        .collect()
}

/// Misses read from disk with O_DIRECT, and every file is small enough to be cached.
fn static_node_args(largest_file: u64) -> Vec<String> {
    let kb = largest_file.div_ceil(1024).max(1);
    vec!["--direct-io".into(), "--max-cached-file-kb".into(), kb.to_string()]
}

fn dynamic_node_args(sizing: &Sizing) -> Vec<String> {
    let kb = |b: u64| b.div_ceil(1024).max(1).to_string();
    let cost = match sizing.dyn_cost {
        DynCost::Micros(us) => ["--dyn-cost-us".to_string(), us.to_string()],
        DynCost::Iterations(n) => ["--dyn-iterations".to_string(), n.to_string()],
    };
    let mut args = cost.to_vec();
    args.extend([
        "--dyn-view-kb".into(),
        kb(sizing.view_bytes),
        "--dyn-doc-kb".into(),
        kb(sizing.doc_bytes),
    ]);
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for name in [
            "static-uniform",
            "static-zipf",
            "dynamic-uniform",
            "dynamic-zipf",
            "trace",
            "video",
            "video-crowd",
        ] {
            assert_eq!(name.parse::<WorkloadKind>().unwrap().to_string(), name);
        }
        assert!("static".parse::<WorkloadKind>().is_err());
    }
}

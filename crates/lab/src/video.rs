//! The large-object workloads of the origin experiment, as a video or download site sees
//! them: tens of objects of 2–64 MiB with Zipf popularity, fetched whole or as byte
//! ranges (a player seeking, a download resumed), and a cold flash crowd on the largest.
//!
//! - `video`: object sizes spaced evenly on a log scale from [`SMALLEST`] to [`LARGEST`]
//!   (so most of the bytes are in the large ones), popularity ranks shuffled with the seed
//!   (the most popular object is not the largest); a share of the requests asks for a
//!   range of a given size at one of [`RANGE_POSITIONS`] offsets, the rest for the whole
//!   object.
//! - `video-crowd`: every request on the largest object, cold: no warm-up, so the run
//!   measures what a crowd arriving at once costs the origin.
//!
//! Every request knows the answer it must get (206 and the range's length, or 200 and the
//! object's), so a wrong or short answer counts as an error. The store is written once
//! (seeded bytes) and reused; a tiny `probe` file lets a front-end be checked without
//! fetching an object.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use bench::plan::{ByteRange, RequestShape};
use trace::Rng;

use crate::error::{Context, Result};
use crate::report::Report;

/// The smallest object.
pub const SMALLEST: u64 = 2 << 20;
/// The largest object.
pub const LARGEST: u64 = 64 << 20;
/// Offsets a range may start at in each object (evenly spread over it).
pub const RANGE_POSITIONS: u64 = 32;
/// Requests in a generated stream (large objects: a run serves thousands, not millions).
pub const STREAM_REQUESTS: usize = 100_000;
/// Changes whenever the bytes of a store would change.
const LAYOUT_VERSION: u32 = 1;
/// The file a front-end is probed with.
pub const PROBE_PATH: &str = "/v/probe.txt";

/// How the large-object workloads are shaped.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LargeObjects {
    /// Distinct objects of the `video` workload (at least 2).
    pub objects: u32,
    /// Share of the requests that ask for a byte range (0 to 1).
    pub range_share: f64,
    /// Bytes of a range request.
    pub range_bytes: u64,
}

impl Default for LargeObjects {
    fn default() -> Self {
        LargeObjects { objects: 16, range_share: 0.5, range_bytes: 1 << 20 }
    }
}

/// The objects' sizes: geometric from [`SMALLEST`] to [`LARGEST`], each a little off a
/// whole number of MiB (so slices and ranges meet a short last slice).
pub fn sizes(objects: u32) -> Vec<u64> {
    let n = objects.max(2);
    let ratio = (LARGEST as f64 / SMALLEST as f64).ln();
    (0..n)
        .map(|i| {
            let at = f64::from(i) / f64::from(n - 1);
            let size = (SMALLEST as f64 * (ratio * at).exp()) as u64;
            (size & !0xfff).saturating_sub(4096 * u64::from(i + 1)).max(1 << 20) + 777
        })
        .collect()
}

/// The URL path of object `i`.
pub fn object_path(i: usize) -> String {
    format!("/v/o{i}.bin")
}

/// A large-object workload ready to run: request paths (one per object and shape), what
/// each must be answered with, and the stream over them.
pub struct Built {
    pub docroot: PathBuf,
    pub paths: Vec<String>,
    pub shapes: Vec<RequestShape>,
    pub stream: Vec<u32>,
    pub dataset_bytes: u64,
    pub objects: u64,
    pub largest_bytes: u64,
}

/// Builds `video` (or, with `crowd`, `video-crowd`): writes or reuses the store under
/// `store_root`, draws the stream with `seed` and Zipf(`alpha`) popularity.
pub fn build(
    shape: &LargeObjects,
    crowd: bool,
    alpha: f64,
    seed: u64,
    store_root: &Path,
    report: &dyn Report,
) -> Result<Built> {
    build_of(&sizes(shape.objects), (shape, crowd), alpha, seed, store_root, report)
}

/// [`build`] over objects of `sizes` (the store is named by their count alone, so every
/// run but the tests' builds it of [`sizes`]).
fn build_of(
    sizes: &[u64],
    (shape, crowd): (&LargeObjects, bool),
    alpha: f64,
    seed: u64,
    store_root: &Path,
    report: &dyn Report,
) -> Result<Built> {
    if !(0.0..=1.0).contains(&shape.range_share) || shape.range_bytes == 0 {
        return Err(crate::error::LabError::Invalid(
            "--range-share must be between 0 and 1 and --range-kb above 0".into(),
        ));
    }
    let docroot = ensure_store(store_root, sizes, report)?;
    let requested: Vec<usize> =
        if crowd { vec![sizes.len() - 1] } else { (0..sizes.len()).collect() };
    // Per requested object: its whole GET, then a range at each position.
    let mut paths = Vec::new();
    let mut shapes = Vec::new();
    for &i in &requested {
        let size = sizes[i];
        paths.push(object_path(i));
        shapes.push(RequestShape { range: None, object_bytes: Some(size) });
        let len = shape.range_bytes.min(size);
        for p in 0..RANGE_POSITIONS {
            let first = (size - len) * p / (RANGE_POSITIONS - 1);
            paths.push(object_path(i));
            shapes.push(RequestShape {
                range: Some(ByteRange { first, last: first + len - 1 }),
                object_bytes: Some(size),
            });
        }
    }
    let variants = 1 + RANGE_POSITIONS as u32;
    let mut rng = Rng::with_stream(seed, 27);
    // Popularity rank r → object, shuffled so the most popular is not the largest.
    let mut by_rank: Vec<u32> = (0..requested.len() as u32).collect();
    for k in (1..by_rank.len()).rev() {
        let j = rng.below(k as u64 + 1) as usize;
        by_rank.swap(k, j);
    }
    let weights: Vec<f64> =
        (0..by_rank.len()).map(|r| 1.0 / ((r + 1) as f64).powf(alpha)).collect();
    let total: f64 = weights.iter().sum();
    let mut stream = Vec::with_capacity(STREAM_REQUESTS);
    for _ in 0..STREAM_REQUESTS {
        let mut u = rng.next_f64() * total;
        let rank = weights.iter().position(|w| {
            u -= w;
            u < 0.0
        });
        let object = by_rank[rank.unwrap_or(by_rank.len() - 1)];
        let variant = if rng.next_f64() < shape.range_share {
            1 + rng.below(RANGE_POSITIONS) as u32
        } else {
            0
        };
        stream.push(object * variants + variant);
    }
    let dataset_bytes = requested.iter().map(|&i| sizes[i]).sum();
    Ok(Built {
        docroot,
        paths,
        shapes,
        stream,
        dataset_bytes,
        objects: requested.len() as u64,
        largest_bytes: sizes.iter().copied().max().unwrap_or(0),
    })
}

/// The store of objects of `sizes` under `root`: reused if complete, else written in a
/// directory of its own and renamed into place.
fn ensure_store(root: &Path, sizes: &[u64], report: &dyn Report) -> Result<PathBuf> {
    let dir = root.join(format!("video-v{LAYOUT_VERSION}-{}", sizes.len()));
    if dir.is_dir() {
        return Ok(dir);
    }
    let total: u64 = sizes.iter().sum();
    report.warn(&format!(
        "larder experiment: writing {} large objects ({:.0} MiB) to {} (once)",
        sizes.len(),
        total as f64 / f64::from(1 << 20),
        dir.display()
    ));
    let building = root.join(format!(".building-video-{}", std::process::id()));
    let objects = building.join("v");
    std::fs::create_dir_all(&objects).with_context(|| format!("creating {}", objects.display()))?;
    let write = |name: &str, size: u64, seed: u64| -> Result<()> {
        let path = objects.join(name);
        let file =
            std::fs::File::create(&path).with_context(|| format!("creating {}", path.display()))?;
        let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
        let mut rng = Rng::with_stream(seed, 1);
        let mut left = size;
        while left > 0 {
            let word = rng.next_u64().to_le_bytes();
            let n = left.min(8) as usize;
            out.write_all(&word[..n]).with_context(|| format!("writing {}", path.display()))?;
            left -= n as u64;
        }
        out.flush().with_context(|| format!("writing {}", path.display()))
    };
    for (i, &size) in sizes.iter().enumerate() {
        write(&format!("o{i}.bin"), size, i as u64)?;
    }
    let probe = objects.join("probe.txt");
    std::fs::write(&probe, "ok\n").with_context(|| format!("writing {}", probe.display()))?;
    match std::fs::rename(&building, &dir) {
        Ok(()) => Ok(dir),
        // Another run finished the same store first: use theirs.
        Err(_) if dir.is_dir() => {
            let _ = std::fs::remove_dir_all(&building);
            Ok(dir)
        }
        Err(e) => Err(e).with_context(|| format!("moving the store to {}", dir.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Kept;

    #[test]
    fn sizes_span_the_range_and_are_not_slice_aligned() {
        let s = sizes(16);
        assert_eq!(s.len(), 16);
        assert!(s[0] >= SMALLEST - (1 << 16) && s[0] <= SMALLEST + 1024, "{}", s[0]);
        assert!(s[15] <= LARGEST && s[15] > LARGEST - (1 << 20), "{}", s[15]);
        assert!(s.windows(2).all(|w| w[0] < w[1]), "{s:?}");
        assert!(s.iter().all(|b| b % (1 << 20) != 0));
    }

    #[test]
    fn streams_mix_ranges_and_whole_objects_with_the_answers_they_need() {
        let dir = std::env::temp_dir().join(format!("larder-video-test-{}", std::process::id()));
        let shape = LargeObjects { objects: 2, range_share: 0.25, range_bytes: 1000 };
        // Kilobytes where a run writes megabytes (`sizes` is checked above): each object
        // written whole, and every request of the stream knowing its answer.
        let sizes = [3 * 1024 + 777, 70 * 1024 + 777];
        let built = build_of(&sizes, (&shape, false), 0.8, 3, &dir, &Kept::default()).unwrap();
        for (i, &size) in sizes.iter().enumerate() {
            let file = built.docroot.join(format!("v/o{i}.bin"));
            assert_eq!(std::fs::metadata(&file).unwrap().len(), size);
        }
        assert!(built.docroot.join("v/probe.txt").is_file());
        assert_eq!(built.paths.len(), built.shapes.len());
        assert_eq!(built.stream.len(), STREAM_REQUESTS);
        let ranges = built.stream.iter().filter(|&&t| built.shapes[t as usize].range.is_some());
        let share = ranges.count() as f64 / STREAM_REQUESTS as f64;
        assert!((0.23..0.27).contains(&share), "{share}");
        for (path, shape) in built.paths.iter().zip(&built.shapes) {
            let object: usize =
                path.trim_start_matches("/v/o").trim_end_matches(".bin").parse().unwrap();
            assert_eq!(shape.object_bytes, Some(sizes[object]));
            if let Some(r) = shape.range {
                assert_eq!(r.len(), 1000);
                assert!(r.last < sizes[object]);
            }
        }
        let crowd = build_of(&sizes, (&shape, true), 0.8, 3, &dir, &Kept::default()).unwrap();
        assert!(crowd.paths.iter().all(|p| p == "/v/o1.bin"));
        assert_eq!(crowd.objects, 1);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

//! Synthetic workloads: a document store and a request stream, deterministic from a seed.
//!
//! Sizes: HACC's long-tail static mix (about 40% of files 5–8 KiB, the rest between
//! 8 KiB and 1.4 MiB) or one fixed size. The HACC paper gives only those shares and
//! bounds, so the tail is drawn log-uniformly (every factor of two between 8 KiB and
//! 1.4 MiB equally likely): many mid-sized files, few large ones, mean about 170 KB.
//!
//! Popularity: uniform, or Zipf(alpha) over popularity ranks (rank k drawn with
//! probability ∝ 1/k^alpha, through an alias table). Ranks are shuffled onto documents,
//! so popularity is not correlated with a document's index, path or size unless
//! `popular_first` asks for it.
//!
//! Each draw comes from its own [`Rng`] stream of the seed, so the document sizes do not
//! change when only the number of requests does.
//!
//! Times have one-second resolution like a CLF log: request `i` is sent at second
//! `i / requests_per_sec`; each request's user is drawn uniformly.

use crate::error::TraceError;
use crate::rng::Rng;
use crate::workload::{TargetInfo, WorkRequest, Workload};
use std::fmt;
use std::str::FromStr;

const SIZE_STREAM: u64 = 1;
const RANK_STREAM: u64 = 2;
const REQUEST_STREAM: u64 = 3;

/// HACC's share of small files and the bounds of both parts of the mix.
const HACC_SMALL_SHARE: f64 = 0.4;
const HACC_SMALL: (u64, u64) = (5 * 1024, 8 * 1024);
const HACC_TAIL_MAX: u64 = 1_468_006; // 1.4 MiB

/// Upper bound of [`docs_for_dataset`], so a typo cannot ask for a billion files.
pub const MAX_DOCS: u32 = 100_000_000;

/// How document sizes are drawn.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum SizeMix {
    /// HACC's mix: 40% uniform in 5–8 KiB, 60% log-uniform in 8 KiB–1.4 MiB.
    Hacc,
    /// Every document has this size in bytes.
    Fixed(u64),
}

impl SizeMix {
    fn draw(self, rng: &mut Rng) -> u64 {
        match self {
            SizeMix::Fixed(size) => size,
            SizeMix::Hacc if rng.next_f64() < HACC_SMALL_SHARE => {
                HACC_SMALL.0 + rng.below(HACC_SMALL.1 - HACC_SMALL.0)
            }
            SizeMix::Hacc => {
                let (lo, hi) = ((HACC_SMALL.1 as f64).ln(), (HACC_TAIL_MAX as f64).ln());
                ((lo + rng.next_f64() * (hi - lo)).exp() as u64).clamp(HACC_SMALL.1, HACC_TAIL_MAX)
            }
        }
    }
}

impl FromStr for SizeMix {
    type Err = String;

    /// `hacc` or `fixed:SIZE` (e.g. `fixed:8KB`, see [`crate::parse_size`]).
    fn from_str(s: &str) -> Result<Self, String> {
        match s.split_once(':') {
            None if s.eq_ignore_ascii_case("hacc") => Ok(SizeMix::Hacc),
            Some((kind, size)) if kind.eq_ignore_ascii_case("fixed") => {
                Ok(SizeMix::Fixed(crate::size::parse_size(size)?))
            }
            _ => Err(format!("{s:?}: expected `hacc` or `fixed:SIZE`")),
        }
    }
}

impl fmt::Display for SizeMix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SizeMix::Hacc => f.write_str("hacc"),
            SizeMix::Fixed(size) => write!(f, "fixed:{size}"),
        }
    }
}

/// How often each document is requested.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Popularity {
    Uniform,
    /// Rank k (1-based) requested with probability ∝ 1/k^alpha; alpha ≥ 0 (0 = uniform).
    Zipf {
        alpha: f64,
    },
}

/// Everything that determines a synthetic workload.
#[derive(Clone, Debug, PartialEq)]
pub struct SynthConfig {
    /// Documents in the store (≥ 1); see [`docs_for_dataset`] to size it in bytes.
    pub docs: u32,
    pub requests: u64,
    /// Distinct users (clients), ≥ 1.
    pub users: u32,
    pub seed: u64,
    pub sizes: SizeMix,
    pub popularity: Popularity,
    /// Make document 0 the most popular, 1 the next, ... instead of shuffling ranks.
    pub popular_first: bool,
    /// Request rate of the stream, ≥ 1; sets the time span and the think times.
    pub requests_per_sec: u32,
}

impl Default for SynthConfig {
    fn default() -> Self {
        SynthConfig {
            docs: 10_000,
            requests: 1_000_000,
            users: 1_000,
            seed: 1,
            sizes: SizeMix::Hacc,
            popularity: Popularity::Zipf { alpha: 1.0 },
            popular_first: false,
            requests_per_sec: 1_000,
        }
    }
}

impl SynthConfig {
    /// One file of `size` bytes requested over and over (the Flash/HACC best case).
    pub fn single_file(size: u64) -> Self {
        SynthConfig {
            docs: 1,
            sizes: SizeMix::Fixed(size),
            popularity: Popularity::Uniform,
            ..SynthConfig::default()
        }
    }

    fn validate(&self) -> Result<(), TraceError> {
        let fail = |m: &str| Err(TraceError::Config(m.to_string()));
        if self.docs == 0 || self.docs > MAX_DOCS {
            return fail(&format!("docs must be in 1..={MAX_DOCS}"));
        }
        if self.users == 0 {
            return fail("users must be at least 1");
        }
        if self.requests_per_sec == 0 {
            return fail("requests_per_sec must be at least 1");
        }
        if let Popularity::Zipf { alpha } = self.popularity {
            if !alpha.is_finite() || alpha < 0.0 {
                return fail("zipf alpha must be a finite number >= 0");
            }
        }
        Ok(())
    }
}

/// The path of document `index`: a two-level tree of 100 × 100 directories (so subtree
/// policies have subtrees), extension by size class (`html` small, `gif` mid, `pdf`
/// large) so content-class rules have something to match.
pub fn doc_path(index: u32, size: u64) -> String {
    let ext = match size {
        s if s < 8 * 1024 => "html",
        s if s < 128 * 1024 => "gif",
        _ => "pdf",
    };
    format!("/d/{:02}/{:02}/doc-{index:06}.{ext}", index / 10_000, index / 100 % 100)
}

/// Document sizes in order, as [`generate`] draws them for `seed`.
pub fn doc_sizes(sizes: SizeMix, seed: u64) -> impl Iterator<Item = u64> {
    let mut rng = Rng::with_stream(seed, SIZE_STREAM);
    std::iter::repeat_with(move || sizes.draw(&mut rng))
}

/// The number of documents whose sizes (as drawn for `seed`) first add up to at least
/// `bytes`: pass it as [`SynthConfig::docs`] for a data set of about that size.
pub fn docs_for_dataset(bytes: u64, sizes: SizeMix, seed: u64) -> Result<u32, TraceError> {
    if sizes == SizeMix::Fixed(0) && bytes > 0 {
        return Err(TraceError::Config("a data set cannot be made of empty files".into()));
    }
    let mut total = 0u64;
    for (n, size) in (1..=MAX_DOCS).zip(doc_sizes(sizes, seed)) {
        total = total.saturating_add(size);
        if total >= bytes {
            return Ok(n);
        }
    }
    Err(TraceError::Config(format!("a data set of {bytes} bytes needs more than {MAX_DOCS} docs")))
}

/// Draws popularity ranks (0-based).
enum RankSampler {
    Uniform(u64),
    /// Walker/Vose alias table: O(1) per draw and one random memory access, where a
    /// binary search over a CDF of 100k ranks costs ~17 mostly cache-missing probes.
    Alias {
        accept: Vec<f64>,
        alias: Vec<u32>,
    },
}

impl RankSampler {
    fn new(docs: u32, popularity: Popularity) -> Self {
        let Popularity::Zipf { alpha } = popularity else {
            return RankSampler::Uniform(u64::from(docs));
        };
        let weights: Vec<f64> = (1..=docs).map(|k| f64::from(k).powf(-alpha)).collect();
        let scale = f64::from(docs) / weights.iter().sum::<f64>();
        let mut scaled: Vec<f64> = weights.iter().map(|w| w * scale).collect();
        let (mut small, mut large): (Vec<u32>, Vec<u32>) =
            (0..docs).partition(|&i| scaled[i as usize] < 1.0);
        let mut accept = vec![1.0; docs as usize];
        let mut alias: Vec<u32> = (0..docs).collect();
        while let (Some(&s), Some(&l)) = (small.last(), large.last()) {
            small.pop();
            accept[s as usize] = scaled[s as usize];
            alias[s as usize] = l;
            scaled[l as usize] -= 1.0 - scaled[s as usize];
            if scaled[l as usize] < 1.0 {
                large.pop();
                small.push(l);
            }
        }
        // Whatever is left holds (up to rounding) exactly its share: accept = 1.
        RankSampler::Alias { accept, alias }
    }

    fn draw(&self, rng: &mut Rng) -> u32 {
        match self {
            RankSampler::Uniform(n) => rng.below(*n) as u32,
            RankSampler::Alias { accept, alias } => {
                let i = rng.below(accept.len() as u64) as usize;
                if rng.next_f64() < accept[i] {
                    i as u32
                } else {
                    alias[i]
                }
            }
        }
    }
}

/// Generates the workload `config` describes: every document is a target (requested or
/// not, so the data set is what was asked for), in index order.
pub fn generate(config: &SynthConfig) -> Result<Workload, TraceError> {
    config.validate()?;
    let targets: Vec<TargetInfo> = doc_sizes(config.sizes, config.seed)
        .zip(0..config.docs)
        .map(|(size, i)| TargetInfo { path: doc_path(i, size), size })
        .collect();

    let mut rank_to_doc: Vec<u32> = (0..config.docs).collect();
    if !config.popular_first {
        let mut rng = Rng::with_stream(config.seed, RANK_STREAM);
        for i in (1..rank_to_doc.len()).rev() {
            rank_to_doc.swap(i, rng.below(i as u64 + 1) as usize);
        }
    }

    let sampler = RankSampler::new(config.docs, config.popularity);
    let mut rng = Rng::with_stream(config.seed, REQUEST_STREAM);
    let rate = u64::from(config.requests_per_sec);
    let requests = (0..config.requests)
        .map(|i| WorkRequest {
            target: rank_to_doc[sampler.draw(&mut rng) as usize],
            client: rng.below(u64::from(config.users)) as u32,
            time_ms: i / rate * 1000,
        })
        .collect();
    Ok(Workload { targets, requests })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn counts(w: &Workload) -> Vec<u64> {
        let mut c = vec![0u64; w.targets.len()];
        for r in &w.requests {
            c[r.target as usize] += 1;
        }
        c
    }

    #[test]
    fn hacc_mix_has_the_papers_shape() {
        let sizes: Vec<u64> = doc_sizes(SizeMix::Hacc, 9).take(20_000).collect();
        let small = sizes.iter().filter(|&&s| s < 8 * 1024).count() as f64 / 20_000.0;
        assert!((0.38..0.42).contains(&small), "{small}");
        assert!(sizes.iter().all(|&s| (5 * 1024..=HACC_TAIL_MAX).contains(&s)));
        let mean = sizes.iter().sum::<u64>() as f64 / 20_000.0;
        assert!((150_000.0..190_000.0).contains(&mean), "{mean}");
        assert!(sizes.iter().any(|&s| s > 1_000_000));
    }

    #[test]
    fn zipf_is_skewed_and_not_tied_to_index() {
        let config = SynthConfig { docs: 1000, requests: 100_000, ..SynthConfig::default() };
        let mut c = counts(&generate(&config).unwrap());
        assert!(c[0] < 5_000, "rank shuffle should move the top document away from index 0");
        c.sort_unstable_by(|a, b| b.cmp(a));
        // Zipf(1) over 1000 ranks: the top rank takes 1/H(1000) ≈ 13.4%.
        assert!((12_000..15_000).contains(&c[0]), "{}", c[0]);
        assert!(c[0] * 10 > c[1] * 17 && c[1] > c[9]);

        let ordered = SynthConfig { popular_first: true, ..config };
        let c = counts(&generate(&ordered).unwrap());
        assert!(c[0] > c[1] && c[1] > c[10] && c[10] > c[500]);
    }

    #[test]
    fn alias_table_is_exact() {
        for (docs, alpha) in [(1, 1.0), (7, 0.0), (50, 0.8), (1000, 1.2)] {
            let RankSampler::Alias { accept, alias } =
                RankSampler::new(docs, Popularity::Zipf { alpha })
            else {
                panic!("zipf gives an alias table")
            };
            let mut implied = accept.clone();
            for (i, &a) in alias.iter().enumerate() {
                if a as usize != i {
                    implied[a as usize] += 1.0 - accept[i];
                }
            }
            let total: f64 = (1..=docs).map(|k| f64::from(k).powf(-alpha)).sum();
            for (k, p) in implied.iter().enumerate() {
                let want = (k as f64 + 1.0).powf(-alpha) / total;
                assert!((p / f64::from(docs) - want).abs() < 1e-9, "docs {docs} rank {k}");
            }
        }
    }

    #[test]
    fn uniform_is_flat() {
        let config = SynthConfig {
            docs: 100,
            requests: 100_000,
            popularity: Popularity::Uniform,
            ..SynthConfig::default()
        };
        assert!(counts(&generate(&config).unwrap()).iter().all(|&c| (800..1200).contains(&c)));
    }

    #[test]
    fn single_file_and_paths() {
        let w = generate(&SynthConfig { requests: 10, ..SynthConfig::single_file(4096) }).unwrap();
        assert_eq!(
            w.targets,
            vec![TargetInfo { path: "/d/00/00/doc-000000.html".into(), size: 4096 }]
        );
        assert!(w.requests.iter().all(|r| r.target == 0));
        assert_eq!(doc_path(1234, 200_000), "/d/00/12/doc-001234.pdf");
        assert_eq!(doc_path(1_234_567, 9000), "/d/123/45/doc-1234567.gif");
    }

    #[test]
    fn times_and_users() {
        let config = SynthConfig {
            requests: 5000,
            users: 7,
            requests_per_sec: 1000,
            ..SynthConfig::default()
        };
        let w = generate(&config).unwrap();
        assert_eq!(w.requests[999].time_ms, 0);
        assert_eq!(w.requests[1000].time_ms, 1000);
        assert_eq!(w.requests[4999].time_ms, 4000);
        assert!(w.requests.iter().all(|r| r.client < 7));
    }

    #[test]
    fn dataset_sizing() {
        assert_eq!(docs_for_dataset(10_000, SizeMix::Fixed(1000), 1).unwrap(), 10);
        assert_eq!(docs_for_dataset(10_001, SizeMix::Fixed(1000), 1).unwrap(), 11);
        assert!(docs_for_dataset(1, SizeMix::Fixed(0), 1).is_err());
        let n = docs_for_dataset(100_000_000, SizeMix::Hacc, 5).unwrap();
        let w = generate(&SynthConfig { docs: n, requests: 0, seed: 5, ..SynthConfig::default() })
            .unwrap();
        assert!(w.dataset_bytes() >= 100_000_000);
        assert!(w.dataset_bytes() - w.targets.last().unwrap().size < 100_000_000);
    }

    #[test]
    fn rejects_bad_configs() {
        for bad in [
            SynthConfig { docs: 0, ..SynthConfig::default() },
            SynthConfig { users: 0, ..SynthConfig::default() },
            SynthConfig { requests_per_sec: 0, ..SynthConfig::default() },
            SynthConfig {
                popularity: Popularity::Zipf { alpha: f64::NAN },
                ..SynthConfig::default()
            },
            SynthConfig { popularity: Popularity::Zipf { alpha: -1.0 }, ..SynthConfig::default() },
        ] {
            assert!(matches!(generate(&bad), Err(TraceError::Config(_))));
        }
    }

    #[test]
    fn size_mix_parses() {
        assert_eq!("hacc".parse(), Ok(SizeMix::Hacc));
        assert_eq!("fixed:8KiB".parse(), Ok(SizeMix::Fixed(8192)));
        assert!("fixed".parse::<SizeMix>().is_err());
        assert!("pareto:1".parse::<SizeMix>().is_err());
        assert_eq!(SizeMix::Fixed(5).to_string().parse(), Ok(SizeMix::Fixed(5)));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]

        #[test]
        fn same_seed_same_workload(seed in any::<u64>(), docs in 1u32..200, alpha in 0.0f64..2.0) {
            let config = SynthConfig {
                docs, requests: 500, users: 13, seed,
                popularity: Popularity::Zipf { alpha }, ..SynthConfig::default()
            };
            let a = generate(&config).unwrap();
            prop_assert_eq!(&a, &generate(&config).unwrap());
            prop_assert!(a.requests.iter().all(|r| r.target < docs && r.client < 13));
            // More requests do not change the documents.
            let more = generate(&SynthConfig { requests: 900, ..config.clone() }).unwrap();
            prop_assert_eq!(&a.targets, &more.targets);
            prop_assert_eq!(&a.requests[..], &more.requests[..500]);
            let other = generate(&SynthConfig { seed: seed ^ 1, ..config }).unwrap();
            prop_assert_ne!(a, other);
        }
    }
}

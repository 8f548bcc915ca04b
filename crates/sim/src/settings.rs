//! `larder sim`'s settings as a user writes them (µs, ms, MiB, policy names, `None` for
//! "the default"), turned into the simulator's configs. The checks and defaults live
//! with the simulator, not the binary, so they are tested here and the binary only wires.

use std::path::Path;

use policy::{PolicyKind, PolicySpec, SECOND};
use trace::{LoadOptions, Popularity, SizeMix, SynthConfig, Workload};

use crate::{Model, SimError};

const MIB: f64 = 1024.0 * 1024.0;

/// `value` (in the flag's unit) times `scale`, rounded; `default` when not given.
fn scaled(flag: &str, value: Option<f64>, scale: f64, default: u64) -> Result<u64, SimError> {
    match value {
        None => Ok(default),
        Some(v) if v.is_finite() && v >= 0.0 && v * scale < u64::MAX as f64 => {
            Ok((v * scale).round() as u64)
        }
        Some(v) => Err(SimError::Flag(format!("--{flag} {v}: expected a finite number >= 0"))),
    }
}

/// A size in MiB as bytes.
fn mib(flag: &str, value: f64) -> Result<u64, SimError> {
    if !(0.0..=1e12).contains(&value) {
        return Err(SimError::Flag(format!("--{flag} {value}: expected a size in MiB >= 0")));
    }
    Ok((value * MIB).round() as u64)
}

/// `--report-delay-ms` as simulated ns.
pub fn report_delay_ns(ms: f64) -> Result<u64, SimError> {
    scaled("report-delay-ms", Some(ms), 1e6, 0)
}

/// A replayed access log (any format [`trace::load_workload`] reads): the workload, its
/// name for titles (the file name) and a line saying what was loaded and skipped.
pub fn replayed_workload(path: &Path) -> Result<(Workload, String, String), SimError> {
    let (workload, report) = trace::load_workload(path, &LoadOptions::default())?;
    let note = format!(
        "{}: {} requests for {} targets ({:.1} MiB), {} lines skipped",
        path.display(),
        report.requests,
        workload.targets.len(),
        workload.dataset_bytes() as f64 / MIB,
        report.skipped_lines
    );
    let name = path.file_name().map_or_else(String::new, |n| n.to_string_lossy().into());
    Ok((workload, name, note))
}

/// A node's costs in the units of the flags; each `None` keeps [`Model::default`]'s.
#[derive(Clone, Debug, Default)]
pub struct ModelUnits {
    pub setup_us: Option<f64>,
    pub teardown_us: Option<f64>,
    pub transmit_us: Option<f64>,
    pub transmit_unit_bytes: Option<u64>,
    pub disk_read_ms: Option<f64>,
    pub disk_block_us: Option<f64>,
    pub disk_block_bytes: Option<u64>,
    pub disk_chunk_ms: Option<f64>,
    pub disk_chunk_bytes: Option<u64>,
    pub front_us: Option<f64>,
    pub miss_cpu_us: Option<f64>,
}

impl ModelUnits {
    /// The model in nanoseconds; a negative or non-finite time is refused by flag name.
    pub fn model(&self) -> Result<Model, SimError> {
        let d = Model::default();
        Ok(Model {
            setup_ns: scaled("setup-us", self.setup_us, 1e3, d.setup_ns)?,
            teardown_ns: scaled("teardown-us", self.teardown_us, 1e3, d.teardown_ns)?,
            transmit_ns: scaled("transmit-us", self.transmit_us, 1e3, d.transmit_ns)?,
            transmit_unit_bytes: self.transmit_unit_bytes.unwrap_or(d.transmit_unit_bytes),
            disk_read_ns: scaled("disk-read-ms", self.disk_read_ms, 1e6, d.disk_read_ns)?,
            disk_block_ns: scaled("disk-block-us", self.disk_block_us, 1e3, d.disk_block_ns)?,
            disk_block_bytes: self.disk_block_bytes.unwrap_or(d.disk_block_bytes),
            disk_chunk_ns: scaled("disk-chunk-ms", self.disk_chunk_ms, 1e6, d.disk_chunk_ns)?,
            disk_chunk_bytes: self.disk_chunk_bytes.unwrap_or(d.disk_chunk_bytes),
            front_ns: scaled("front-us", self.front_us, 1e3, d.front_ns)?,
            miss_cpu_ns: scaled("miss-cpu-us", self.miss_cpu_us, 1e3, d.miss_cpu_ns)?,
        })
    }
}

/// Policy parameters given by the user; each `None` keeps [`PolicySpec::new`]'s.
#[derive(Clone, Debug, Default)]
pub struct PolicyOverrides {
    pub t_low: Option<f64>,
    pub t_high: Option<f64>,
    pub balance_factor: Option<f64>,
    pub table_cap: Option<usize>,
    pub shrink_after_secs: Option<f64>,
    pub hacc_split: Option<f64>,
    pub placement: Option<policy::PlacementMode>,
}

impl PolicyOverrides {
    /// One validated spec per policy of `list` (comma-separated names, or `all`: every
    /// policy but `class`, which needs pools configured).
    pub fn specs(&self, list: &str) -> Result<Vec<PolicySpec>, SimError> {
        let kinds: Vec<PolicyKind> = if list.trim() == "all" {
            PolicyKind::ALL.into_iter().filter(|k| *k != PolicyKind::Class).collect()
        } else {
            list.split(',').map(|p| p.trim().parse()).collect::<Result<_, _>>()?
        };
        kinds.into_iter().map(|kind| self.spec(kind)).collect()
    }

    fn spec(&self, kind: PolicyKind) -> Result<PolicySpec, SimError> {
        let mut spec = PolicySpec::new(kind);
        spec.t_low = self.t_low.unwrap_or(spec.t_low);
        spec.t_high = self.t_high.unwrap_or(spec.t_high);
        spec.balance_factor = self.balance_factor.unwrap_or(spec.balance_factor);
        spec.table_cap = self.table_cap.unwrap_or(spec.table_cap);
        let secs = self.shrink_after_secs;
        spec.shrink_after = scaled("shrink-after-secs", secs, SECOND as f64, spec.shrink_after)?;
        spec.hacc_split = self.hacc_split.unwrap_or(spec.hacc_split);
        spec.placement = self.placement.unwrap_or(spec.placement);
        spec.validate()?;
        Ok(spec)
    }
}

/// A generated workload as the user sizes it: by documents, or by data set in MiB.
#[derive(Clone, Debug)]
pub struct GeneratedWorkload {
    pub popularity: Popularity,
    pub requests: u64,
    pub docs: Option<u32>,
    pub dataset_mb: Option<f64>,
    pub sizes: SizeMix,
    pub seed: u64,
}

impl GeneratedWorkload {
    /// The workload and its name for titles (`zipf(1), 1000 docs, 128 MiB`); without
    /// `docs` or `dataset_mb` the data set is 4 × `mean_cache_bytes`, where locality pays.
    pub fn generate(&self, mean_cache_bytes: f64) -> Result<(Workload, String), SimError> {
        let docs = match self.docs {
            Some(docs) => docs,
            None => {
                let default_mb = 4.0 * mean_cache_bytes / MIB;
                let bytes = mib("dataset-mb", self.dataset_mb.unwrap_or(default_mb))?;
                trace::docs_for_dataset(bytes, self.sizes, self.seed)?
            }
        };
        let config = SynthConfig {
            docs,
            requests: self.requests,
            seed: self.seed,
            sizes: self.sizes,
            popularity: self.popularity,
            ..SynthConfig::default()
        };
        let workload = trace::generate(&config)?;
        let name = match self.popularity {
            Popularity::Uniform => "uniform".to_string(),
            Popularity::Zipf { alpha } => format!("zipf({alpha})"),
        };
        let name = format!("{name}, {docs} docs, {:.0} MiB", workload.dataset_bytes() as f64 / MIB);
        Ok((workload, name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_units_scale_and_refuse_negatives() {
        let model =
            ModelUnits { setup_us: Some(1.5), disk_read_ms: Some(2.0), ..Default::default() }
                .model()
                .unwrap();
        assert_eq!((model.setup_ns, model.disk_read_ns), (1500, 2_000_000));
        assert_eq!(model.teardown_ns, Model::default().teardown_ns);
        let err = ModelUnits { miss_cpu_us: Some(-1.0), ..Default::default() }.model().unwrap_err();
        assert!(err.to_string().contains("--miss-cpu-us -1: expected a finite number >= 0"));
        assert_eq!(report_delay_ns(200.0).unwrap(), 200_000_000);
        assert!(report_delay_ns(f64::NAN).is_err());
    }

    #[test]
    fn policy_lists_and_all() {
        let overrides = PolicyOverrides { t_low: Some(5.0), ..Default::default() };
        let specs = overrides.specs("lard, wrr").unwrap();
        assert_eq!(specs.len(), 2);
        assert_eq!(specs[0].t_low, 5.0);
        let all = PolicyOverrides::default().specs("all").unwrap();
        assert!(!all.is_empty() && all.iter().all(|s| s.kind != PolicyKind::Class));
        assert!(PolicyOverrides::default().specs("nope").is_err());
    }

    #[test]
    fn generated_workload_is_named_and_sized() {
        let gen = GeneratedWorkload {
            popularity: Popularity::Zipf { alpha: 1.0 },
            requests: 100,
            docs: Some(10),
            dataset_mb: None,
            sizes: SizeMix::Fixed(1024),
            seed: 1,
        };
        let (workload, name) = gen.generate(MIB).unwrap();
        assert_eq!(workload.requests.len(), 100);
        assert!(name.starts_with("zipf(1), 10 docs"), "{name}");
        let bad = GeneratedWorkload { docs: None, dataset_mb: Some(-1.0), ..gen };
        assert!(bad.generate(MIB).is_err());
    }
}

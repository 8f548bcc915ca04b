//! How big a synthetic document store is, as a user says it: one file, a number of
//! documents, or a data set in MiB. Kept next to the generator so the sizing rules (and
//! which one wins) are one piece of code for every command that generates.

use crate::{docs_for_dataset, SizeMix, SynthConfig, TraceError};

impl SynthConfig {
    /// This config with its store sized by the first given of: a single file of
    /// `single_file` bytes, `docs` documents, or about `dataset_mb` MiB of documents
    /// drawn with the config's size mix and seed; none keeps the config's `docs`.
    pub fn sized(
        self,
        single_file: Option<u64>,
        docs: Option<u32>,
        dataset_mb: Option<f64>,
    ) -> Result<SynthConfig, TraceError> {
        if let Some(size) = single_file {
            return Ok(SynthConfig { docs: 1, sizes: SizeMix::Fixed(size), ..self });
        }
        if let Some(docs) = docs {
            return Ok(SynthConfig { docs, ..self });
        }
        let Some(mb) = dataset_mb else { return Ok(self) };
        if !(mb.is_finite() && mb > 0.0) {
            return Err(TraceError::BadDatasetSize);
        }
        let docs = docs_for_dataset((mb * 1_048_576.0) as u64, self.sizes, self.seed)?;
        Ok(SynthConfig { docs, ..self })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_given_size_wins() {
        let base = SynthConfig::default();
        let single = base.clone().sized(Some(8192), Some(5), None).unwrap();
        assert_eq!((single.docs, single.sizes), (1, SizeMix::Fixed(8192)));
        assert_eq!(base.clone().sized(None, Some(5), Some(1.0)).unwrap().docs, 5);
        assert_eq!(base.clone().sized(None, None, None).unwrap(), base);
        let fixed = SynthConfig { sizes: SizeMix::Fixed(1 << 20), ..base.clone() };
        assert_eq!(fixed.sized(None, None, Some(4.0)).unwrap().docs, 4);
        assert!(base.sized(None, None, Some(-1.0)).is_err());
    }
}

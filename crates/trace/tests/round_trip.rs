//! A generated workload written as a log loads back as the same workload.

use proptest::prelude::*;
use trace::{
    generate, load_reader, load_workload, write_log, write_log_file, LoadOptions, Popularity,
    SizeMix, SynthConfig,
};

fn round_trip(config: &SynthConfig, base_epoch_ms: i64) {
    let w = generate(config).unwrap();
    let mut log = Vec::new();
    write_log(&w, &mut log, base_epoch_ms).unwrap();
    let (back, report) = load_reader(&log[..], &LoadOptions::default(), "memory").unwrap();
    assert_eq!(report.skipped_lines, 0);
    assert_eq!(report.requests, config.requests);
    assert_eq!(back, w.canonical());
}

#[test]
fn default_mix_round_trips() {
    round_trip(&SynthConfig { requests: 20_000, docs: 3_000, ..SynthConfig::default() }, 0);
}

#[test]
fn gzip_file_round_trips() {
    let config = SynthConfig { requests: 2_000, docs: 50, ..SynthConfig::default() };
    let w = generate(&config).unwrap();
    let dir = std::env::temp_dir().join(format!("trace-roundtrip-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (gz, plain) = (dir.join("gen.log.gz"), dir.join("gen.log"));
    write_log_file(&w, &gz, 809_654_400_000).unwrap();
    write_log_file(&w, &plain, 809_654_400_000).unwrap();
    let gz_bytes = std::fs::read(&gz).unwrap();
    let (from_gz, _) = load_workload(&gz, &LoadOptions::default()).unwrap();
    let (from_plain, _) = load_workload(&plain, &LoadOptions::default()).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(&gz_bytes[..2], &[0x1f, 0x8b]);
    assert_eq!(from_gz, w.canonical());
    assert_eq!(from_plain, w.canonical());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn any_small_config_round_trips(
        seed in any::<u64>(),
        docs in 1u32..300,
        requests in 0u64..400,
        users in 1u32..50,
        rate in 1u32..100,
        zipf in proptest::option::of(0.0f64..2.0),
        fixed in proptest::option::of(0u64..100_000),
        base in 0i64..4_000_000_000_000,
    ) {
        let config = SynthConfig {
            docs, requests, users, seed, requests_per_sec: rate,
            sizes: fixed.map_or(SizeMix::Hacc, SizeMix::Fixed),
            popularity: zipf.map_or(Popularity::Uniform, |alpha| Popularity::Zipf { alpha }),
            popular_first: false,
        };
        round_trip(&config, base / 1000 * 1000);
    }
}

//! Generator speed: `cargo bench -p trace --bench synth [-- REQUESTS]` (default 10 M).
//!
//! A timing claim lives here, not in a test. Prints requests per second for a Zipf and a
//! uniform stream over the HACC size mix.

use std::time::Instant;
use trace::{generate, Popularity, SynthConfig};

fn main() {
    let requests =
        std::env::args().skip(1).find_map(|a| a.parse::<u64>().ok()).unwrap_or(10_000_000);
    for popularity in [Popularity::Zipf { alpha: 1.0 }, Popularity::Uniform] {
        let config = SynthConfig {
            docs: 100_000,
            requests,
            users: 10_000,
            popularity,
            ..Default::default()
        };
        let start = Instant::now();
        let workload = generate(&config).expect("valid config");
        let secs = start.elapsed().as_secs_f64();
        println!(
            "{popularity:?}: {} requests over {} docs in {secs:.2} s ({:.1} M req/s)",
            workload.requests.len(),
            workload.targets.len(),
            requests as f64 / secs / 1e6
        );
    }
}

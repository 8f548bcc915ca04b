//! The same workload against several targets in turn, alternating (A B A B ...) so that
//! drift in the machine's state hits every target alike; figures are medians over rounds,
//! shown beside their ratio to the first target.

use std::fmt::Write;

use crate::base_url::BaseUrl;
use crate::config::Config;
use crate::error::BenchError;
use crate::report::{EpochReport, Report};
use crate::run::run;

/// Run `rounds` rounds over `targets`; `config_for` builds each target's run. Returns the
/// reports per target, in round order.
pub async fn run_alternating<F>(
    targets: &[BaseUrl],
    rounds: u32,
    mut config_for: F,
    mut on_epoch: impl FnMut(&EpochReport),
) -> Result<Vec<Vec<Report>>, BenchError>
where
    F: FnMut(&BaseUrl) -> Result<Config, BenchError>,
{
    if targets.is_empty() || rounds == 0 {
        return Err(BenchError::Config("compare needs at least one target and one round".into()));
    }
    let configs = targets.iter().map(&mut config_for).collect::<Result<Vec<_>, _>>()?;
    let mut reports: Vec<Vec<Report>> = vec![Vec::new(); targets.len()];
    for _ in 0..rounds {
        for (config, out) in configs.iter().zip(reports.iter_mut()) {
            out.push(run(config, &mut on_epoch).await?);
        }
    }
    Ok(reports)
}

/// The median of `values` (mean of the middle two for an even count; 0 for none).
pub fn median(values: &[f64]) -> f64 {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// A table of each figure's median per target and its ratio to the first target, then
/// every run's requests per second.
pub fn render_comparison(reports: &[Vec<Report>]) -> String {
    type Figure = fn(&Report) -> f64;
    let figures: [(&str, Figure); 8] = [
        ("req/s", |r| r.total.throughput_rps),
        ("Mbit/s", |r| r.total.throughput_mbps),
        ("p50 ms", |r| r.total.latency_ms.p50),
        ("p90 ms", |r| r.total.latency_ms.p90),
        ("p99 ms", |r| r.total.latency_ms.p99),
        ("p99.9 ms", |r| r.total.latency_ms.p999),
        ("max ms", |r| r.total.latency_ms.max),
        ("errors", |r| r.total.errors.total as f64),
    ];
    let mut out = String::new();
    for (i, runs) in reports.iter().enumerate() {
        let name = runs.first().map_or("?", |r| r.target.as_str());
        let _ = writeln!(out, "  [{}] {name}", label(i));
    }
    let _ = write!(out, "  {:<10}", "median");
    for i in 0..reports.len() {
        let _ = write!(out, " {:>12}", label(i));
        if i > 0 {
            let _ = write!(out, " {:>8}", format!("{}/A", label(i)));
        }
    }
    out.push('\n');
    for (name, pick) in figures {
        let medians: Vec<f64> =
            reports.iter().map(|runs| median(&runs.iter().map(pick).collect::<Vec<_>>())).collect();
        let _ = write!(out, "  {name:<10}");
        for (i, m) in medians.iter().enumerate() {
            let _ = write!(out, " {m:>12.3}");
            if i > 0 {
                let ratio = if medians[0] != 0.0 { m / medians[0] } else { f64::NAN };
                let _ = write!(out, " {ratio:>8.3}");
            }
        }
        out.push('\n');
    }
    for (i, runs) in reports.iter().enumerate() {
        let each: Vec<String> =
            runs.iter().map(|r| format!("{:.1}", r.total.throughput_rps)).collect();
        let _ = writeln!(out, "  [{}] req/s per run: {}", label(i), each.join(" "));
    }
    out
}

/// `A`, `B`, ... then `T27`-style names past Z.
fn label(i: usize) -> String {
    match u8::try_from(i) {
        Ok(n) if n < 26 => char::from(b'A' + n).to_string(),
        _ => format!("T{}", i + 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(&[]), 0.0);
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(&[f64::NAN, 1.0]), 1.0);
    }

    #[test]
    fn labels() {
        assert_eq!(label(0), "A");
        assert_eq!(label(25), "Z");
        assert_eq!(label(26), "T27");
    }
}

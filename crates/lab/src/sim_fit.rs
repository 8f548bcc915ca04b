//! Simulator vs reality: does the simulator, with a cost model fitted to this machine
//! from an experiment's own rows, predict each policy's aggregate hit ratio and its
//! throughput as a multiple of wrr's, within 20%?
//!
//! The same shape as the experiment: its caches (LRU), the same generated request stream,
//! targets keyed as larder route keys their URLs (tree depth 3), as many requests in
//! flight as it had users. The fit, per workload and round, from the rows alone:
//! - Cores: every process shares the machine's `cpus`; the cores the experiment actually
//!   got, C, is the median of throughput × (router + nodes + client CPU per request), so
//!   every CPU cost is scaled by cpus / C on `cpus` shared cores.
//! - Nodes: CPU per request = hit cost + (1 − hit ratio) × miss cost, a least-squares line
//!   through the round's rows. The hit cost runs on the node's event loop (half at
//!   set-up, half at send); the miss cost on its one helper thread.
//! - Front: the router's and load generator's CPU per request (median) runs on the
//!   shared cores before a request reaches its node.
//! - Disk (static workloads): an O_DIRECT read takes `disk_us`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use policy::{PolicyKind, PolicySpec};
use sim::{CacheSizes, Model, SimConfig, Simulator};
use trace::{Popularity, SizeMix, SynthConfig};

use crate::error::{Context, Result};
use crate::report::Report;
use crate::results::Row;
use crate::run_shape::RunShape;
use crate::workload::{view_url, STREAM_REQUESTS};

/// One policy in one round: measured and simulated (hit ratio, throughput × wrr).
type Figures = [(f64, f64); 2];

/// A figure is within the tolerance when |simulated / measured − 1| ≤ it.
const TOLERANCE: f64 = 0.2;

/// The experiment's shape, as it was run (its flags).
#[derive(Clone, Debug)]
pub struct Shape {
    /// CPUs of the machine (an experiment's shape.json names them).
    pub cpus: u32,
    pub cache_mb: Vec<u64>,
    pub users: u32,
    /// The data set [default: 3/4 of all caches, as the experiment's].
    pub dataset_mb: Option<f64>,
    pub alpha: f64,
    pub seed: u64,
    pub file_size: u64,
    pub view_size: u64,
    /// Microseconds of one O_DIRECT read of a static file.
    pub disk_us: f64,
}

impl Shape {
    fn dataset_mb(&self) -> f64 {
        self.dataset_mb.unwrap_or(self.cache_mb.iter().sum::<u64>() as f64 * 3.0 / 4.0)
    }
}

/// One round's cost model, in µs on real cores.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct CostModel {
    pub hit_us: f64,
    pub miss_us: f64,
    pub front_us: f64,
    pub cores: f64,
}

/// Least squares y = a + b·x; None when the x values do not spread.
pub(crate) fn fit_line(points: &[(f64, f64)]) -> Option<(f64, f64)> {
    let n = points.len() as f64;
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    if sxx.is_nan() || sxx < 1e-6 {
        return None;
    }
    let b = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum::<f64>() / sxx;
    Some((my - b * mx, b))
}

/// The median (the mean of the middle two for an even count; NaN for none).
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// The round's cost model from its measured rows.
pub(crate) fn fit(rows: &[&Row]) -> Option<CostModel> {
    let points: Vec<(f64, f64)> =
        rows.iter().map(|r| (1.0 - r.hit_ratio, r.cpu_us_nodes)).collect();
    let (hit, miss) = fit_line(&points)?;
    let cpu = |r: &&Row| r.cpu_us_front + r.cpu_us_nodes + r.cpu_us_client;
    Some(CostModel {
        hit_us: hit.max(1.0),
        miss_us: miss.max(0.0),
        front_us: median(rows.iter().map(|r| r.cpu_us_front + r.cpu_us_client).collect()),
        cores: median(rows.iter().map(|r| r.throughput_rps * cpu(r) / 1e6).collect()),
    })
}

fn within(sim: f64, measured: f64) -> bool {
    measured > 0.0 && (sim / measured - 1.0).abs() <= TOLERANCE
}

/// Each policy's simulated (hit ratio, throughput) on `workload` with `model`.
fn simulate(
    workload: &str,
    policies: &[PolicyKind],
    model: &CostModel,
    shape: &Shape,
) -> Result<BTreeMap<String, (f64, f64)>> {
    let dynamic = workload.starts_with("dynamic");
    let scale = f64::from(shape.cpus) / model.cores;
    let ns = |us: f64| (us * scale * 1e3).round() as u64;
    let size = if dynamic { shape.view_size } else { shape.file_size };
    let bytes = (shape.dataset_mb() * f64::from(1 << 20)).round() as u64;
    let docs = trace::docs_for_dataset(bytes, SizeMix::Fixed(size), shape.seed)?;
    let popularity = if workload.ends_with("zipf") {
        Popularity::Zipf { alpha: shape.alpha }
    } else {
        Popularity::Uniform
    };
    let config = SynthConfig {
        docs,
        requests: STREAM_REQUESTS,
        seed: shape.seed,
        sizes: SizeMix::Fixed(size),
        popularity,
        ..SynthConfig::default()
    };
    let w = trace::generate(&config)?;
    let urls =
        if dynamic { (0..docs).map(|v| view_url(v, 0)).collect() } else { sim::served_urls(&w)? };
    let mut simulator = Simulator::with_targets(&w, sim::route_targets(&urls, None)?)?;
    let cost = Model {
        setup_ns: ns(model.hit_us / 2.0),
        teardown_ns: ns(model.hit_us / 2.0),
        transmit_ns: 0,
        miss_cpu_ns: ns(model.miss_us),
        front_ns: ns(model.front_us),
        disk_read_ns: if dynamic { 0 } else { (shape.disk_us * 1e3).round() as u64 },
        disk_block_ns: 0,
        disk_chunk_ns: 0,
        ..Model::default()
    };
    let caches = CacheSizes::PerNode(shape.cache_mb.iter().map(|m| m << 20).collect());
    let base = SimConfig {
        cache_kind: cache::Kind::Lru,
        model: cost,
        max_in_flight: Some(u64::from(shape.users)),
        shared_cpus: Some(shape.cpus),
        ..SimConfig::with_caches(shape.cache_mb.len(), caches, PolicySpec::new(PolicyKind::Rr))
    };
    let specs: Vec<PolicySpec> = policies.iter().map(|&p| PolicySpec::new(p)).collect();
    let results = sim::sweep(&mut simulator, &base, &[shape.cache_mb.len()], &specs, |_, _| {})?;
    Ok(results.into_iter().map(|r| (r.policy, (r.hit_ratio, r.throughput_rps))).collect())
}

/// Fits and simulates every round of every generated workload in `rows` (anchors are
/// not simulated) and returns the report (Markdown); `warn` hears of the groups and
/// rounds it cannot fit.
pub(crate) fn report(
    rows: &[Row],
    shape: &Shape,
    source: &str,
    warn: &dyn Report,
) -> Result<String> {
    let caches = shape.cache_mb.iter().map(u64::to_string).collect::<Vec<_>>().join("/");
    let mut out =
        format!(
        "# Simulator vs reality: {source}\n\n`larder sim` fitted to the measured rows: {} shared \
         CPUs, caches {caches} MiB (LRU), {} requests in flight, data set {} MiB, Zipf alpha {}, \
         seed {}, {STREAM_REQUESTS} requests; static disk read {} µs. A figure is within {:.0}% \
         when |simulated / measured − 1| ≤ {TOLERANCE}.\n\n",
        shape.cpus, shape.users, shape.dataset_mb(), shape.alpha, shape.seed, shape.disk_us,
        TOLERANCE * 100.0
    );
    let (mut held, mut verdicts) = (0, 0);
    for ((workload, connections), systems) in crate::results::groups(rows) {
        if !["dynamic-uniform", "dynamic-zipf", "static-uniform", "static-zipf"]
            .contains(&&*workload)
        {
            warn.warn(&format!(
                "skipping {workload}: not a generated workload the simulator can rebuild"
            ));
            continue;
        }
        let larder: Vec<&Row> = systems
            .iter()
            .filter(|(s, _)| s.parse::<PolicyKind>().is_ok())
            .flat_map(|(_, runs)| runs.iter().copied())
            .collect();
        let mut rounds: Vec<u32> = larder.iter().map(|r| r.round).collect();
        rounds.sort_unstable();
        rounds.dedup();
        let mut fits = Vec::new();
        // Per policy: (measured, simulated) (hit ratio, × wrr) per round.
        let mut figures: Vec<(String, Vec<Figures>)> = Vec::new();
        for round in rounds {
            let rr: Vec<&Row> = larder.iter().copied().filter(|r| r.round == round).collect();
            let wrr = rr.iter().find(|r| r.system == "wrr");
            let (Some(model), Some(wrr)) = (fit(&rr), wrr) else {
                warn.warn(&format!(
                    "skipping {workload} round {}: needs wrr and rows of different hit ratios",
                    round + 1
                ));
                continue;
            };
            let policies: Vec<PolicyKind> =
                rr.iter().filter_map(|r| r.system.parse().ok()).collect();
            let sims = simulate(&workload, &policies, &model, shape)?;
            let sim_wrr = sims.get("wrr").map_or(f64::NAN, |s| s.1);
            for r in &rr {
                let s = sims.get(&r.system).copied().unwrap_or((f64::NAN, f64::NAN));
                let pair =
                    [(r.hit_ratio, r.throughput_rps / wrr.throughput_rps), (s.0, s.1 / sim_wrr)];
                match figures.iter_mut().find(|(p, _)| *p == r.system) {
                    Some((_, v)) => v.push(pair),
                    None => figures.push((r.system.clone(), vec![pair])),
                }
            }
            fits.push((round, model));
        }
        if fits.is_empty() {
            continue;
        }
        let _ = writeln!(out, "## {workload}, {connections}\n");
        for (round, m) in &fits {
            let _ = writeln!(
                out,
                "- fit, round {}: node CPU per request {:.0} µs + (1 − hit ratio) × {:.0} µs; router + \
                 load generator {:.0} µs per request; the experiment got {:.2} of {} cores (CPU costs × \
                 {:.2} in the simulator)",
                round + 1, m.hit_us, m.miss_us, m.front_us, m.cores, shape.cpus,
                f64::from(shape.cpus) / m.cores
            );
        }
        out.push_str("\n| policy | hit measured | hit simulated | within 20% | × wrr measured | × wrr simulated | within 20% | rounds: measured · simulated × wrr |\n|---|---:|---:|---|---:|---:|---|---|\n");
        for (policy, runs) in &figures {
            let med = |side: usize, f: fn(&(f64, f64)) -> f64| {
                median(runs.iter().map(|p| f(&p[side])).filter(|x| x.is_finite()).collect())
            };
            let (mh, mt, sh, st) =
                (med(0, |p| p.0), med(0, |p| p.1), med(1, |p| p.0), med(1, |p| p.1));
            let (ok_h, ok_t) = (within(sh, mh), within(st, mt));
            let yes = |ok: bool| if ok { "yes" } else { "NO" };
            let per_round: Vec<String> =
                runs.iter().map(|p| format!("{:.2} · {:.2}", p[0].1, p[1].1)).collect();
            let _ = writeln!(
                out,
                "| {policy} | {mh:.3} | {sh:.3} | {} | {mt:.2} | {st:.2} | {} | {} |",
                yes(ok_h),
                if policy == "wrr" { "–" } else { yes(ok_t) },
                per_round.join(" / ")
            );
            if policy != "wrr" {
                verdicts += 1;
                held += usize::from(ok_t);
            }
            verdicts += 1;
            held += usize::from(ok_h);
        }
        out.push('\n');
    }
    let _ = writeln!(out, "{held} of {verdicts} figures within {:.0}%.", TOLERANCE * 100.0);
    Ok(out)
}

/// Reads `dir`'s rows.json and shape.json (the machine's CPUs, the caches and the users,
/// which override `shape`'s), fits, simulates, hands the report to `report` as a table and
/// writes it to `dir/sim-vs-reality.md`.
pub fn run(dir: &Path, shape: &Shape, report: &dyn Report) -> Result<()> {
    let rows_file = dir.join("rows.json");
    let text = std::fs::read_to_string(&rows_file).with_context(|| {
        format!("reading {}: run larder bench experiment first", rows_file.display())
    })?;
    let rows: Vec<Row> = serde_json::from_str(&text).context("reading rows.json")?;
    let run = RunShape::read(dir)?;
    let shape = Shape { cpus: run.cpus, cache_mb: run.cache_mb, users: run.users, ..shape.clone() };
    let text = self::report(&rows, &shape, &dir.display().to_string(), report)?;
    report.table(&text);
    let file = dir.join("sim-vs-reality.md");
    std::fs::write(&file, text).with_context(|| format!("writing {}", file.display()))?;
    report.note(&format!("wrote {}", file.display()));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(system: &str, hit: f64, nodes_us: f64, rps: f64) -> Row {
        serde_json::from_value(serde_json::json!({
            "workload": "dynamic-uniform", "connections": "keep-alive", "system": system,
            "round": 0, "requests": 100, "errors": 0, "throughput_rps": rps, "mean_ms": 1.0,
            "p99_ms": 2.0, "hit_ratio": hit, "disk_bytes_per_request": 0.0,
            "cpu_us_front": 30.0, "cpu_us_nodes": nodes_us, "cpu_us_client": 10.0,
            "node_requests": [], "users_sustained": null, "static_mean_ms": null,
            "static_p99_ms": null, "dynamic_mean_ms": null
        }))
        .unwrap()
    }

    #[test]
    fn the_fit_recovers_a_known_cost_model() {
        // Node CPU per request = 100 µs + (1 − hit) × 2000 µs; 40 µs front and client.
        let rows = [
            row("wrr", 0.5, 1100.0, 1000.0),
            row("lard", 0.9, 300.0, 2000.0),
            row("hash", 0.7, 700.0, 1500.0),
        ];
        let refs: Vec<&Row> = rows.iter().collect();
        let m = fit(&refs).unwrap();
        assert!((m.hit_us - 100.0).abs() < 1e-6 && (m.miss_us - 2000.0).abs() < 1e-6, "{m:?}");
        assert_eq!(m.front_us, 40.0);
        // Cores: 1000 × 1140 µs = 1.14, 2000 × 340 µs = 0.68, 1500 × 740 µs = 1.11.
        assert!((m.cores - 1.11).abs() < 1e-9, "{m:?}");
        // One hit ratio pins nothing.
        assert_eq!(fit(&[&rows[0], &rows[0]]), None);
    }

    #[test]
    fn medians_of_even_counts_average_the_middle() {
        assert_eq!(median(vec![3.0, 1.0, 2.0, 10.0]), 2.5);
    }
}

//! Figures over time of one churn run (a flash crowd, a node added, restarted or removed):
//! per second the throughput, p99 and errors the load generator saw, the aggregate hit
//! ratio and each node's requests from the nodes' load reports; what the must-hold checks
//! ([`crate::claims::churn`]) read from them; and how they are written (JSON, CSV, SVG
//! line charts, the table with the claims).

use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::claims::Claim;
use crate::error::{Context, Result};

/// One second of a run.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Second {
    /// Seconds since the run started, at the end of this second.
    pub t: f64,
    pub rps: f64,
    pub p99_ms: f64,
    pub errors: u64,
    /// Hits over lookups of all nodes in this second (NaN: no lookup).
    pub hit_ratio: f64,
    /// Requests per second each node answered (n1 first; 0 while it is out).
    pub node_rps: Vec<f64>,
}

/// One system through one scenario in one round.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Timeline {
    pub scenario: String,
    pub system: String,
    pub round: u32,
    /// When the crowd began or the (first) membership event happened, in seconds.
    pub event_at: f64,
    /// The node the membership event changed (0-based), if any.
    pub node: Option<usize>,
    /// That node's share of the cluster's caches after the event: its fair share (0 when
    /// it left).
    pub fair_share: f64,
    pub seconds: Vec<Second>,
}

/// The seconds before the event used as "before".
const BEFORE_SECONDS: usize = 10;
/// Within this factor of the hit ratio before, the cluster has recovered.
pub const RECOVERED: f64 = 0.95;

/// [`RECOVERED`] as the words of the table and the claims: "within 5%".
pub(crate) fn recovered_within() -> String {
    format!("within {:.0}%", (1.0 - RECOVERED) * 100.0)
}

impl Timeline {
    fn before(&self) -> &[Second] {
        let at = self.event_at as usize;
        &self.seconds
            [at.saturating_sub(BEFORE_SECONDS).min(self.seconds.len())..at.min(self.seconds.len())]
    }

    fn after(&self) -> &[Second] {
        &self.seconds[(self.event_at as usize).min(self.seconds.len())..]
    }

    /// Mean hit ratio of the seconds before the event.
    pub fn hit_before(&self) -> f64 {
        mean(self.before().iter().map(|s| s.hit_ratio))
    }

    /// Seconds after the event from which the hit ratio stays within [`RECOVERED`] of the
    /// ratio before until the end (0: it never fell below), or None if it is below at the end.
    pub fn recovery_s(&self) -> Option<f64> {
        let floor = RECOVERED * self.hit_before();
        let after = self.after();
        match after.iter().rposition(|s| s.hit_ratio < floor || !s.hit_ratio.is_finite()) {
            None => Some(0.0),
            Some(i) if i + 1 < after.len() => Some((i + 1) as f64),
            Some(_) => None,
        }
    }

    /// The changed node's share of the requests in each second after the event.
    fn node_shares(&self) -> Vec<f64> {
        let Some(n) = self.node else { return Vec::new() };
        self.after()
            .iter()
            .map(|s| {
                let all: f64 = s.node_rps.iter().sum();
                if all > 0.0 {
                    s.node_rps.get(n).copied().unwrap_or(0.0) / all
                } else {
                    0.0
                }
            })
            .collect()
    }

    /// Seconds after the event until the changed node first serves at least half its fair
    /// share in a second (None: never during the run).
    pub fn half_share_s(&self) -> Option<f64> {
        let half = self.fair_share / 2.0;
        self.node_shares().iter().position(|&s| s >= half).map(|i| (i + 1) as f64)
    }

    /// The changed node's mean share over the last 10 seconds of the run.
    pub fn final_share(&self) -> f64 {
        let shares = self.node_shares();
        mean(shares[shares.len().saturating_sub(BEFORE_SECONDS)..].iter().copied())
    }

    pub fn errors(&self) -> u64 {
        self.seconds.iter().map(|s| s.errors).sum()
    }

    /// Median of the per-second p99 over the seconds from the event on (the crowd).
    pub fn p99_after_ms(&self) -> f64 {
        let mut v: Vec<f64> =
            self.after().iter().map(|s| s.p99_ms).filter(|x| x.is_finite()).collect();
        v.sort_by(f64::total_cmp);
        v.get(v.len().saturating_sub(1) / 2).copied().unwrap_or(f64::NAN)
    }

    /// Mean hit ratio from the event on, weighted by each second's requests.
    pub fn hit_after(&self) -> f64 {
        let (mut hits, mut all) = (0.0, 0.0);
        for s in self.after().iter().filter(|s| s.hit_ratio.is_finite()) {
            let n: f64 = s.node_rps.iter().sum();
            hits += s.hit_ratio * n;
            all += n;
        }
        if all > 0.0 {
            hits / all
        } else {
            f64::NAN
        }
    }

    pub fn rps_after(&self) -> f64 {
        mean(self.after().iter().map(|s| s.rps))
    }
}

fn mean(v: impl Iterator<Item = f64>) -> f64 {
    let (mut sum, mut n) = (0.0, 0);
    for x in v.filter(|x| x.is_finite()) {
        sum += x;
        n += 1;
    }
    if n == 0 {
        f64::NAN
    } else {
        sum / f64::from(n)
    }
}

/// One scenario's timelines by system, in first-seen order.
type Systems<'a> = crate::grouping::BySystem<'a, Timeline>;

/// Timelines by scenario, then system, in first-seen order.
pub(crate) fn by_scenario(runs: &[Timeline]) -> Vec<(&str, Systems<'_>)> {
    crate::grouping::by_key_then_system(runs, |t| t.scenario.as_str(), |t| t.system.as_str())
}

/// Median over rounds of `f`, None-safe: a round without a value counts as infinite, so a
/// median that is infinite says at least half the rounds never got there.
pub(crate) fn median_of(runs: &[&Timeline], f: impl Fn(&Timeline) -> Option<f64>) -> f64 {
    let mut v: Vec<f64> = runs.iter().map(|r| f(r).unwrap_or(f64::INFINITY)).collect();
    v.sort_by(f64::total_cmp);
    v.get(v.len().saturating_sub(1) / 2).copied().unwrap_or(f64::NAN)
}

pub(crate) fn seconds(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.0} s")
    } else {
        "never".into()
    }
}

/// The table of every scenario and system (medians over rounds).
pub fn render_table(runs: &[Timeline]) -> String {
    let mut out = String::new();
    for (scenario, systems) in by_scenario(runs) {
        let rounds = systems.iter().map(|(_, r)| r.len()).max().unwrap_or(0);
        let _ = writeln!(
            out,
            "\n### {scenario} (median of {rounds} round{})\n",
            if rounds == 1 { "" } else { "s" }
        );
        let _ = writeln!(
            out,
            "| system | req/s after | p99 ms after | hit before | hit after | hit back {} | node at half its fair share | node's share at the end (fair) | errors |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|",
            recovered_within()
        );
        for (system, runs) in systems {
            let m = |f: &dyn Fn(&Timeline) -> f64| {
                let refs: Vec<&Timeline> = runs.clone();
                median_of(&refs, |t| Some(f(t)))
            };
            let node = runs[0].node.is_some() && runs[0].fair_share > 0.0;
            let _ = writeln!(
                out,
                "| {system} | {:.0} | {:.2} | {:.3} | {:.3} | {} | {} | {} | {} |",
                m(&|t| t.rps_after()),
                m(&|t| t.p99_after_ms()),
                m(&|t| t.hit_before()),
                m(&|t| t.hit_after()),
                seconds(median_of(&runs, |t| t.recovery_s())),
                if node { seconds(median_of(&runs, |t| t.half_share_s())) } else { "–".into() },
                if node {
                    format!("{:.3} ({:.3})", m(&|t| t.final_share()), runs[0].fair_share)
                } else {
                    "–".into()
                },
                runs.iter().map(|t| t.errors()).sum::<u64>(),
            );
        }
    }
    out
}

/// Writes `timeline.json`, `timeline.csv`, `table.md` (with the claims) and, per
/// scenario, line charts of throughput, hit ratio, p99 and the changed node's share
/// (the first round of every system).
pub fn write(dir: &Path, runs: &[Timeline], header: &str, claims: &[Claim]) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))
    };
    write("timeline.json", &serde_json::to_string_pretty(runs).context("encoding timelines")?)?;
    let mut csv = String::from("scenario,system,round,t,rps,p99_ms,errors,hit_ratio,node_rps\n");
    for r in runs {
        for s in &r.seconds {
            let nodes: Vec<String> = s.node_rps.iter().map(|x| format!("{x:.0}")).collect();
            let _ = writeln!(
                csv,
                "{},{},{},{},{:.1},{:.3},{},{:.4},{}",
                r.scenario,
                r.system,
                r.round + 1,
                s.t,
                s.rps,
                s.p99_ms,
                s.errors,
                s.hit_ratio,
                nodes.join(";")
            );
        }
    }
    write("timeline.csv", &csv)?;
    let claims_text: String = claims.iter().map(|c| format!("- {c}\n")).collect();
    write("table.md", &format!("{header}\n{}\nClaims:\n\n{claims_text}", render_table(runs)))?;
    for (scenario, systems) in by_scenario(runs) {
        let firsts: Vec<(&str, &Timeline)> = systems.iter().map(|(s, r)| (*s, r[0])).collect();
        let chart = |title: &str, y: &str, f: &dyn Fn(&Timeline, &Second) -> f64| {
            let series: Vec<chart::Series<'_>> = firsts
                .iter()
                .enumerate()
                .map(|(i, (name, t))| chart::Series {
                    name,
                    color: chart::PALETTE[i % chart::PALETTE.len()],
                    points: t.seconds.iter().map(|s| (s.t, f(t, s))).collect(),
                })
                .collect();
            chart::line_chart(&format!("{title}: {scenario}"), "seconds", y, &series, None)
        };
        write(
            &format!("churn-{scenario}-throughput.svg"),
            &chart("Requests per second", "req/s", &|_, s| s.rps),
        )?;
        write(
            &format!("churn-{scenario}-hit-ratio.svg"),
            &chart("Aggregate hit ratio", "hit ratio", &|_, s| s.hit_ratio),
        )?;
        write(&format!("churn-{scenario}-p99.svg"), &chart("p99 latency", "ms", &|_, s| s.p99_ms))?;
        if firsts.iter().any(|(_, t)| t.node.is_some()) {
            let share = |t: &Timeline, s: &Second| {
                let all: f64 = s.node_rps.iter().sum();
                match t.node {
                    Some(n) if all > 0.0 => s.node_rps.get(n).copied().unwrap_or(0.0) / all,
                    _ => f64::NAN,
                }
            };
            write(
                &format!("churn-{scenario}-node-share.svg"),
                &chart("The changed node's share of requests", "share", &share),
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn second(t: f64, hit: f64, nodes: [f64; 4]) -> Second {
        Second {
            t,
            rps: nodes.iter().sum(),
            p99_ms: t,
            errors: 0,
            hit_ratio: hit,
            node_rps: nodes.to_vec(),
        }
    }

    #[test]
    fn recovery_and_share_are_read_from_the_seconds() {
        let mut seconds: Vec<Second> =
            (1..=10).map(|t| second(t as f64, 0.9, [100.0, 100.0, 100.0, 0.0])).collect();
        // The node joins at 10 s: the hit ratio dips, the node's share grows.
        let after =
            [(0.5, 0.0), (0.6, 20.0), (0.8, 40.0), (0.87, 60.0), (0.9, 80.0), (0.89, 100.0)];
        for (i, (hit, n4)) in after.into_iter().enumerate() {
            seconds.push(second((11 + i) as f64, hit, [100.0, 100.0, 100.0, n4]));
        }
        let t = Timeline {
            scenario: "add".into(),
            system: "lard-r".into(),
            round: 0,
            event_at: 10.0,
            node: Some(3),
            fair_share: 0.25,
            seconds,
        };
        assert!((t.hit_before() - 0.9).abs() < 1e-9);
        // Below 0.855 in the first four seconds after the event, then within.
        assert_eq!(t.recovery_s(), Some(3.0));
        // 40 of 340 is 0.118 < 0.125; 60 of 360 is 0.167 >= 0.125.
        assert_eq!(t.half_share_s(), Some(4.0));
        let claims: Vec<String> =
            crate::claims::churn::claims(&[t]).iter().map(ToString::to_string).collect();
        assert!(claims[0].contains("after 4 s (<= 10 s: holds)"), "{claims:?}");
        assert!(claims[0].contains("after 3 s (<= 30 s: holds)"), "{claims:?}");
    }
}

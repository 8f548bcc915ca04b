//! The headline experiments on real processes and sockets.
//!
//! For every workload, connection mode and round, every front-end runs in turn, the order
//! reversed every other round (A B, B A, A B: `round_order`): fresh nodes (cold caches)
//! with unequal caches, the front-end in front of them, a warm-up, a measured closed loop
//! (or, for `classes`, two open loops), optionally the DBench ramp, then everything is
//! stopped. Hit ratios come from the nodes' load reports, CPU time from /proc, latency
//! and throughput from the load generator in this process. What the caller's
//! [`Report`] hears is the progress, the table and the claims (the kind's
//! `Profile` says which); the children's output goes to
//! `<out>/logs/<run>/<child>.log`.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::child::{self, Logs};
use crate::churn::ChurnRun;
use crate::claims::{self, Claim};
use crate::cpu_cap::{CpuShare, NodeCgroups};
use crate::error::{Context, LabError, Result};
use crate::front::{self, System};
use crate::hosts::{Host, Hosts, LinkShape, Rate, CLIENT_HOST};
use crate::launcher::{larder_exe, Launcher};
use crate::measure::{self, RunSpec};
use crate::origin_link;
use crate::plan::{ExperimentPlan, Setup};
use crate::profile::Runs;
use crate::report::Report;
use crate::results::{self, Row};
use crate::run_dir::RunDir;
use crate::run_shape::RunShape;
use crate::scenario::{Scenario, ScenarioKind};
use crate::signals::Signals;
use crate::store;
use crate::timeline;
use crate::workload::{self, Content, Sizing, Workload, WorkloadKind};

/// The runs of one round in the order they are measured: as given in even rounds,
/// reversed in odd ones (A B, B A, A B, …). Each system then runs first as often as last,
/// so a drift of the machine within a round (a neighbour's load, a slower stretch of the
/// shared cores) does not always fall on the same system.
fn round_order<T: Copy>(runs: &[T], round: u32) -> impl Iterator<Item = T> + '_ {
    let reversed = round % 2 == 1;
    let n = runs.len();
    (0..n).map(move |i| runs[if reversed { n - 1 - i } else { i }])
}

/// How long stopped processes get to exit before they are killed.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// Runs the experiment `plan` describes: reports the progress, the table and the claims
/// to `report`, and writes them with the rows and charts to `plan.out`.
pub fn run(plan: &ExperimentPlan, report: Arc<dyn Report>) -> Result<()> {
    // Before the load generator's threads exist (see `signals`).
    let signals = Signals::block().context("blocking signals")?;
    let setup = plan.setup(&*report)?;
    // Removed when dropped, after the launcher and every process on them.
    let hosts = match &plan.hosts {
        Some(config) => Some(Arc::new(Hosts::create(config.clone(), report.clone())?)),
        None => None,
    };
    // The load generator (and every check) runs on the client host: before its threads
    // exist, which start where this thread is.
    let client = hosts.as_ref().map(|h| h.host(CLIENT_HOST)).transpose()?;
    let _on_client = client.as_ref().map(Host::enter_this_thread).transpose()?;
    let exe = larder_exe(plan.larder.clone())?;
    if let Some(cpu) = setup.router.cpu {
        // Before the load generator's threads exist: they inherit it.
        child::pin_self(cpu).with_context(|| format!("pinning to CPU {cpu}"))?;
    }
    let run_dir = RunDir::create("experiment")?;
    let logs = Logs::new(plan.out.join("logs"), plan.verbose.then(|| report.clone()))?;
    // Dropped after every node it capped has stopped: its cgroups go with it.
    let node_cpu = setup
        .node_cpu
        .map(|share| NodeCgroups::create(share, report.clone()))
        .transpose()?
        .map(Arc::new);
    let launcher = Launcher {
        exe,
        signals: signals.clone(),
        logs,
        grace: STOP_GRACE,
        node_cpu,
        report: report.clone(),
        hosts: hosts.clone(),
    };
    let store_root = store::root(plan.store_dir.as_deref())?;
    let all_cache: u64 = plan.cache_mb.iter().sum::<u64>() << 20;
    let sizing = Sizing {
        dataset_bytes: plan.dataset_mb.map_or(all_cache * 3 / 4, |m| m << 20),
        file_bytes: plan.file_size,
        view_bytes: plan.dyn_view_size,
        doc_bytes: plan.dyn_doc_size,
        dyn_cost: plan.dyn_cost,
        alpha: plan.alpha,
        seed: plan.seed,
        large: plan.large,
    };
    if let Some(origin) = &setup.origin {
        origin_link::prepare(plan.origin_link.as_ref(), origin.addr.port())?;
    }
    let mut header = describe(plan, &setup, launcher.node_cpu.as_deref());
    if let Some(hosts) = &hosts {
        header.push_str(&format!("; {}", hosts.describe()));
        if plan.link_rates.len() > 1 {
            let rates: Vec<String> = plan.link_rates.iter().map(Rate::to_string).collect();
            header.push_str(&format!("; every system at link rates {}", rates.join(", ")));
        }
    }
    report.note(&header);
    let shape = RunShape {
        cpus: online_cpus(),
        cache_mb: plan.cache_mb.clone(),
        users: plan.users,
        node_cpu_share: setup.node_cpu.map(CpuShare::get),
    };
    let profile = plan.kind.profile();
    let claims_of = match profile.runs {
        Runs::Rows { claims } => claims,
        Runs::Timelines => {
            shape.write(&plan.out)?;
            return churn(plan, &setup, &launcher, run_dir.path(), &sizing, &store_root, &header);
        }
    };
    let mut rows = Vec::new();
    // Every front-end count with every system: one round's runs, in their first order.
    let listed = front::listings(&setup.systems);
    // With several link rates, every system at each (named `lard-r @100mbit`).
    let rates: Vec<Option<Rate>> = match plan.link_rates.as_slice() {
        [] | [_] => vec![None],
        many => many.iter().copied().map(Some).collect(),
    };
    if let (Some(hosts), Some(config), [one]) = (&hosts, &plan.hosts, plan.link_rates.as_slice()) {
        hosts.reshape(LinkShape { rate: *one, ..config.link })?;
    }
    let runs: Vec<(u8, System, u8, Option<Rate>)> = plan
        .routers
        .iter()
        .flat_map(|&r| listed.iter().map(move |&(s, k)| (r, s, k)))
        .flat_map(|(r, s, k)| rates.iter().map(move |&rate| (r, s, k, rate)))
        .collect();
    let total = setup.workloads.len() * plan.connections.len() * plan.rounds as usize * runs.len();
    report.begin(total as u64, "runs");
    let stopped = 'all: {
        for &kind in &setup.workloads {
            let w = workload::build(kind, &sizing, plan.trace.as_deref(), &store_root, &*report)?;
            report.note(&format!(
                "\n{kind}: {} objects, {:.1} MiB; nodes cache {} MiB",
                w.objects,
                w.dataset_bytes as f64 / f64::from(1 << 20),
                caches(plan)
            ));
            let extra = if profile.mixes_dynamic {
                Some(dynamic_part(&sizing, &store_root, &*report)?)
            } else {
                None
            };
            for &connections in &plan.connections {
                for round in 0..plan.rounds {
                    for (routers, system, listing, rate) in round_order(&runs, round) {
                        if signals.stop_requested(Duration::ZERO) {
                            break 'all true;
                        }
                        let system_name = front::label(system, 1, listing).replace('/', "-");
                        let at = rate.map_or(String::new(), |r| format!("-{r}"));
                        let name = format!(
                            "{kind}-{}-{system_name}-x{routers}{at}-round{}",
                            connections.name(),
                            round + 1
                        );
                        if let (Some(hosts), Some(config), Some(rate)) = (&hosts, &plan.hosts, rate)
                        {
                            hosts.reshape(LinkShape { rate, ..config.link })?;
                        }
                        let launcher =
                            Launcher { logs: launcher.logs.sub(&name)?, ..launcher.clone() };
                        report.step(&format!("{system} on {kind}, round {}", round + 1));
                        let spec = RunSpec {
                            workload: &w,
                            dynamic: extra.as_ref(),
                            system,
                            listing,
                            routers,
                            connections,
                            round,
                            link_rate: rate,
                        };
                        let row = measure::run_one(plan, &setup, &launcher, run_dir.path(), &spec)
                            .with_context(|| format!("{system} on {kind}, round {}", round + 1))?;
                        report.note(&progress_line(&row));
                        report.advance();
                        rows.push(row);
                    }
                }
            }
        }
        false
    };
    report.finish();
    let baseline = plan.baseline();
    report.table(&results::render_table(&rows, baseline));
    let mut claims = claims_of(&rows);
    claims.extend(claims::rows::controls(&rows));
    report_claims(&*report, &claims);
    results::write(&plan.out, &rows, baseline, &header, &claims)?;
    shape.write(&plan.out)?;
    report.note(&format!(
        "\nwrote {}/table.md, rows.json, shape.json and SVG charts",
        plan.out.display()
    ));
    if stopped {
        return Err(LabError::Invalid(
            "interrupted; the rows above were measured before the stop".into(),
        ));
    }
    Ok(())
}

/// The churn experiment: every scenario, round and system (A B, B A, …), a timeline each;
/// then the table, the claims, timeline.json/.csv and the charts.
fn churn(
    plan: &ExperimentPlan,
    setup: &Setup,
    launcher: &Launcher,
    dir: &Path,
    sizing: &Sizing,
    store_root: &Path,
    header: &str,
) -> Result<()> {
    let n = setup.nodes.len();
    let kinds = if plan.scenarios.is_empty() { &ScenarioKind::ALL[..] } else { &plan.scenarios };
    let mut scenarios: Vec<Scenario> =
        kinds.iter().map(|&k| Scenario::new(k, n, plan.warmup, plan.flash_crowd)).collect();
    if !plan.events.is_empty() {
        scenarios.push(Scenario {
            name: "events".into(),
            crowd: None,
            events: plan.events.clone(),
        });
    }
    for s in &scenarios {
        trace::initial_members(&s.events, n).map_err(LabError::Invalid)?;
    }
    let report = &*launcher.report;
    let listed = front::listings(&setup.systems);
    let mut timelines = Vec::new();
    let mut stopped = false;
    for &kind in &setup.workloads {
        let w = workload::build(kind, sizing, plan.trace.as_deref(), store_root, report)?;
        report.note(&format!(
            "\n{kind}: {} objects, {:.1} MiB; nodes cache {} MiB",
            w.objects,
            w.dataset_bytes as f64 / f64::from(1 << 20),
            caches(plan)
        ));
        for scenario in &scenarios {
            for round in 0..plan.rounds {
                for (system, listing) in round_order(&listed, round) {
                    if let Some(why) = scenario.unsupported(system) {
                        if round == 0 {
                            report.note(&format!("  {}: skipping {system}: {why}", scenario.name));
                        }
                        continue;
                    }
                    if launcher.signals.stop_requested(Duration::ZERO) {
                        stopped = true;
                        break;
                    }
                    let label = front::label(system, 1, listing);
                    let name = format!(
                        "churn-{}-{}-round{}",
                        scenario.name,
                        label.replace('/', "-"),
                        round + 1
                    );
                    let launcher = Launcher { logs: launcher.logs.sub(&name)?, ..launcher.clone() };
                    let run = ChurnRun { workload: &w, scenario, system, label: &label, round };
                    let t = crate::churn::run_one(plan, setup, &launcher, dir, &run).with_context(
                        || format!("{system} through {}, round {}", scenario.name, round + 1),
                    )?;
                    report.note(&format!(
                        "  {:<8} {:<18} round {}  {:>7.0} req/s after  hit {:.3} -> {:.3}  p99 after {:>7.2} ms  errors {}",
                        scenario.name,
                        system,
                        round + 1,
                        t.rps_after(),
                        t.hit_before(),
                        t.hit_after(),
                        t.p99_after_ms(),
                        t.errors()
                    ));
                    timelines.push(t);
                }
            }
        }
    }
    report.table(&timeline::render_table(&timelines));
    let claims = claims::churn::claims(&timelines);
    report_claims(report, &claims);
    timeline::write(&plan.out, &timelines, header, &claims)?;
    report.note(&format!(
        "\nwrote {}/table.md, timeline.json, timeline.csv, shape.json and SVG charts",
        plan.out.display()
    ));
    if stopped {
        return Err(LabError::Invalid(
            "interrupted; the runs above were measured before the stop".into(),
        ));
    }
    Ok(())
}

/// The claims under their heading, when there are any.
fn report_claims(report: &dyn Report, claims: &[Claim]) {
    if claims.is_empty() {
        return;
    }
    report.note("\nclaims:");
    for c in claims {
        report.claim(c);
    }
}

fn caches(plan: &ExperimentPlan) -> String {
    plan.cache_mb.iter().map(u64::to_string).collect::<Vec<_>>().join("/")
}

/// The classes experiment's dynamic requests: views far more than the caches hold, so
/// nearly every one is computed (HACC's ASP pages were computed every time).
fn dynamic_part(sizing: &Sizing, store_root: &Path, report: &dyn Report) -> Result<Workload> {
    let many = Sizing { dataset_bytes: 100_000 * sizing.view_bytes, ..sizing.clone() };
    workload::build(WorkloadKind::new(Content::Dynamic, false), &many, None, store_root, report)
}

/// Online CPUs, not this process's share: the load generator may be pinned to one.
fn online_cpus() -> u32 {
    // SAFETY: sysconf has no preconditions.
    let cpus = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) }.max(1);
    u32::try_from(cpus).unwrap_or(u32::MAX)
}

/// The machine and settings, as the head of the table.
fn describe(plan: &ExperimentPlan, setup: &Setup, node_cpu: Option<&NodeCgroups>) -> String {
    let cpus = online_cpus();
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| c.lines().find(|l| l.starts_with("model name")).map(str::to_string))
        .and_then(|l| l.split_once(':').map(|(_, m)| m.trim().to_string()))
        .unwrap_or_else(|| "unknown CPU".into());
    let systems: Vec<String> =
        front::listings(&setup.systems).into_iter().map(|(s, k)| front::label(s, 1, k)).collect();
    let mut pinned = String::new();
    if setup.nodes.iter().any(|n| n.cpu.is_some()) {
        let cpus: Vec<String> =
            setup.nodes.iter().map(|n| n.cpu.map_or("-".into(), |c| c.to_string())).collect();
        pinned = format!(", pinned to CPUs {}", cpus.join("/"));
    }
    if let Some(cgroups) = node_cpu {
        pinned.push_str(&format!(", {}", cgroups.describe()));
    }
    if let Some(c) = setup.router.cpu {
        pinned.push_str(&format!("; front-end and load generator on CPU {c}"));
    }
    let profile = plan.kind.profile();
    let mut load = if profile.mixes_dynamic {
        format!("open loop {} req/s ({}% dynamic)", plan.rate, plan.dynamic_share * 100.0)
    } else {
        format!("{} users", plan.users)
    };
    if let Runs::Timelines = profile.runs {
        load.push_str("; events at the end of the warm-up; figures every second");
    }
    if profile.origin {
        let unshaped = if plan.hosts.is_some() {
            "origin link: its host's link"
        } else {
            "origin link unshaped"
        };
        let link = plan.origin_link.map_or(unshaped.into(), |l| l.describe());
        load.push_str(&format!("; origin nginx (one worker) serving the store from disk; {link}"));
    }
    format!(
        "# larder bench experiment {}\n\nmachine: {cpus} CPUs ({model}); nodes: caches {} MiB{pinned}; \
         front-ends: {}; {load}, warm-up {:?}, {:?} measured, {} round{}; router threads {}, \
         load generator threads {}",
        plan.kind.name(),
        caches(plan),
        systems.join(", "),
        plan.warmup,
        plan.duration,
        plan.rounds,
        if plan.rounds == 1 { "" } else { "s" },
        setup.router.threads,
        setup.client_threads,
    )
}

fn progress_line(r: &Row) -> String {
    let mut line = format!(
        "  {:<10} {:<11} round {}  {:>8.0} req/s  hit {:.3}  mean {:>7.2} ms  p99 {:>7.2} ms  errors {}",
        r.system, r.connections, r.round + 1, r.throughput_rps, r.hit_ratio, r.mean_ms, r.p99_ms, r.errors
    );
    if let Some(u) = r.users_sustained {
        line.push_str(&format!("  users sustained {u}"));
    }
    if let (Some(s), Some(d)) = (r.static_mean_ms, r.dynamic_mean_ms) {
        line.push_str(&format!("  static mean {s:.2} ms  dynamic mean {d:.2} ms"));
    }
    if !r.link_bytes.is_empty() {
        let mb = |b: u64| b as f64 / 1e6;
        let links: Vec<String> = r
            .link_bytes
            .iter()
            .map(|l| format!("{} {:.1}/{:.1}", l.host, mb(l.sent), mb(l.received)))
            .collect();
        line.push_str(&format!("\n    MB each link sent/received: {}", links.join(", ")));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::{report_claims, round_order};
    use crate::claims::Claim;
    use crate::report::Kept;

    #[test]
    fn claims_are_reported_under_a_heading_only_when_there_are_some() {
        let kept = Kept::default();
        report_claims(&kept, &[]);
        assert!(kept.lines().is_empty());
        let claim = Claim::checked("static-zipf, keep-alive", "x (>= 2: holds)".into(), &[true]);
        report_claims(&kept, &[claim]);
        assert_eq!(kept.lines(), ["\nclaims:", "static-zipf, keep-alive: x (>= 2: holds)"]);
    }

    #[test]
    fn every_other_round_runs_the_systems_in_reverse() {
        let runs = ["a", "b", "c"];
        let order: Vec<Vec<&str>> = (0..3).map(|r| round_order(&runs, r).collect()).collect();
        assert_eq!(order, [vec!["a", "b", "c"], vec!["c", "b", "a"], vec!["a", "b", "c"]]);
        assert_eq!(round_order::<u8>(&[], 1).count(), 0);
    }
}

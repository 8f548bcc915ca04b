//! The must-hold checks of churn and flash crowds, read from the timelines on the
//! medians over rounds: during a flash crowd `lard-r` keeps a lower p99 and a higher hit
//! ratio than the hashing front-ends and more throughput than `lard`; after a node is
//! added, restarted or removed, the hit ratio comes back and the node gets its share.

use super::claim::{verdict, Claim};
use crate::timeline::{by_scenario, median_of, recovered_within, seconds, Timeline};

/// The hit ratio is back within [`crate::timeline::RECOVERED`] of the ratio before
/// within this many seconds.
const RECOVERY_WITHIN_S: f64 = 30.0;
/// An added or restarted node serves half its fair share within this many seconds.
const HALF_SHARE_WITHIN_S: f64 = 10.0;
/// The flash crowd's front-ends whose p99 during the crowd `lard-r` must beat.
const FLASH_P99_RIVALS: [&str; 3] = ["hash", "haproxy-consistent", "nginx"];

/// Every scenario's claims, in the order of the runs.
pub fn claims(runs: &[Timeline]) -> Vec<Claim> {
    let mut out = Vec::new();
    for (scenario, systems) in by_scenario(runs) {
        let get = |name: &str| systems.iter().find(|(s, _)| *s == name).map(|(_, r)| r.clone());
        if scenario == "flash" {
            let group = "flash crowd";
            let Some(lr) = get("lard-r") else { continue };
            let p99 = |r: &[&Timeline]| median_of(r, |t| Some(t.p99_after_ms()));
            let hit = |r: &[&Timeline]| median_of(r, |t| Some(t.hit_after()));
            for other in FLASH_P99_RIVALS {
                if let Some(o) = get(other) {
                    let (a, b) = (p99(&lr), p99(&o));
                    let ok = a < b;
                    out.push(Claim::checked(
                        group,
                        format!(
                            "p99 during the crowd lard-r {a:.2} ms vs {other} {b:.2} ms (lower: {})",
                            verdict(ok)
                        ),
                        &[ok],
                    ));
                }
            }
            if let Some(ha) = get("haproxy") {
                let (a, b) = (hit(&lr), hit(&ha));
                let ok = a > b;
                out.push(Claim::checked(
                    group,
                    format!(
                        "hit ratio during the crowd lard-r {a:.3} vs haproxy (factor 125) {b:.3} (higher: {})",
                        verdict(ok)
                    ),
                    &[ok],
                ));
            }
            if let Some(lard) = get("lard") {
                let (a, b) = (
                    median_of(&lr, |t| Some(t.rps_after())),
                    median_of(&lard, |t| Some(t.rps_after())),
                );
                let ok = a > b;
                out.push(Claim::checked(
                    group,
                    format!(
                        "throughput during the crowd lard-r/lard {:.2}x (above 1: {})",
                        a / b,
                        verdict(ok)
                    ),
                    &[ok],
                ));
            }
            continue;
        }
        for (system, runs) in &systems {
            let errors: u64 = runs.iter().map(|t| t.errors()).sum();
            let back = median_of(runs, |t| t.recovery_s());
            let before = median_of(runs, |t| Some(t.hit_before()));
            let recovered = back <= RECOVERY_WITHIN_S;
            let recovery = format!(
                "hit ratio {} of before ({before:.3}) after {} (<= {RECOVERY_WITHIN_S} s: {})",
                recovered_within(),
                seconds(back),
                verdict(recovered)
            );
            if scenario == "remove" {
                let none_failed = errors == 0;
                out.push(Claim::checked(
                    format!("node removed, {system}"),
                    format!("failed requests {errors} (0: {}), {recovery}", verdict(none_failed)),
                    &[none_failed, recovered],
                ));
            } else if runs[0].node.is_some() {
                let half = median_of(runs, |t| t.half_share_s());
                let what = match scenario {
                    "add" => "node added",
                    "restart" => "node restarted on its address",
                    other => other,
                };
                let served = half <= HALF_SHARE_WITHIN_S;
                out.push(Claim::checked(
                    format!("{what}, {system}"),
                    format!(
                        "half its fair share ({:.3}) after {} (<= {HALF_SHARE_WITHIN_S} s: {}), {recovery}, failed requests {errors}",
                        runs[0].fair_share / 2.0,
                        seconds(half),
                        verdict(served)
                    ),
                    &[served, recovered],
                ));
            }
        }
    }
    out
}

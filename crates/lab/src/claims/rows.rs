//! The claims read from the measured rows, on the medians over rounds: the papers' (LARD,
//! HACC) for the locality and classes experiments, the origin experiment's, and the A/A
//! controls that say how much of a difference is the machine's noise. Groups without the
//! systems a claim compares are left out.

use super::claim::{verdict, Claim};
use crate::results::{groups, median, Row};

/// Locality: `lard-r` at least this many times `wrr`'s throughput (LARD's headline).
const LARD_R_OVER_WRR: f64 = 2.0;
/// Locality: `lard-r` at least this many times HAProxy's throughput, with a lower p99.
const LARD_R_OVER_HAPROXY: f64 = 1.15;
/// Locality: `lard-r` above this many times `hash`'s throughput (it must beat it at all).
const LARD_R_OVER_HASH: f64 = 1.0;
/// Locality: `lard-r`'s aggregate hit ratio at least this.
const LARD_R_HIT_RATIO: f64 = 0.9;
/// Classes: the static requests' mean response time under `class` at least this share
/// below `rr`'s (HACC's ASP case).
const CLASS_STATIC_MEAN_LOWER: f64 = 0.3;
/// Origin: `lard-r` at least this many times `wrr`'s throughput…
const ORIGIN_OVER_WRR: f64 = 3.0;
/// … with at least this many times fewer origin bytes per request.
const ORIGIN_BYTES_FEWER_THAN_WRR: f64 = 2.5;
/// Origin: `lard-r` at least this many times HAProxy's throughput, with a lower p99.
const ORIGIN_OVER_HAPROXY: f64 = 1.3;
/// Origin: `lard-r` at least Varnish's shard director's throughput…
const ORIGIN_OVER_VARNISH: f64 = 1.0;
/// … with origin bytes per request at most this many times Varnish's.
const ORIGIN_BYTES_OVER_VARNISH: f64 = 1.05;
/// Large objects: `lard-r` at least this many times the throughput of a Varnish caching
/// cluster of the same size and memory…
const LARGE_OVER_VARNISH_CLUSTER: f64 = 1.3;
/// … sending the origin no more bytes per request than it.
const LARGE_BYTES_OVER_VARNISH_CLUSTER: f64 = 1.0;
/// Hosts of their own: `peers` at least a self-routing Varnish cluster's throughput (the
/// same hosts, links, caches and clients spread over every cache)…
const PEERS_OVER_SELF_ROUTING: f64 = 1.0;
/// … sending the origin no more bytes per request than it.
const PEERS_BYTES_OVER_SELF_ROUTING: f64 = 1.0;

/// The claim against HAProxy on the medians: `lard-r` at least `at_least` times its
/// throughput, with a lower p99.
fn against_haproxy(group: &str, lr: &[&Row], ha: &[&Row], at_least: f64) -> Claim {
    let rps = |runs: &[&Row]| median(runs, |r| r.throughput_rps);
    let p99 = |runs: &[&Row]| median(runs, |r| r.p99_ms);
    let x = rps(lr) / rps(ha);
    let (a, b) = (p99(lr), p99(ha));
    let (faster, lower) = (x >= at_least, a < b);
    Claim::checked(
        group,
        format!(
            "lard-r/haproxy throughput {x:.2}x (>= {at_least}: {}), p99 {a:.2} vs {b:.2} ms (lower: {})",
            verdict(faster),
            verdict(lower)
        ),
        &[faster, lower],
    )
}

/// The claim against a Varnish tier (`name`) on the medians: larder (`mine`: `lard-r`
/// or `peers`) at least `bounds.0` times its throughput, with origin bytes per request at
/// most `bounds.1` times its.
fn against_cache(
    group: &str,
    (mine_name, lr): (&str, &[&Row]),
    (name, v): (&str, &[&Row]),
    bounds: (f64, f64),
) -> Claim {
    let (at_least, bytes_at_most) = bounds;
    let rps = |runs: &[&Row]| median(runs, |r| r.throughput_rps);
    let bytes = |runs: &[&Row]| median(runs, |r| r.origin_bytes_per_request.unwrap_or(f64::NAN));
    let x = rps(lr) / rps(v);
    let (mine, theirs) = (bytes(lr), bytes(v));
    // Compared as a product, so "both fetched nothing" counts as equal (0/0 would be NaN,
    // and NaN compares false).
    let within = mine <= bytes_at_most * theirs;
    let ratio = if theirs > 0.0 {
        format!("{:.3}x {name}'s", mine / theirs)
    } else {
        format!("{:.2} vs {:.2} KiB per request", mine / 1024.0, theirs / 1024.0)
    };
    let faster = x >= at_least;
    Claim::checked(
        group,
        format!(
            "{mine_name}/{name} throughput {x:.2}x (>= {at_least}: {}), origin bytes {ratio} (<= {bytes_at_most}: {})",
            verdict(faster),
            verdict(within)
        ),
        &[faster, within],
    )
}

/// The origin experiment's claims: `lard-r` against `wrr` ([`ORIGIN_OVER_WRR`],
/// [`ORIGIN_BYTES_FEWER_THAN_WRR`]), against HAProxy ([`ORIGIN_OVER_HAPROXY`], lower p99)
/// against Varnish's shard director ([`ORIGIN_OVER_VARNISH`],
/// [`ORIGIN_BYTES_OVER_VARNISH`]) and, on large objects, against a Varnish caching
/// cluster ([`LARGE_OVER_VARNISH_CLUSTER`], [`LARGE_BYTES_OVER_VARNISH_CLUSTER`]); and
/// `peers` against a self-routing Varnish cluster ([`PEERS_OVER_SELF_ROUTING`],
/// [`PEERS_BYTES_OVER_SELF_ROUTING`]).
pub fn origin_claims(rows: &[Row]) -> Vec<Claim> {
    let mut out = Vec::new();
    for ((workload, connections), systems) in groups(rows) {
        let get = |name: &str| systems.iter().find(|(s, _)| *s == name).map(|(_, r)| r.as_slice());
        let rps = |runs: &[&Row]| median(runs, |r| r.throughput_rps);
        let bytes =
            |runs: &[&Row]| median(runs, |r| r.origin_bytes_per_request.unwrap_or(f64::NAN));
        let group = format!("{workload}, {connections}");
        if let (Some(p), Some(v)) = (get("peers"), get("varnish-self-routing")) {
            let bounds = (PEERS_OVER_SELF_ROUTING, PEERS_BYTES_OVER_SELF_ROUTING);
            out.push(against_cache(&group, ("peers", p), ("varnish-self-routing", v), bounds));
        }
        let Some(lr) = get("lard-r") else { continue };
        // A crowd on one object: every front-end's nodes share its slices, so round robin
        // is no baseline there.
        let crowd = workload == "video-crowd";
        if let Some(wrr) = get("wrr").filter(|_| !crowd) {
            let x = rps(lr) / rps(wrr);
            let (mine, theirs) = (bytes(lr), bytes(wrr));
            let fewer = if mine > 0.0 {
                format!("{:.2}x fewer", theirs / mine)
            } else {
                format!("{:.2} vs {:.2} KiB per request", mine / 1024.0, theirs / 1024.0)
            };
            let faster = x >= ORIGIN_OVER_WRR;
            let saves = mine * ORIGIN_BYTES_FEWER_THAN_WRR <= theirs && theirs > 0.0;
            out.push(Claim::checked(
                &group,
                format!(
                    "lard-r/wrr throughput {x:.2}x (>= {ORIGIN_OVER_WRR}: {}), origin bytes {fewer} (>= {ORIGIN_BYTES_FEWER_THAN_WRR}: {})",
                    verdict(faster),
                    verdict(saves)
                ),
                &[faster, saves],
            ));
        }
        if let Some(ha) = get("haproxy") {
            out.push(against_haproxy(&group, lr, ha, ORIGIN_OVER_HAPROXY));
        }
        if let Some(v) = get("varnish") {
            let bounds = (ORIGIN_OVER_VARNISH, ORIGIN_BYTES_OVER_VARNISH);
            out.push(against_cache(&group, ("lard-r", lr), ("varnish", v), bounds));
        }
        if let Some(v) = get("varnish-cluster") {
            let bounds = (LARGE_OVER_VARNISH_CLUSTER, LARGE_BYTES_OVER_VARNISH_CLUSTER);
            out.push(against_cache(&group, ("lard-r", lr), ("varnish-cluster", v), bounds));
        }
    }
    out
}

/// What the A/A controls measured: for every system listed again (`lard#2`, see
/// [`crate::front::listings`]), its medians over the first listing's, in every group.
/// Two runs of the very same front-end differ only by the machine, so these ratios are
/// the noise a difference between two systems has to stand out of.
pub fn controls(rows: &[Row]) -> Vec<Claim> {
    let mut out = Vec::new();
    for ((workload, connections), systems) in groups(rows) {
        for (name, runs) in &systems {
            let Some(first) = crate::front::first_listing(name) else { continue };
            let Some((_, base)) = systems.iter().find(|(s, _)| *s == first) else { continue };
            let rps = median(runs, |r| r.throughput_rps) / median(base, |r| r.throughput_rps);
            let p99 = median(runs, |r| r.p99_ms) / median(base, |r| r.p99_ms);
            out.push(Claim::observed(
                format!("{workload}, {connections}"),
                format!(
                    "A/A control {name}/{first} throughput {rps:.2}x, p99 {p99:.2}x (the same front-end twice: the measurement's own noise)"
                ),
            ));
        }
    }
    out
}

/// The claims of the papers: for locality, `lard-r` against `wrr` ([`LARD_R_OVER_WRR`]),
/// HAProxy ([`LARD_R_OVER_HAPROXY`], lower p99) and `hash` ([`LARD_R_OVER_HASH`]), with a
/// hit ratio of at least [`LARD_R_HIT_RATIO`]; for classes, the static requests' mean
/// response time under `class` at least [`CLASS_STATIC_MEAN_LOWER`] below `rr`.
pub fn claims(rows: &[Row]) -> Vec<Claim> {
    let mut out = Vec::new();
    for ((workload, connections), systems) in groups(rows) {
        let get = |name: &str| systems.iter().find(|(s, _)| *s == name).map(|(_, r)| r.as_slice());
        let rps = |runs: &[&Row]| median(runs, |r| r.throughput_rps);
        let group = format!("{workload}, {connections}");
        if let Some(lr) = get("lard-r") {
            // A crowd on one object: every front-end's nodes share its slices, so round robin
            // is no baseline there.
            let crowd = workload == "video-crowd";
            if let Some(wrr) = get("wrr").filter(|_| !crowd) {
                let x = rps(lr) / rps(wrr);
                let ok = x >= LARD_R_OVER_WRR;
                out.push(Claim::checked(
                    &group,
                    format!(
                        "lard-r/wrr throughput {x:.2}x (>= {LARD_R_OVER_WRR}: {})",
                        verdict(ok)
                    ),
                    &[ok],
                ));
            }
            if let Some(ha) = get("haproxy") {
                out.push(against_haproxy(&group, lr, ha, LARD_R_OVER_HAPROXY));
            }
            let hit = median(lr, |r| r.hit_ratio);
            if let Some(hash) = get("hash") {
                let x = rps(lr) / rps(hash);
                let hash_hit = median(hash, |r| r.hit_ratio);
                let ok = x > LARD_R_OVER_HASH;
                out.push(Claim::checked(
                    &group,
                    format!(
                        "lard-r/hash throughput {x:.2}x (> {LARD_R_OVER_HASH}: {}), hit ratio {hit:.3} vs {hash_hit:.3}",
                        verdict(ok)
                    ),
                    &[ok],
                ));
            }
            let ok = hit >= LARD_R_HIT_RATIO;
            out.push(Claim::checked(
                &group,
                format!("lard-r hit ratio {hit:.3} (>= {LARD_R_HIT_RATIO}: {})", verdict(ok)),
                &[ok],
            ));
        }
        if let (Some(class), Some(rr)) = (get("class"), get("rr")) {
            let mean = |runs: &[&Row]| median(runs, |r| r.static_mean_ms.unwrap_or(f64::NAN));
            let (c, r) = (mean(class), mean(rr));
            let lower = 1.0 - c / r;
            let ok = lower >= CLASS_STATIC_MEAN_LOWER;
            out.push(Claim::checked(
                &group,
                format!(
                    "static mean response class {c:.2} ms vs rr {r:.2} ms: {:.0}% lower (>= {:.0}%: {})",
                    lower * 100.0,
                    CLASS_STATIC_MEAN_LOWER * 100.0,
                    verdict(ok)
                ),
                &[ok],
            ));
        }
    }
    out
}

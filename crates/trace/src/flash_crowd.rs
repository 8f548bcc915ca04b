//! A flash crowd: from a moment on, one target (or a small set) takes a given share of
//! all requests — a launch, a match, a link on a front page.
//!
//! Written `share=0.3,at=10s[,targets=1]`. Which requests belong to the crowd is a
//! deterministic rule on the count of requests since the crowd began (the k-th is the
//! crowd's when ⌊(k+1)·share⌋ > ⌊k·share⌋), so the share holds exactly over any stretch
//! and the same stream gives the same crowd every time; the crowd's requests go to the
//! hot targets in turn. The generator applies it to a stream by the requests' times
//! ([`FlashCrowd::apply`]); the load generator applies the same rule by the wall clock.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use crate::duration_text::parse_duration;
use crate::rng::Rng;
use crate::workload::Workload;

/// Most hot targets one crowd may have ("a small set").
pub const MAX_HOT_TARGETS: u32 = 1_000;
/// The generator stream the hot targets are drawn from (apart from sizes and ranks).
const HOT_STREAM: u64 = 4;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlashCrowd {
    /// Share of all requests, from `at` on, that go to the hot targets; in (0, 1).
    pub share: f64,
    /// When the crowd begins: since the start of the stream or of the run.
    pub at: Duration,
    /// How many targets are hot (1..=[`MAX_HOT_TARGETS`]).
    pub targets: u32,
}

impl FlashCrowd {
    /// Whether the `k`-th request (0-based) since the crowd began is the crowd's, and if
    /// so, which of the hot targets (an index into them) it asks for.
    pub fn pick(&self, k: u64) -> Option<usize> {
        let before = (k as f64 * self.share).floor();
        let after = ((k + 1) as f64 * self.share).floor();
        (after > before).then(|| (before as u64 % u64::from(self.targets.max(1))) as usize)
    }

    /// The hot targets among `n` targets, drawn for `seed`: distinct indices.
    pub fn hot_targets(&self, n: u32, seed: u64) -> Result<Vec<u32>, String> {
        if n < self.targets {
            return Err(format!(
                "a flash crowd on {} targets needs at least as many, the workload has {n}",
                self.targets
            ));
        }
        let mut rng = Rng::with_stream(seed, HOT_STREAM);
        let mut hot: Vec<u32> = Vec::with_capacity(self.targets as usize);
        while hot.len() < self.targets as usize {
            let t = rng.below(u64::from(n)) as u32;
            if !hot.contains(&t) {
                hot.push(t);
            }
        }
        Ok(hot)
    }

    /// Turns the requests of `workload` from `at` on (by their times) into the crowd's
    /// share of requests for the hot targets (drawn for `seed`); returns those targets.
    pub fn apply(&self, workload: &mut Workload, seed: u64) -> Result<Vec<u32>, String> {
        let hot = self.hot_targets(workload.targets.len() as u32, seed)?;
        let from = self.at.as_millis();
        let crowd = workload.requests.iter_mut().filter(|r| u128::from(r.time_ms) >= from);
        for (k, r) in (0u64..).zip(crowd) {
            if let Some(i) = self.pick(k) {
                r.target = hot[i];
            }
        }
        Ok(hot)
    }
}

impl FromStr for FlashCrowd {
    type Err = String;

    /// `share=S,at=DURATION[,targets=N]`, keys in any order.
    fn from_str(s: &str) -> Result<Self, String> {
        let (mut share, mut at, mut targets) = (None, None, 1);
        for part in s.split(',').map(str::trim) {
            let (key, value) = part.split_once('=').ok_or_else(|| {
                format!("{part:?}: expected key=value (share=0.3,at=10s,targets=1)")
            })?;
            match key.trim() {
                "share" => {
                    let v: f64 = value.trim().parse().map_err(|_| format!("share {value:?}"))?;
                    if !(v > 0.0 && v < 1.0) {
                        return Err(format!("share {value}: must be between 0 and 1"));
                    }
                    share = Some(v);
                }
                "at" => at = Some(parse_duration(value)?),
                "targets" => {
                    targets = value.trim().parse().map_err(|_| format!("targets {value:?}"))?;
                    if targets == 0 || targets > MAX_HOT_TARGETS {
                        return Err(format!("targets {value}: must be in 1..={MAX_HOT_TARGETS}"));
                    }
                }
                other => {
                    return Err(format!("unknown key {other:?} (expected share, at, targets)"))
                }
            }
        }
        match (share, at) {
            (Some(share), Some(at)) => Ok(FlashCrowd { share, at, targets }),
            _ => Err(format!("{s:?}: a flash crowd needs share= and at=")),
        }
    }
}

impl fmt::Display for FlashCrowd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "share={},at={}s,targets={}", self.share, self.at.as_secs_f64(), self.targets)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{generate, Popularity, SizeMix, SynthConfig, WorkRequest};

    #[test]
    fn specs_parse_and_round_trip() {
        let c: FlashCrowd = "share=0.3,at=10s".parse().unwrap();
        assert_eq!(c, FlashCrowd { share: 0.3, at: Duration::from_secs(10), targets: 1 });
        let c: FlashCrowd = " at=1500ms , share=0.5, targets=3".parse().unwrap();
        assert_eq!(c.targets, 3);
        assert_eq!(c.at, Duration::from_millis(1500));
        assert_eq!(c.to_string().parse::<FlashCrowd>().unwrap(), c);
        for bad in [
            "",
            "share=0.3",
            "at=1s",
            "share=1,at=1s",
            "share=0,at=1s",
            "share=x,at=1s",
            "share=0.3,at=soon",
            "share=0.3,at=1s,targets=0",
            "share=0.3,at=1s,targets=9999",
            "share=0.3,at=1s,hot=1",
            "share=0.3;at=1s",
        ] {
            assert!(bad.parse::<FlashCrowd>().is_err(), "{bad:?} should be rejected");
        }
    }

    #[test]
    fn the_hot_targets_take_their_share_after_the_jump_only() {
        let config = SynthConfig {
            docs: 500,
            requests: 20_000,
            requests_per_sec: 1_000,
            sizes: SizeMix::Fixed(1024),
            popularity: Popularity::Uniform,
            ..SynthConfig::default()
        };
        let before = generate(&config).unwrap();
        let mut w = before.clone();
        let crowd: FlashCrowd = "share=0.3,at=10s,targets=2".parse().unwrap();
        let hot = crowd.apply(&mut w, 7).unwrap();
        assert_eq!(hot.len(), 2);
        assert_ne!(hot[0], hot[1]);
        let (early, late): (Vec<&WorkRequest>, Vec<&WorkRequest>) =
            w.requests.iter().partition(|r| r.time_ms < 10_000);
        assert_eq!(early, before.requests[..early.len()].iter().collect::<Vec<_>>());
        let on = |t: u32| late.iter().filter(|r| r.target == t).count() as f64;
        let share = (on(hot[0]) + on(hot[1])) / late.len() as f64;
        // 30% by the rule, plus what uniform popularity gave the two anyway (2/500).
        assert!((share - 0.3).abs() < 0.01, "hot share {share}");
        assert!((on(hot[0]) - on(hot[1])).abs() <= 2.0 + late.len() as f64 * 0.01);
        assert!(crowd.apply(&mut Workload::default(), 7).is_err(), "no targets to heat");
    }
}

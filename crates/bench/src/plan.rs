//! What the users send: a plan of scripts, each a sequence of requests with think times.
//!
//! A single URL is one script of one request, repeated; a trace replayed per user is one
//! script per session with the session's think times; a flat trace is one stream shared by
//! all users. Users take scripts from a shared cursor, so every script is played exactly
//! once per pass, in order of the plan, whatever the number of users.

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::error::BenchError;

/// One request of a script.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// Index into [`Plan::paths`].
    pub target: u32,
    /// How long after the previous request of the script was sent this one is sent
    /// (start to start, as logs record it); zero for the first.
    pub think: Duration,
}

/// A byte range of a request (`Range: bytes=first-last`, both inclusive).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ByteRange {
    pub first: u64,
    pub last: u64,
}

impl ByteRange {
    /// Bytes the range covers.
    pub fn len(&self) -> u64 {
        self.last - self.first + 1
    }

    /// Never: a range covers at least its first byte.
    pub fn is_empty(&self) -> bool {
        false
    }
}

/// What is asked of one path and what its answer must be, so that a wrong answer counts
/// as an error instead of as a fast one: a range must come back as 206 with exactly its
/// bytes, a whole object as 200 with exactly its length.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RequestShape {
    /// Ask for these bytes only.
    pub range: Option<ByteRange>,
    /// The whole object's length, when known.
    pub object_bytes: Option<u64>,
}

impl RequestShape {
    /// Whether a response of `status` with `body_bytes` is the answer this request asked for.
    pub fn answered_by(&self, status: u16, body_bytes: u64) -> bool {
        match (self.range, self.object_bytes) {
            (Some(r), _) => status == 206 && body_bytes == r.len(),
            (None, Some(n)) => status == 200 && body_bytes == n,
            (None, None) => true,
        }
    }
}

/// Request paths and the scripts over them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Full request paths (already joined with the base URL's prefix).
    pub paths: Vec<String>,
    /// Per path, what is asked and expected (empty: whole GETs, any length).
    pub shapes: Vec<RequestShape>,
    steps: Vec<Step>,
    scripts: Vec<Range<usize>>,
}

impl Plan {
    /// One path, requested over and over.
    pub fn single(path: String) -> Plan {
        Plan {
            paths: vec![path],
            shapes: Vec::new(),
            steps: vec![Step { target: 0, think: Duration::ZERO }],
            scripts: std::iter::once(0..1).collect(),
        }
    }

    /// One script per session; `sessions` yields `(target, think_ms)` per request and
    /// think times are multiplied by `think_scale` (0 replays without thinking).
    pub fn sessions<S, I>(
        paths: Vec<String>,
        sessions: S,
        think_scale: f64,
    ) -> Result<Plan, BenchError>
    where
        S: IntoIterator<Item = I>,
        I: IntoIterator<Item = (u32, u64)>,
    {
        if !(think_scale.is_finite() && think_scale >= 0.0) {
            return Err(BenchError::Config(format!(
                "think scale must be a finite number >= 0, not {think_scale}"
            )));
        }
        let mut steps = Vec::new();
        let mut scripts = Vec::new();
        for session in sessions {
            let from = steps.len();
            for (i, (target, think_ms)) in session.into_iter().enumerate() {
                let think = if i == 0 {
                    Duration::ZERO
                } else {
                    Duration::from_secs_f64(think_ms as f64 / 1000.0 * think_scale)
                };
                steps.push(Step { target, think });
            }
            if steps.len() > from {
                scripts.push(from..steps.len());
            }
        }
        Plan::checked(paths, steps, scripts)
    }

    /// All requests as one stream in the given order, with no think times.
    pub fn flat(
        paths: Vec<String>,
        targets: impl IntoIterator<Item = u32>,
    ) -> Result<Plan, BenchError> {
        let steps: Vec<Step> =
            targets.into_iter().map(|target| Step { target, think: Duration::ZERO }).collect();
        let scripts = (0..steps.len()).map(|i| i..i + 1).collect();
        Plan::checked(paths, steps, scripts)
    }

    fn checked(
        paths: Vec<String>,
        steps: Vec<Step>,
        scripts: Vec<Range<usize>>,
    ) -> Result<Plan, BenchError> {
        if steps.is_empty() {
            return Err(BenchError::EmptyWorkload);
        }
        if let Some(bad) = steps.iter().find(|s| s.target as usize >= paths.len()) {
            return Err(BenchError::Config(format!(
                "request for target {} but the workload has {} targets",
                bad.target,
                paths.len()
            )));
        }
        Ok(Plan { paths, shapes: Vec::new(), steps, scripts })
    }

    /// This plan with each path's request shape (one per path, in order).
    pub fn with_shapes(self, shapes: Vec<RequestShape>) -> Result<Plan, BenchError> {
        if shapes.len() != self.paths.len() {
            return Err(BenchError::Config(format!(
                "{} request shapes for {} paths",
                shapes.len(),
                self.paths.len()
            )));
        }
        if let Some(bad) = shapes.iter().find_map(|s| s.range.filter(|r| r.last < r.first)) {
            return Err(BenchError::Config(format!(
                "range {}-{} ends before it starts",
                bad.first, bad.last
            )));
        }
        Ok(Plan { shapes, ..self })
    }

    /// What is asked of path `target`.
    pub fn shape(&self, target: u32) -> RequestShape {
        self.shapes.get(target as usize).copied().unwrap_or_default()
    }

    pub fn script_count(&self) -> usize {
        self.scripts.len()
    }

    /// Requests in one pass over all scripts.
    pub fn request_count(&self) -> usize {
        self.steps.len()
    }

    pub fn script(&self, index: usize) -> &[Step] {
        &self.steps[self.scripts[index].clone()]
    }
}

/// Hands out scripts to users in plan order, once per pass; after the last script it
/// starts over when `cycle` is set and reports the end otherwise.
#[derive(Debug)]
pub struct PlanCursor {
    next: AtomicUsize,
    cycle: bool,
}

impl PlanCursor {
    pub fn new(cycle: bool) -> Self {
        PlanCursor { next: AtomicUsize::new(0), cycle }
    }

    /// The index of the next script to play, or `None` when the plan is used up.
    pub fn next_script(&self, plan: &Plan) -> Option<usize> {
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        if self.cycle {
            Some(i % plan.script_count())
        } else {
            (i < plan.script_count()).then_some(i)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("/{i}")).collect()
    }

    #[test]
    fn sessions_scale_think_times_and_drop_empty_sessions() {
        let plan =
            Plan::sessions(paths(2), vec![vec![(0, 0), (1, 2000)], vec![], vec![(1, 5)]], 0.5)
                .unwrap();
        assert_eq!(plan.script_count(), 2);
        assert_eq!(plan.request_count(), 3);
        assert_eq!(plan.script(0)[1], Step { target: 1, think: Duration::from_secs(1) });
        assert_eq!(plan.script(1)[0].think, Duration::ZERO);
    }

    #[test]
    fn rejects_empty_plans_bad_targets_and_bad_scales() {
        assert!(Plan::flat(paths(1), []).is_err());
        assert!(Plan::flat(paths(1), [1]).is_err());
        assert!(Plan::sessions(paths(1), vec![vec![(0, 1)]], -1.0).is_err());
        assert!(Plan::sessions(paths(1), vec![vec![(0, 1)]], f64::NAN).is_err());
    }

    #[test]
    fn shapes_say_which_answers_are_right() {
        let plan = Plan::flat(paths(2), [0, 1]).unwrap();
        assert!(plan.clone().with_shapes(vec![RequestShape::default()]).is_err());
        let backwards = ByteRange { first: 5, last: 4 };
        let bad = RequestShape { range: Some(backwards), object_bytes: None };
        assert!(plan.clone().with_shapes(vec![bad, bad]).is_err());
        let range = RequestShape {
            range: Some(ByteRange { first: 10, last: 19 }),
            object_bytes: Some(100),
        };
        let whole = RequestShape { range: None, object_bytes: Some(100) };
        let plan = plan.with_shapes(vec![range, whole]).unwrap();
        assert_eq!(plan.shape(0), range);
        assert!(range.answered_by(206, 10));
        assert!(!range.answered_by(200, 100), "a range answered with the whole object");
        assert!(!range.answered_by(206, 9));
        assert!(whole.answered_by(200, 100));
        assert!(!whole.answered_by(200, 99));
        assert!(!whole.answered_by(206, 100));
        assert!(RequestShape::default().answered_by(200, 7));
        assert_eq!(Plan::flat(paths(1), [0]).unwrap().shape(0), RequestShape::default());
    }

    #[test]
    fn cursor_plays_each_script_once_or_cycles() {
        let plan = Plan::flat(paths(3), [0, 1, 2]).unwrap();
        let once = PlanCursor::new(false);
        let got: Vec<_> = std::iter::from_fn(|| once.next_script(&plan)).take(10).collect();
        assert_eq!(got, vec![0, 1, 2]);
        let cycle = PlanCursor::new(true);
        let got: Vec<_> = (0..5).map(|_| cycle.next_script(&plan).unwrap()).collect();
        assert_eq!(got, vec![0, 1, 2, 0, 1]);
    }
}

//! Per-user sessions with think times, as DBench (HACC) replayed them: a user is a client
//! host; a session ends after an idle gap; a request's think time is the time since the
//! user's previous request in the same session.
//!
//! Logs record when a request arrived, not when its response finished, so think time
//! here is start-to-start; a replayer should wait `think_ms` after sending the previous
//! request (or after its response, which is then a slightly slower user).

use crate::workload::Workload;

/// Default idle gap that ends a session (30 minutes, the usual web-analytics rule).
pub const DEFAULT_IDLE_GAP_MS: u64 = 30 * 60 * 1000;

/// One request of a session.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SessionRequest {
    /// Index into [`Workload::targets`].
    pub target: u32,
    /// Milliseconds since the start of the workload.
    pub time_ms: u64,
    /// Milliseconds since this user's previous request in the session (0 for the first).
    pub think_ms: u64,
}

/// A run of one user's requests with no idle gap longer than the limit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Session {
    pub client: u32,
    pub requests: Vec<SessionRequest>,
}

impl Session {
    pub fn start_ms(&self) -> u64 {
        self.requests.first().map_or(0, |r| r.time_ms)
    }
}

/// Request indices grouped by client, each group in time order (stable, so equal times
/// keep log order): a counting sort, linear in the requests.
fn timelines(workload: &Workload) -> (Vec<usize>, Vec<u32>) {
    let clients = workload.requests.iter().map(|r| r.client as usize + 1).max().unwrap_or(0);
    let mut starts = vec![0usize; clients + 1];
    for r in &workload.requests {
        starts[r.client as usize + 1] += 1;
    }
    for i in 1..starts.len() {
        starts[i] += starts[i - 1];
    }
    let mut order = vec![0u32; workload.requests.len()];
    let mut next = starts.clone();
    for (i, r) in workload.requests.iter().enumerate() {
        order[next[r.client as usize]] = i as u32;
        next[r.client as usize] += 1;
    }
    for w in starts.windows(2) {
        order[w[0]..w[1]].sort_by_key(|&i| workload.requests[i as usize].time_ms);
    }
    (starts, order)
}

/// Calls `each(client, request indices)` for every session, client by client.
fn for_each_session(workload: &Workload, idle_gap_ms: u64, mut each: impl FnMut(u32, &[u32])) {
    let (starts, order) = timelines(workload);
    for (client, w) in starts.windows(2).enumerate() {
        let timeline = &order[w[0]..w[1]];
        let mut from = 0;
        for i in 1..=timeline.len() {
            let split = i == timeline.len() || {
                let prev = workload.requests[timeline[i - 1] as usize].time_ms;
                workload.requests[timeline[i] as usize].time_ms - prev > idle_gap_ms
            };
            if split {
                each(client as u32, &timeline[from..i]);
                from = i;
            }
        }
    }
}

/// Splits the workload into sessions, ordered by start time (then client). A user's
/// requests are taken in time order even when the log is slightly out of order.
pub fn sessions(workload: &Workload, idle_gap_ms: u64) -> Vec<Session> {
    let mut out = Vec::new();
    for_each_session(workload, idle_gap_ms, |client, indices| {
        let mut prev = None;
        let requests = indices
            .iter()
            .map(|&i| {
                let r = workload.requests[i as usize];
                let think_ms = prev.map_or(0, |p| r.time_ms - p);
                prev = Some(r.time_ms);
                SessionRequest { target: r.target, time_ms: r.time_ms, think_ms }
            })
            .collect();
        out.push(Session { client, requests });
    });
    out.sort_by_key(|s| (s.start_ms(), s.client));
    out
}

/// How many sessions [`sessions`] would return, without building them.
pub fn session_count(workload: &Workload, idle_gap_ms: u64) -> u64 {
    let mut n = 0;
    for_each_session(workload, idle_gap_ms, |_, _| n += 1);
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{TargetInfo, WorkRequest};
    use proptest::prelude::*;

    fn workload(reqs: &[(u32, u64)]) -> Workload {
        Workload {
            targets: vec![TargetInfo { path: "/".into(), size: 1 }],
            requests: reqs
                .iter()
                .map(|&(client, time_ms)| WorkRequest { target: 0, client, time_ms })
                .collect(),
        }
    }

    #[test]
    fn splits_on_gap_and_computes_think_times() {
        let w = workload(&[(0, 0), (1, 5), (0, 10), (0, 40), (0, 35), (1, 200)]);
        let s = sessions(&w, 30);
        let shape: Vec<_> = s
            .iter()
            .map(|s| (s.client, s.requests.iter().map(|r| (r.time_ms, r.think_ms)).collect()))
            .collect::<Vec<(u32, Vec<_>)>>();
        assert_eq!(
            shape,
            vec![
                (0, vec![(0, 0), (10, 10), (35, 25), (40, 5)]),
                (1, vec![(5, 0)]),
                (1, vec![(200, 0)]),
            ]
        );
        assert_eq!(session_count(&w, 30), 3);
        assert_eq!(session_count(&w, 24), 4);
        assert!(sessions(&Workload::default(), 30).is_empty());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        #[test]
        fn sessions_partition_requests_and_respect_the_gap(
            reqs in proptest::collection::vec((0u32..5, 0u64..10_000), 0..60),
            gap in 0u64..3000,
        ) {
            let w = workload(&reqs);
            let s = sessions(&w, gap);
            prop_assert_eq!(s.len() as u64, session_count(&w, gap));
            prop_assert_eq!(s.iter().map(|s| s.requests.len()).sum::<usize>(), reqs.len());
            for session in &s {
                prop_assert_eq!(session.requests[0].think_ms, 0);
                for pair in session.requests.windows(2) {
                    prop_assert!(pair[1].time_ms >= pair[0].time_ms);
                    prop_assert_eq!(pair[1].think_ms, pair[1].time_ms - pair[0].time_ms);
                    prop_assert!(pair[1].think_ms <= gap);
                }
            }
            // Consecutive sessions of one client are separated by more than the gap.
            for client in 0..5 {
                let mine: Vec<_> = s.iter().filter(|x| x.client == client).collect();
                for pair in mine.windows(2) {
                    let end = pair[0].requests.last().unwrap().time_ms;
                    prop_assert!(pair[1].start_ms() - end > gap);
                }
            }
        }
    }
}

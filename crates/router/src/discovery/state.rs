//! Discovery's state machine across rounds, without I/O: each configured name's last
//! good answer, kept through resolver errors and through a round that would leave the
//! router with no node at all; what is worth an event line; when to ask again. Time is
//! passed in. The loop that drives it is `discovery`'s; its `/stats` view is `view`.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use crate::discovery::answers::{Answer, Found};
use crate::discovery::config::DnsName;

/// One configured name and what is known of it.
#[derive(Clone, Debug)]
pub(crate) struct NameState {
    pub spec: DnsName,
    /// The nodes in force: the last good answer.
    pub found: Vec<Found>,
    /// The shortest TTL of the last answer, when the last round got one.
    pub ttl: Option<Duration>,
    pub last_refresh: Option<Instant>,
    pub last_ok: Option<Instant>,
    pub last_error: Option<String>,
    /// The nodes an empty answer replaced in this round, to put back if the round would
    /// leave the router with none.
    replaced: Option<Vec<Found>>,
}

/// Something worth an event line.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Note {
    /// A name could not be resolved; its last nodes stay.
    Failed { name: String, error: String },
    /// A name resolves again.
    Recovered { name: String },
    /// Every answer was empty: the last nodes stay rather than none.
    KeptRatherThanNone { name: String },
}

/// Why a name's last nodes stay although it answered.
const KEPT: &str = "empty answer: the last nodes stay rather than none";

/// Discovery's state across rounds.
#[derive(Debug, Default)]
pub(crate) struct Discovered {
    pub(super) names: Vec<NameState>,
    pub(super) resolver: Option<SocketAddr>,
    pub(super) rounds: u64,
    pub(super) next_at: Option<Instant>,
    /// Nodes left out of the last round by `max_nodes`.
    pub(super) cut: usize,
}

impl Discovered {
    /// Start a round over `names` (the config's, which a reload may have changed) asking
    /// `resolver` (none without names): the state of names still listed is kept, in the
    /// new order.
    pub fn begin(&mut self, names: &[DnsName], resolver: Option<SocketAddr>) {
        let mut old = std::mem::take(&mut self.names);
        self.names = names
            .iter()
            .map(|spec| match old.iter().position(|s| &s.spec == spec) {
                Some(i) => old.swap_remove(i),
                None => NameState {
                    spec: spec.clone(),
                    found: Vec::new(),
                    ttl: None,
                    last_refresh: None,
                    last_ok: None,
                    last_error: None,
                    replaced: None,
                },
            })
            .collect();
        self.resolver = resolver;
    }

    /// What name `i` resolved to at `now`, or why it could not be resolved (its last good
    /// nodes then stay).
    pub fn record(
        &mut self,
        i: usize,
        result: Result<Answer, String>,
        now: Instant,
    ) -> Option<Note> {
        let s = self.names.get_mut(i)?;
        s.last_refresh = Some(now);
        s.replaced = None;
        let name = s.spec.name.clone();
        match result {
            Ok(answer) => {
                s.last_ok = Some(now);
                s.ttl = answer.ttl;
                if answer.found.is_empty() && !s.found.is_empty() {
                    // Whether it stands is decided when every name has answered.
                    s.replaced = Some(std::mem::take(&mut s.found));
                    return None;
                }
                s.found = answer.found;
                s.last_error.take().map(|_| Note::Recovered { name })
            }
            Err(error) => {
                s.ttl = None;
                let repeated = s.last_error.as_deref() == Some(error.as_str());
                s.last_error = Some(error.clone());
                (!repeated).then_some(Note::Failed { name, error })
            }
        }
    }

    /// End the round: if every name answered empty and the config lists `static_nodes`
    /// = 0 nodes of its own, put the last nodes back rather than leave none.
    pub fn finish(&mut self, static_nodes: usize) -> Vec<Note> {
        let total: usize = self.names.iter().map(|s| s.found.len()).sum();
        let mut notes = Vec::new();
        for s in &mut self.names {
            let Some(last) = s.replaced.take() else { continue };
            let name = s.spec.name.clone();
            if total == 0 && static_nodes == 0 {
                s.found = last;
                if s.last_error.as_deref() != Some(KEPT) {
                    s.last_error = Some(KEPT.to_string());
                    notes.push(Note::KeptRatherThanNone { name });
                }
            } else if s.last_error.take().is_some() {
                notes.push(Note::Recovered { name });
            }
        }
        notes
    }

    /// The nodes in force, each with the name that found it: sorted by name, one per
    /// address, at most `max_nodes`.
    pub fn nodes(&mut self, max_nodes: usize) -> Vec<(&DnsName, &Found)> {
        let mut all: Vec<(&DnsName, &Found)> =
            self.names.iter().flat_map(|s| s.found.iter().map(move |f| (&s.spec, f))).collect();
        all.sort_by(|a, b| a.1.name.cmp(&b.1.name));
        let mut seen = Vec::with_capacity(all.len());
        all.retain(|(_, f)| {
            let new = !seen.contains(&f.addr);
            seen.push(f.addr);
            new
        });
        self.cut = all.len().saturating_sub(max_nodes);
        all.truncate(max_nodes);
        all
    }

    /// The shortest TTL of this round's answers.
    pub fn shortest_ttl(&self) -> Option<Duration> {
        self.names.iter().filter_map(|s| s.ttl).min()
    }

    /// The round's nodes are in the membership at `now`; the next round is at `next_at`.
    pub fn applied(&mut self, next_at: Instant) {
        self.rounds += 1;
        self.next_at = Some(next_at);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discovery::answers::tests::found;
    use crate::discovery::config::DnsKind;

    #[test]
    fn a_failed_name_keeps_its_last_nodes_and_says_so_once() {
        let spec = DnsName::new("web", 80, DnsKind::A);
        let mut d = Discovered::default();
        let t0 = Instant::now();
        d.begin(std::slice::from_ref(&spec), "127.0.0.1:53".parse().ok());
        let answer = Answer {
            found: vec![found("web/10.0.0.1", "10.0.0.1:80")],
            ttl: Some(Duration::from_secs(30)),
        };
        assert_eq!(d.record(0, Ok(answer.clone()), t0), None);
        assert!(d.finish(1).is_empty());
        assert_eq!(d.nodes(10).len(), 1);
        assert_eq!(d.shortest_ttl(), Some(Duration::from_secs(30)));

        let t1 = t0 + Duration::from_secs(5);
        d.begin(std::slice::from_ref(&spec), "127.0.0.1:53".parse().ok());
        let note = d.record(0, Err("timed out".into()), t1);
        assert_eq!(note, Some(Note::Failed { name: "web".into(), error: "timed out".into() }));
        assert_eq!(d.record(0, Err("timed out".into()), t1), None, "said once");
        assert!(d.finish(0).is_empty());
        assert_eq!(d.nodes(10)[0].1, &answer.found[0], "the last good answer stays");
        assert_eq!(d.shortest_ttl(), None);
        let status = d.status(t1 + Duration::from_secs(1));
        assert_eq!(status.names[0].last_error.as_deref(), Some("timed out"));
        assert_eq!(status.names[0].last_ok_ms_ago, Some(6000));

        assert_eq!(d.record(0, Ok(answer), t1), Some(Note::Recovered { name: "web".into() }));
    }

    #[test]
    fn empty_answers_never_leave_the_router_without_nodes() {
        let specs = [DnsName::new("a", 80, DnsKind::A), DnsName::new("b", 80, DnsKind::A)];
        let resolver = "127.0.0.1:53".parse().ok();
        let now = Instant::now();
        let one = |name: &str, addr: &str| Answer { found: vec![found(name, addr)], ttl: None };
        let mut d = Discovered::default();
        d.begin(&specs, resolver);
        d.record(0, Ok(one("a/10.0.0.1", "10.0.0.1:80")), now);
        d.record(1, Ok(one("b/10.0.0.2", "10.0.0.2:80")), now);
        d.finish(0);
        // One name empties: applied, the other still has nodes.
        d.begin(&specs, resolver);
        d.record(0, Ok(Answer::default()), now);
        d.record(1, Ok(one("b/10.0.0.2", "10.0.0.2:80")), now);
        assert!(d.finish(0).is_empty());
        assert_eq!(d.nodes(10).len(), 1);
        // Both empty, no static node: the last nodes stay.
        d.begin(&specs, resolver);
        d.record(0, Ok(Answer::default()), now);
        d.record(1, Ok(Answer::default()), now);
        assert_eq!(d.finish(0), vec![Note::KeptRatherThanNone { name: "b".into() }]);
        assert_eq!(d.nodes(10).len(), 1);
        d.begin(&specs, resolver);
        d.record(1, Ok(Answer::default()), now);
        assert!(d.finish(0).is_empty(), "said once");
        assert_eq!(d.nodes(10).len(), 1);
        // With static nodes the empty answer is applied.
        d.begin(&specs, resolver);
        d.record(1, Ok(Answer::default()), now);
        assert_eq!(d.finish(2), vec![Note::Recovered { name: "b".into() }]);
        assert!(d.nodes(10).is_empty());
    }

    #[test]
    fn nodes_are_bounded_and_one_per_address() {
        let specs = [DnsName::new("a", 80, DnsKind::A), DnsName::new("b", 80, DnsKind::A)];
        let mut d = Discovered::default();
        d.begin(&specs, "127.0.0.1:53".parse().ok());
        let now = Instant::now();
        let answer = |names: &[(&str, &str)]| Answer {
            found: names.iter().map(|(n, a)| found(n, a)).collect(),
            ttl: None,
        };
        d.record(0, Ok(answer(&[("a/1", "10.0.0.1:80"), ("a/2", "10.0.0.2:80")])), now);
        d.record(1, Ok(answer(&[("b/1", "10.0.0.1:80"), ("b/3", "10.0.0.3:80")])), now);
        let names: Vec<String> = d.nodes(10).iter().map(|(_, f)| f.name.clone()).collect();
        assert_eq!(names, ["a/1", "a/2", "b/3"]);
        assert_eq!(d.nodes(2).len(), 2);
        assert_eq!(d.status(now).nodes_cut_by_max_nodes, 1);
    }
}

//! Whether this router's picks land where the target is: the share of its recent picks
//! that went to a node holding the target by that node's own report. With one placement
//! across many routers, every router's share is high once caches are warm; routers that
//! each keep their own table send a target to nodes that do not hold it.
//!
//! Counted in two windows of [`WINDOW`] (the share covers the current and the previous
//! one, so it never drops to nothing at a boundary); time is passed in.

use policy::Nanos;

/// Length of one counting window.
pub(crate) const WINDOW: Nanos = 5_000_000_000;

#[derive(Copy, Clone, Debug, Default)]
struct Counts {
    /// Picks of a node that reports what it holds.
    reported: u64,
    /// Of those, picks of a node that holds the target.
    on_holder: u64,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Agreement {
    window: u64,
    current: Counts,
    previous: Counts,
}

impl Agreement {
    /// One pick at `now`: `holds` is the picked node's report on the target (`None` when
    /// it reports nothing).
    pub(crate) fn record(&mut self, holds: Option<bool>, now: Nanos) {
        let Some(holds) = holds else { return };
        self.roll(now);
        self.current.reported += 1;
        self.current.on_holder += u64::from(holds);
    }

    fn roll(&mut self, now: Nanos) {
        let window = now / WINDOW;
        if window != self.window {
            self.previous =
                if window == self.window + 1 { self.current } else { Counts::default() };
            self.current = Counts::default();
            self.window = window;
        }
    }

    /// Picks counted over the last one or two windows and the share on holders (`None`
    /// before any pick of a reporting node).
    pub(crate) fn share(&self, now: Nanos) -> (u64, Option<f64>) {
        let mut copy = self.clone();
        copy.roll(now);
        let reported = copy.current.reported + copy.previous.reported;
        let on_holder = copy.current.on_holder + copy.previous.on_holder;
        (reported, (reported > 0).then(|| on_holder as f64 / reported as f64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_reporting_picks_over_two_windows() {
        let mut a = Agreement::default();
        assert_eq!(a.share(0), (0, None));
        a.record(None, 0);
        assert_eq!(a.share(0), (0, None), "nodes that report nothing do not count");
        a.record(Some(true), 1);
        a.record(Some(false), 2);
        assert_eq!(a.share(3), (2, Some(0.5)));
        a.record(Some(true), WINDOW + 1);
        assert_eq!(a.share(WINDOW + 2), (3, Some(2.0 / 3.0)), "the previous window counts");
        assert_eq!(a.share(2 * WINDOW + 2), (1, Some(1.0)));
        assert_eq!(a.share(5 * WINDOW), (0, None), "old picks are forgotten");
    }
}

//! One latency percentile over several load generators' reports (clients spread over the
//! addresses of a cluster with no front-end, one generator each): the distribution of all
//! their requests is the mixture of theirs, each weighted by its requests.

/// The latency (ms) below which `percentile` % of all requests of `parts` fell: each part
/// its requests and its `[percentile, ms]` points (ascending, as a report gives them).
/// Each part's share below a latency is read from its points as a step (the highest
/// percentile whose latency is at most it), so the answer is one of the parts' points.
/// NaN when no part has a request.
pub fn percentile(parts: &[(u64, &[(f64, f64)])], percentile: f64) -> f64 {
    let total: u64 = parts.iter().map(|&(n, _)| n).sum();
    if total == 0 {
        return f64::NAN;
    }
    let below = |ms: f64| -> f64 {
        parts
            .iter()
            .map(|&(n, points)| {
                let p =
                    points.iter().filter(|&&(_, v)| v <= ms).map(|&(p, _)| p).fold(0.0, f64::max);
                n as f64 * p
            })
            .sum::<f64>()
            / total as f64
    };
    let mut candidates: Vec<f64> = parts
        .iter()
        .filter(|&&(n, _)| n > 0)
        .flat_map(|&(_, p)| p.iter().map(|&(_, v)| v))
        .collect();
    candidates.sort_by(f64::total_cmp);
    candidates.into_iter().find(|&ms| below(ms) >= percentile).unwrap_or(f64::NAN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_part_is_its_own_distribution() {
        let points = [(50.0, 1.0), (90.0, 2.0), (99.0, 5.0), (100.0, 9.0)];
        assert_eq!(percentile(&[(10, &points)], 99.0), 5.0);
        assert_eq!(percentile(&[(10, &points)], 50.0), 1.0);
        assert_eq!(percentile(&[(10, &points)], 100.0), 9.0);
    }

    #[test]
    fn parts_weigh_by_their_requests() {
        let fast = [(50.0, 1.0), (99.0, 2.0), (100.0, 3.0)];
        let slow = [(50.0, 10.0), (99.0, 20.0), (100.0, 30.0)];
        // Equal parts: below 20 ms lie all of the fast part's and 99 % of the slow's.
        assert_eq!(percentile(&[(100, &fast), (100, &slow)], 99.0), 20.0);
        assert_eq!(percentile(&[(100, &fast), (100, &slow)], 50.0), 3.0);
        // A slow part of 1 % of the requests is the mixture's top percent.
        assert_eq!(percentile(&[(990, &fast), (10, &slow)], 99.0), 3.0);
        // A part without requests counts for nothing; none at all is no figure.
        assert_eq!(percentile(&[(10, &fast), (0, &slow)], 99.0), 2.0);
        assert!(percentile(&[(0, &fast)], 99.0).is_nan());
    }
}

//! Measured runs grouped for tables: by a key (a workload, a scenario), then by system,
//! both in the order first seen: the order of the first round (later rounds may reverse it).

/// One key's items by system, in first-seen order.
pub type BySystem<'a, T> = Vec<(&'a str, Vec<&'a T>)>;

/// `items` by `key`, then by `system`, each in first-seen order.
pub fn by_key_then_system<'a, T, K: PartialEq>(
    items: &'a [T],
    key: impl Fn(&'a T) -> K,
    system: impl Fn(&'a T) -> &'a str,
) -> Vec<(K, BySystem<'a, T>)> {
    let mut out: Vec<(K, BySystem<'a, T>)> = Vec::new();
    for item in items {
        let k = key(item);
        let at = match out.iter().position(|(seen, _)| *seen == k) {
            Some(i) => i,
            None => {
                out.push((k, Vec::new()));
                out.len() - 1
            }
        };
        let systems = &mut out[at].1;
        let s = system(item);
        match systems.iter_mut().find(|(seen, _)| *seen == s) {
            Some((_, runs)) => runs.push(item),
            None => systems.push((s, vec![item])),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_keep_the_order_first_seen() {
        let runs = [("b", "x"), ("a", "y"), ("b", "y"), ("b", "x"), ("a", "y")];
        let g = by_key_then_system(&runs, |r| r.0, |r| r.1);
        let shape: Vec<(&str, Vec<(&str, usize)>)> =
            g.iter().map(|(k, s)| (*k, s.iter().map(|(n, v)| (*n, v.len())).collect())).collect();
        assert_eq!(shape, [("b", vec![("x", 2), ("y", 1)]), ("a", vec![("y", 2)])]);
    }
}

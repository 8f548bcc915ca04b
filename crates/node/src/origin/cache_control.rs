//! The `Cache-Control` directives of a response that a shared cache acts on (RFC 9111
//! §5.2.2, and `stale-while-revalidate` and `stale-if-error` from RFC 5861). Unknown directives are ignored, as the
//! RFC requires; a directive given twice keeps its first value.

/// The directives found in every `Cache-Control` field of one response.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Directives {
    pub max_age: Option<u64>,
    pub s_maxage: Option<u64>,
    pub no_store: bool,
    /// `no-cache`, with or without field names (both are treated as the unqualified form).
    pub no_cache: bool,
    /// `private`, with or without field names (a shared cache stores neither).
    pub private: bool,
    pub public: bool,
    pub must_revalidate: bool,
    pub proxy_revalidate: bool,
    /// RFC 5861: seconds past expiry a stale response may stand in for an origin error.
    pub stale_if_error: Option<u64>,
    /// RFC 5861: seconds past expiry a stale response may be served while it is refreshed.
    pub stale_while_revalidate: Option<u64>,
}

impl Directives {
    /// Parse every value of the `Cache-Control` fields of one message.
    pub fn parse<'a>(values: impl IntoIterator<Item = &'a [u8]>) -> Directives {
        let mut d = Directives::default();
        for value in values {
            let Ok(text) = std::str::from_utf8(value) else {
                continue;
            };
            for item in split_outside_quotes(text) {
                let (name, arg) = match item.split_once('=') {
                    Some((n, a)) => (n.trim(), Some(a.trim().trim_matches('"'))),
                    None => (item.trim(), None),
                };
                let secs = || arg.and_then(delta_seconds);
                match name.to_ascii_lowercase().as_str() {
                    "max-age" => d.max_age = d.max_age.or_else(secs),
                    "s-maxage" => d.s_maxage = d.s_maxage.or_else(secs),
                    "stale-if-error" => d.stale_if_error = d.stale_if_error.or_else(secs),
                    "stale-while-revalidate" => {
                        d.stale_while_revalidate = d.stale_while_revalidate.or_else(secs)
                    }
                    "no-store" => d.no_store = true,
                    "no-cache" => d.no_cache = true,
                    "private" => d.private = true,
                    "public" => d.public = true,
                    "must-revalidate" => d.must_revalidate = true,
                    "proxy-revalidate" => d.proxy_revalidate = true,
                    _ => {}
                }
            }
        }
        d
    }
}

/// RFC 9111 §1.2.2: a non-negative integer of seconds; values too large to hold mean
/// "a very long time" (2^31), not an error.
fn delta_seconds(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(s.parse::<u64>().unwrap_or(u64::MAX).min(1 << 31))
}

/// Comma-separated items, where commas inside a quoted string (`no-cache="a, b"`) do not
/// separate.
fn split_outside_quotes(s: &str) -> impl Iterator<Item = &str> {
    let mut items = Vec::new();
    let (mut start, mut quoted) = (0, false);
    for (i, c) in s.char_indices() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => {
                items.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&s[start..]);
    items.into_iter().filter(|i| !i.trim().is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(values: &[&str]) -> Directives {
        Directives::parse(values.iter().map(|v| v.as_bytes()))
    }

    #[test]
    fn directives_across_fields() {
        let d = parse(&["public, max-age=60", "S-MAXAGE=\"30\", must-revalidate, x-ext=1"]);
        assert_eq!((d.max_age, d.s_maxage), (Some(60), Some(30)));
        assert!(d.public && d.must_revalidate && !d.no_store && !d.private);
        let d = parse(&["no-cache=\"Set-Cookie, X-A\", private", "stale-if-error=120"]);
        assert!(d.no_cache && d.private);
        assert_eq!(d.stale_if_error, Some(120));
        let d = parse(&["max-age=0, Stale-While-Revalidate=600", "stale-while-revalidate=1"]);
        assert_eq!((d.max_age, d.stale_while_revalidate), (Some(0), Some(600)));
        assert_eq!(parse(&["stale-while-revalidate"]).stale_while_revalidate, None);
    }

    #[test]
    fn bad_and_huge_values() {
        assert_eq!(parse(&["max-age=-1"]).max_age, None);
        assert_eq!(parse(&["max-age=abc, max-age=5"]).max_age, Some(5));
        assert_eq!(parse(&["max-age=99999999999999999999999"]).max_age, Some(1 << 31));
        assert_eq!(parse(&["max-age=1, max-age=2"]).max_age, Some(1));
        assert_eq!(parse(&["", " , "]), Directives::default());
    }
}

//! The `Cache-Control` directives of a response that a shared cache acts on (RFC 9111
//! §5.2.2, and `stale-while-revalidate` and `stale-if-error` from RFC 5861). Unknown directives are ignored, as the
//! RFC requires; a directive given twice keeps its first value.
//!
//! The targeted fields of RFC 9213 (`CDN-Cache-Control`, `Larder-Cache-Control`) carry the
//! same directives as a Structured Field Dictionary (RFC 8941): [`Directives::targeted`]
//! parses them strictly, an invalid field being ignored as a whole (RFC 9213 §2.1).

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
                let secs = arg.and_then(delta_seconds);
                d.set(&name.to_ascii_lowercase(), secs, true, true);
            }
        }
        d
    }

    /// Record the directive `name` (lower-case): `secs` for those with a number (the one
    /// already recorded is kept when `keep_first`, as in `Cache-Control`, else replaced,
    /// as in a dictionary), `on` for flags.
    fn set(&mut self, name: &str, secs: Option<u64>, on: bool, keep_first: bool) {
        let number = |old: Option<u64>| if keep_first { old.or(secs) } else { secs };
        match name {
            "max-age" => self.max_age = number(self.max_age),
            "s-maxage" => self.s_maxage = number(self.s_maxage),
            "stale-if-error" => self.stale_if_error = number(self.stale_if_error),
            "stale-while-revalidate" => {
                self.stale_while_revalidate = number(self.stale_while_revalidate)
            }
            "no-store" => self.no_store = on,
            "no-cache" => self.no_cache = on,
            "private" => self.private = on,
            "public" => self.public = on,
            "must-revalidate" => self.must_revalidate = on,
            "proxy-revalidate" => self.proxy_revalidate = on,
            _ => {}
        }
    }

    /// The directives of a targeted field (RFC 9213) given as its field lines, or `None`
    /// when they do not form a valid Structured Field Dictionary (the cache then ignores
    /// the field). In a dictionary a key given twice keeps its last value; a directive
    /// whose value has the wrong type (`max-age="10"`) is ignored, and `?0` unsets a flag.
    pub fn targeted<'a>(lines: impl IntoIterator<Item = &'a [u8]>) -> Option<Directives> {
        let joined: Vec<u8> = lines.into_iter().collect::<Vec<_>>().join(&b", "[..]);
        let mut d = Directives::default();
        for (key, item) in sf_dictionary(&joined)? {
            let secs = match item {
                Item::Integer(n) if n >= 0 => Some((n as u64).min(1 << 31)),
                _ => None,
            };
            d.set(&key, secs, item != Item::False, false);
        }
        Some(d)
    }
}

/// The part of a Structured Field bare item (RFC 8941 §3.3) the directives look at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Item {
    Integer(i64),
    False,
    Other,
}

/// RFC 8941 §4.2.2: the members of a Dictionary (parameters checked and dropped), or
/// `None` when the text is not one.
fn sf_dictionary(s: &[u8]) -> Option<Vec<(String, Item)>> {
    let mut p = Parser { s, i: 0 };
    let mut members = Vec::new();
    p.skip(b" ");
    if p.done() {
        return Some(members);
    }
    loop {
        let key = p.key()?;
        let item = if p.eat(b'=') { p.bare_item()? } else { Item::Other };
        while p.eat(b';') {
            p.skip(b" ");
            p.key()?;
            if p.eat(b'=') {
                p.bare_item()?;
            }
        }
        members.push((key, item));
        p.skip(b" \t");
        if p.done() {
            return Some(members);
        }
        if !p.eat(b',') {
            return None;
        }
        p.skip(b" \t");
        if p.done() {
            return None;
        }
    }
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn done(&self) -> bool {
        self.i >= self.s.len()
    }

    fn eat(&mut self, b: u8) -> bool {
        let hit = self.peek() == Some(b);
        self.i += usize::from(hit);
        hit
    }

    fn skip(&mut self, set: &[u8]) {
        while self.peek().is_some_and(|b| set.contains(&b)) {
            self.i += 1;
        }
    }

    /// Bytes while `ok` holds, from here.
    fn take(&mut self, ok: impl Fn(u8) -> bool) -> &[u8] {
        let start = self.i;
        while self.peek().is_some_and(&ok) {
            self.i += 1;
        }
        &self.s[start..self.i]
    }

    fn key(&mut self) -> Option<String> {
        if !self.peek().is_some_and(|b| b.is_ascii_lowercase() || b == b'*') {
            return None;
        }
        let k = self.take(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"_-.*".contains(&b));
        Some(String::from_utf8_lossy(k).into_owned())
    }

    fn bare_item(&mut self) -> Option<Item> {
        match self.peek()? {
            b'-' | b'0'..=b'9' => self.number(),
            b'"' => {
                self.i += 1;
                loop {
                    match self.peek()? {
                        b'"' => break,
                        b'\\' => {
                            self.i += 1;
                            if !matches!(self.peek()?, b'"' | b'\\') {
                                return None;
                            }
                        }
                        0x20..=0x7e => {}
                        _ => return None,
                    }
                    self.i += 1;
                }
                self.i += 1;
                Some(Item::Other)
            }
            b'?' => {
                self.i += 1;
                let b = self.peek()?;
                self.i += 1;
                match b {
                    b'0' => Some(Item::False),
                    b'1' => Some(Item::Other),
                    _ => None,
                }
            }
            b':' => {
                self.i += 1;
                self.take(|b| b.is_ascii_alphanumeric() || b"+/=".contains(&b));
                self.eat(b':').then_some(Item::Other)
            }
            b if b.is_ascii_alphabetic() || b == b'*' => {
                let tchar = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~:/".contains(&b);
                self.take(tchar);
                Some(Item::Other)
            }
            _ => None,
        }
    }

    /// An Integer (at most 15 digits) or a Decimal (12 digits, a dot, 1 to 3 digits).
    fn number(&mut self) -> Option<Item> {
        let negative = self.eat(b'-');
        let int = self.take(|b| b.is_ascii_digit()).to_vec();
        if int.is_empty() {
            return None;
        }
        if self.eat(b'.') {
            let frac = self.take(|b| b.is_ascii_digit()).len();
            return (int.len() <= 12 && (1..=3).contains(&frac)).then_some(Item::Other);
        }
        if int.len() > 15 {
            return None;
        }
        let n: i64 = std::str::from_utf8(&int).ok()?.parse().ok()?;
        Some(Item::Integer(if negative { -n } else { n }))
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

    fn targeted(values: &[&str]) -> Option<Directives> {
        Directives::targeted(values.iter().map(|v| v.as_bytes()))
    }

    #[test]
    fn targeted_fields_are_structured_dictionaries() {
        let d = targeted(&["foobar, max-age=3600", "no-cache;x=1, private=?0"]).unwrap();
        assert_eq!(d.max_age, Some(3600));
        assert!(d.no_cache && !d.private);
        assert_eq!(targeted(&["max-age=99999999999"]).unwrap().max_age, Some(1 << 31));
        assert_eq!(targeted(&["max-age=\"10000\""]).unwrap().max_age, None, "wrong type");
        assert_eq!(targeted(&["max-age=1, max-age=5"]).unwrap().max_age, Some(5), "last wins");
        assert_eq!(targeted(&["max-age=-1"]).unwrap().max_age, None);
        assert!(targeted(&["s-maxage=1.5, x=:aGk=:, y=tok/en, z=?1"]).is_some());
        assert_eq!(targeted(&[""]), Some(Directives::default()));
        for invalid in
            ["max-age=10000, &&&&&", "MaX-aGe=3600", "max-age =100", "max-age= 100", "a,", "a=?2"]
        {
            assert_eq!(targeted(&[invalid]), None, "{invalid}");
        }
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

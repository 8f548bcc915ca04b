//! URL → [`Target`]: the strict rule for when two request targets are "the same thing".
//!
//! Locality only pays if every router names a target the same way, so the rule is fixed:
//!
//! 1. The request target is origin-form (`/path?query`) or absolute-form
//!    (`scheme://authority/path?query`; the authority is dropped: one site per router).
//!    Asterisk- and authority-form, bytes outside visible ASCII, `#`, and targets longer
//!    than [`MapperConfig::max_uri_len`] are rejected.
//! 2. The path is split on `/`; empty segments vanish (so `//` collapses). Each segment is
//!    percent-decoded; a malformed escape, an encoded NUL or invalid UTF-8 is rejected. An
//!    encoded `/` (`%2F`) never becomes a separator: it stays a literal `%2F` in its segment.
//! 3. `.` segments vanish and `..` removes the previous segment, never climbing above the
//!    root (`%2E%2E` counts as `..`, so encoding cannot smuggle a traversal through).
//! 4. Segments are re-spelled canonically (see [`crate::percent`]), so the normalised path
//!    is ASCII and maps to itself. A trailing `/` is kept: `/a/` (a directory) is not `/a`.
//! 5. The key is FNV-1a 64 ([`crate::stable_hash`]) of the normalised path; the query is
//!    part of it only with [`MapperConfig::query_in_key`]. A [`ViewRule`] cuts the key
//!    short: Domino's `/db.nsf/view/doc?OpenDocument` and larder node's
//!    `/app/<db>/<view>/<doc>` are keyed by their view (`/db.nsf/view`, `/app/<db>/<view>`),
//!    never by the query.
//! 6. A directory's key is its segments spelled with a trailing `/` (`/a/b/c.html` lies in
//!    `/`, `/a/` and `/a/b/`). With a fixed [`MapperConfig::tree_depth`] the tree is the
//!    directory of the first that many segments (`/a/b/c.html` at depth 1 is tree `/a/`;
//!    `/x.html` is tree `/`) and the only subtree offered. Without one (the default) the
//!    subtrees are the root, every enclosing directory (up to [`crate::TREE_LEVELS`] − 2
//!    levels below the root) and the target itself, coarsest first, so HACC can split a
//!    hot subtree; the tree is then the deepest of those directories. The class comes from
//!    the first matching [`ClassRule`], else class 0.

use crate::percent::{encode_segment, is_literal};
use crate::stable_hash::Fnv1a;
use crate::{ClassId, Target, TargetKey, TreePath, TREE_LEVELS};

/// Which paths a rule applies to. Both forms compare whole normalised segments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathMatch {
    /// The path's leading segments are these, written as a normalised path (`/app`,
    /// `/cgi-bin`); `/app` matches `/app` and `/app/x` but not `/application`.
    Prefix(String),
    /// Some segment's extension (after its last `.`) is this, ignoring ASCII case and a
    /// leading `.`: `nsf` matches `/db.NSF/view` and `cgi` matches `/x.cgi/path-info`.
    Extension(String),
}

/// Requests matching `matcher` are one target per view: the key covers the matched
/// segments plus `levels` more (`Extension("nsf")`, 1: `/db.nsf/view`;
/// `Prefix("/app")`, 2: `/app/<db>/<view>`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ViewRule {
    pub matcher: PathMatch,
    pub levels: usize,
}

/// Paths matching `matcher` belong to `class` (for separate node pools).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassRule {
    pub matcher: PathMatch,
    pub class: ClassId,
}

/// How the mapper names targets. The default suits static files plus larder node's and
/// Domino's dynamic URLs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MapperConfig {
    /// Longest request target accepted, in bytes (default 8192, as common servers allow).
    pub max_uri_len: usize,
    /// Make the query part of a (non-view) target's key. Off by default: a static file is
    /// the same bytes whatever the query says.
    pub query_in_key: bool,
    /// Directory segments in a target's tree, fixed (`/a/…` is one subtree at depth 1);
    /// `None` (the default): subtrees at every depth, split and merged by load (HACC).
    pub tree_depth: Option<usize>,
    /// Tried in order; the first match keys the target by its view.
    pub view_rules: Vec<ViewRule>,
    /// Tried in order; the first match sets the class, else [`ClassId::DEFAULT`].
    pub class_rules: Vec<ClassRule>,
}

impl Default for MapperConfig {
    fn default() -> Self {
        let dynamic = |matcher| ClassRule { matcher, class: ClassId::DYNAMIC };
        let ext = |e: &str| PathMatch::Extension(e.to_string());
        let app = || PathMatch::Prefix("/app".to_string());
        MapperConfig {
            max_uri_len: 8192,
            query_in_key: false,
            tree_depth: None,
            view_rules: vec![
                ViewRule { matcher: ext("nsf"), levels: 1 },
                ViewRule { matcher: app(), levels: 2 },
            ],
            class_rules: vec![
                dynamic(app()),
                dynamic(ext("nsf")),
                dynamic(ext("cgi")),
                dynamic(ext("php")),
                dynamic(ext("asp")),
            ],
        }
    }
}

/// Why a request target has no [`Target`]. Positions are byte offsets into the target.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    #[error("empty request target")]
    Empty,
    #[error("request target is {len} bytes, longer than the limit of {max}")]
    TooLong { len: usize, max: usize },
    #[error("byte 0x{byte:02x} at {at} is not allowed in a request target")]
    InvalidByte { byte: u8, at: usize },
    #[error(
        "request target is neither origin-form (/path) nor absolute-form (scheme://host/path)"
    )]
    UnsupportedForm,
    #[error("absolute-form request target has an empty authority")]
    EmptyAuthority,
    #[error("malformed percent-escape at {at}")]
    BadEscape { at: usize },
    #[error("percent-encoded NUL at {at}")]
    EncodedNul { at: usize },
    #[error("path segment at {at} is not UTF-8 once decoded")]
    InvalidUtf8 { at: usize },
}

/// A mapped request: its target and the normalised path (ASCII, without the query), which
/// maps to the same target again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mapped {
    pub target: Target,
    pub path: String,
}

/// Maps request targets to [`Target`]s by the rule in the module documentation.
#[derive(Clone, Debug)]
pub struct TargetMapper {
    max_uri_len: usize,
    query_in_key: bool,
    tree_depth: Option<usize>,
    views: Vec<(Matcher, usize)>,
    classes: Vec<(Matcher, ClassId)>,
}

impl Default for TargetMapper {
    fn default() -> Self {
        TargetMapper::new(MapperConfig::default())
    }
}

impl TargetMapper {
    pub fn new(config: MapperConfig) -> Self {
        TargetMapper {
            max_uri_len: config.max_uri_len,
            query_in_key: config.query_in_key,
            tree_depth: config.tree_depth,
            views: config.view_rules.iter().map(|r| (Matcher::new(&r.matcher), r.levels)).collect(),
            classes: config
                .class_rules
                .iter()
                .map(|r| (Matcher::new(&r.matcher), r.class))
                .collect(),
        }
    }

    /// Map one request target (the second word of the request line) to its [`Target`].
    pub fn map(&self, uri: &[u8]) -> Result<Mapped, TargetError> {
        let mut path = String::new();
        let target = self.map_into(uri, &mut path)?;
        Ok(Mapped { target, path })
    }

    /// [`TargetMapper::map`] writing the normalised path into `path` (cleared first), so a
    /// caller mapping a request after another (the router, per connection) reuses one
    /// buffer instead of allocating a path per request.
    pub fn map_into(&self, uri: &[u8], path: &mut String) -> Result<Target, TargetError> {
        if uri.is_empty() {
            return Err(TargetError::Empty);
        }
        if uri.len() > self.max_uri_len {
            return Err(TargetError::TooLong { len: uri.len(), max: self.max_uri_len });
        }
        if let Some(at) = uri.iter().position(|&b| !(0x21..=0x7e).contains(&b) || b == b'#') {
            return Err(TargetError::InvalidByte { byte: uri[at], at });
        }
        let (before_query, query) = match uri.iter().position(|&b| b == b'?') {
            Some(q) => (&uri[..q], &uri[q + 1..]),
            None => (uri, &uri[uri.len()..]),
        };
        let path_at = path_start(before_query)?;
        normalise(&before_query[path_at..], path_at, path)?;
        let path = NormalPath::new(path);

        let view = self.views.iter().find_map(|(m, levels)| {
            m.matched_len(&path).map(|len| len.saturating_add(*levels).min(path.len()))
        });
        let key = match view {
            Some(len) => path.prefix_hash(len, false),
            None => {
                let mut h = Fnv1a::new();
                h.write(path.text.as_bytes());
                if self.query_in_key && !query.is_empty() {
                    h.write(b"?").write(query);
                }
                h.finish()
            }
        };
        let dir = |n: usize| TargetKey(path.prefix_hash(n, true));
        let (tree, subtrees) = match self.tree_depth {
            Some(depth) => {
                let tree = dir(depth.min(path.dir_len()));
                (tree, TreePath::single(tree))
            }
            None => {
                let deepest = path.dir_len().min(TREE_LEVELS - 2);
                let mut subtrees = TreePath::default();
                for n in 0..=deepest {
                    subtrees.push(dir(n));
                }
                let tree = dir(deepest);
                if tree.0 != key {
                    subtrees.push(TargetKey(key));
                }
                (tree, subtrees)
            }
        };
        let class = self
            .classes
            .iter()
            .find(|(m, _)| m.matched_len(&path).is_some())
            .map_or(ClassId::DEFAULT, |&(_, class)| class);
        Ok(Target { key: TargetKey(key), tree, subtrees, class })
    }
}

/// Offset of the path in the part before the query: 0 for origin-form, after the
/// authority for absolute-form.
fn path_start(target: &[u8]) -> Result<usize, TargetError> {
    if target.first() == Some(&b'/') {
        return Ok(0);
    }
    let sep = target.windows(3).position(|w| w == b"://").ok_or(TargetError::UnsupportedForm)?;
    let scheme = &target[..sep];
    let scheme_ok = scheme.first().is_some_and(u8::is_ascii_alphabetic)
        && scheme.iter().all(|&b| b.is_ascii_alphanumeric() || b"+-.".contains(&b));
    if !scheme_ok {
        return Err(TargetError::UnsupportedForm);
    }
    let authority_at = sep + 3;
    let path_at = target[authority_at..]
        .iter()
        .position(|&b| b == b'/')
        .map_or(target.len(), |p| authority_at + p);
    if path_at == authority_at {
        return Err(TargetError::EmptyAuthority);
    }
    Ok(path_at)
}

/// Whether `raw` (empty or starting with `/`) is already its own normal form: every byte
/// spelled canonically (no escapes at all), no empty segment but a trailing one, no `.` or
/// `..` segment. Most request targets are, and they skip decoding and re-encoding.
fn is_normal(raw: &[u8]) -> bool {
    let Some(rest) = raw.strip_prefix(b"/") else { return false };
    let mut segments = rest.split(|&b| b == b'/').peekable();
    while let Some(seg) = segments.next() {
        let last = segments.peek().is_none();
        let special = matches!(seg, b"." | b"..") || (seg.is_empty() && !last);
        if special || !seg.iter().all(|&b| is_literal(b)) {
            return false;
        }
    }
    true
}

/// Write the normal form of `raw` (empty or starting with `/`, at byte `at` of the target)
/// into `text`: `/seg/seg[/]`, or `/` for the root.
fn normalise(raw: &[u8], at: usize, text: &mut String) -> Result<(), TargetError> {
    text.clear();
    if is_normal(raw) {
        // Only visible ASCII reaches here (checked by the caller), so this is UTF-8.
        text.push_str(std::str::from_utf8(raw).map_err(|_| TargetError::InvalidUtf8 { at })?);
        return Ok(());
    }
    let mut starts: Vec<usize> = Vec::new();
    let mut dir = true;
    let mut decoded = Vec::new();
    let mut offset = at;
    for seg in raw.split(|&b| b == b'/') {
        let seg_at = offset;
        offset += seg.len() + 1;
        if seg.is_empty() {
            dir = true;
            continue;
        }
        decode_segment(seg, seg_at, &mut decoded)?;
        let s =
            std::str::from_utf8(&decoded).map_err(|_| TargetError::InvalidUtf8 { at: seg_at })?;
        dir = matches!(s, "." | "..");
        match s {
            "." => {}
            ".." => {
                if let Some(start) = starts.pop() {
                    text.truncate(start - 1);
                }
            }
            _ => {
                text.push('/');
                starts.push(text.len());
                encode_segment(s, text);
            }
        }
    }
    if starts.is_empty() || dir {
        text.push('/');
    }
    Ok(())
}

/// Decode one raw segment (`raw` starts at byte `at` of the request target) into `out`.
/// Rejects malformed escapes and an encoded NUL; the caller checks UTF-8.
fn decode_segment(raw: &[u8], at: usize, out: &mut Vec<u8>) -> Result<(), TargetError> {
    out.clear();
    for unit in wire::percent::units(raw) {
        let unit = unit.map_err(|e| TargetError::BadEscape { at: at + e.at })?;
        if unit.escaped && unit.byte == 0 {
            return Err(TargetError::EncodedNul { at: at + unit.at });
        }
        out.push(unit.byte);
    }
    Ok(())
}

/// Segment ends held inline: paths with more segments than this spill to the heap, all
/// others are indexed without allocating.
const INLINE_SEGMENTS: usize = 16;

/// A normalised path and where its segments end, so keys of leading segments are slices.
struct NormalPath<'a> {
    /// `/seg/seg[/]`, or `/` for the root.
    text: &'a str,
    /// End offset in `text` of each segment: `inline` up to [`INLINE_SEGMENTS`], then
    /// `spill` for the rest.
    inline: [usize; INLINE_SEGMENTS],
    spill: Vec<usize>,
    len: usize,
    /// The path names a directory (ends in `/`).
    dir: bool,
}

impl<'a> NormalPath<'a> {
    fn new(text: &'a str) -> Self {
        let dir = text.ends_with('/');
        let mut path =
            NormalPath { text, inline: [0; INLINE_SEGMENTS], spill: Vec::new(), len: 0, dir };
        // Every `/` but a trailing one ends the segment before the next.
        let bytes = text.as_bytes();
        for at in (1..bytes.len()).filter(|&i| bytes[i] == b'/') {
            path.push_end(at);
        }
        if !dir {
            path.push_end(bytes.len());
        }
        path
    }

    fn push_end(&mut self, end: usize) {
        match self.inline.get_mut(self.len) {
            Some(slot) => *slot = end,
            None => self.spill.push(end),
        }
        self.len += 1;
    }

    fn end(&self, i: usize) -> usize {
        match self.inline.get(i) {
            Some(&end) => end,
            None => self.spill[i - INLINE_SEGMENTS],
        }
    }

    fn len(&self) -> usize {
        self.len
    }

    /// Segments that are directories: all of them for `/a/b/`, all but the file otherwise.
    fn dir_len(&self) -> usize {
        if self.dir {
            self.len()
        } else {
            self.len().saturating_sub(1)
        }
    }

    fn segment(&self, i: usize) -> &'a str {
        let start = if i == 0 { 1 } else { self.end(i - 1) + 1 };
        &self.text[start..self.end(i)]
    }

    /// Key of the first `n` segments, with a trailing `/` when `as_dir`; `/` for none.
    fn prefix_hash(&self, n: usize, as_dir: bool) -> u64 {
        let mut h = Fnv1a::new();
        if n == 0 {
            return h.write(b"/").finish();
        }
        h.write(&self.text.as_bytes()[..self.end(n - 1)]);
        if as_dir {
            h.write(b"/");
        }
        h.finish()
    }
}

/// A [`PathMatch`] prepared for matching.
#[derive(Clone, Debug)]
enum Matcher {
    Prefix(Vec<String>),
    /// `.` and the extension: a segment matches when it ends with this and has more before
    /// it. `None` for an extension that itself holds a `.`, which no segment's text after
    /// its last `.` can equal.
    Extension(Option<String>),
}

impl Matcher {
    fn new(m: &PathMatch) -> Matcher {
        match m {
            PathMatch::Prefix(p) => Matcher::Prefix(
                p.split('/').filter(|s| !s.is_empty()).map(str::to_string).collect(),
            ),
            PathMatch::Extension(e) => {
                let e = e.trim_start_matches('.');
                Matcher::Extension((!e.contains('.')).then(|| format!(".{e}")))
            }
        }
    }

    /// How many leading segments the match covers, or `None` when it does not match.
    fn matched_len(&self, path: &NormalPath<'_>) -> Option<usize> {
        match self {
            Matcher::Prefix(segs) => (segs.len() <= path.len()
                && segs.iter().enumerate().all(|(i, s)| path.segment(i) == s))
            .then_some(segs.len()),
            Matcher::Extension(None) => None,
            Matcher::Extension(Some(dot_ext)) => (0..path.len())
                .find(|&i| {
                    let seg = path.segment(i).as_bytes();
                    seg.len() > dot_ext.len()
                        && seg[seg.len() - dot_ext.len()..].eq_ignore_ascii_case(dot_ext.as_bytes())
                })
                .map(|i| i + 1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_refuse_malformed_escapes_and_nul() {
        let decode = |raw: &str| decode_segment(raw.as_bytes(), 0, &mut Vec::new());
        assert_eq!(decode("a%"), Err(TargetError::BadEscape { at: 1 }));
        assert_eq!(decode("a%4"), Err(TargetError::BadEscape { at: 1 }));
        assert_eq!(decode("%zz"), Err(TargetError::BadEscape { at: 0 }));
        assert_eq!(decode("ab%00"), Err(TargetError::EncodedNul { at: 2 }));
        let mut out = Vec::new();
        decode_segment(b"x%61", 7, &mut out).unwrap();
        assert_eq!(out, b"xa");
    }
    use proptest::prelude::*;

    fn map(uri: &str) -> Mapped {
        TargetMapper::default().map(uri.as_bytes()).unwrap()
    }

    fn key(uri: &str) -> TargetKey {
        map(uri).target.key
    }

    #[test]
    fn equivalent_spellings_are_one_target() {
        let want = map("/a/b");
        for uri in ["/a/./b", "/a//b", "/a/c/../b", "/%61/b", "//a/b", "/../a/b", "/a/b/c/.."] {
            let got = map(uri);
            if uri.ends_with("..") {
                assert_eq!(got.path, "/a/b/", "{uri} names the directory");
            } else {
                assert_eq!(got, want, "{uri}");
            }
        }
        assert_eq!(want.path, "/a/b");
        assert_eq!(want.target.key, TargetKey(crate::stable_hash::fnv1a64(b"/a/b")));
    }

    #[test]
    fn distinct_things_stay_distinct() {
        assert_ne!(key("/a/b"), key("/a/b/"), "a directory is not a file");
        assert_ne!(key("/a/b"), key("/a%2Fb"), "an encoded slash is no separator");
        assert_eq!(map("/a%2fb").path, "/a%2Fb");
        assert_eq!(map("/%2E%2E/x").path, "/x", "encoded dots still resolve");
        assert_eq!(map("/").path, "/");
        assert_eq!(map("/./..").path, "/");
    }

    #[test]
    fn query_is_outside_the_key_unless_configured() {
        assert_eq!(key("/a?x=1"), key("/a?x=2"));
        let with_query =
            TargetMapper::new(MapperConfig { query_in_key: true, ..Default::default() });
        let k = |u: &str| with_query.map(u.as_bytes()).unwrap().target.key;
        assert_ne!(k("/a?x=1"), k("/a?x=2"));
        assert_eq!(k("/a?"), k("/a"));
        assert_eq!(k("/db.nsf/v/d?Open&a"), k("/db.nsf/v/e?Edit"), "views ignore the query");
    }

    #[test]
    fn absolute_form_drops_the_authority() {
        assert_eq!(map("http://example.com/a/b?q"), map("/a/b"));
        assert_eq!(map("HTTPS://h:8080").path, "/");
        let m = TargetMapper::default();
        assert_eq!(m.map(b"http:///a"), Err(TargetError::EmptyAuthority));
        assert_eq!(m.map(b"*"), Err(TargetError::UnsupportedForm));
        assert_eq!(m.map(b"example.com:443"), Err(TargetError::UnsupportedForm));
        assert_eq!(m.map(b"1http://h/"), Err(TargetError::UnsupportedForm));
    }

    #[test]
    fn dynamic_urls_are_tracked_to_the_view() {
        let doc = map("/db.nsf/view/doc?OpenDocument&p=1");
        assert_eq!(doc.target.key, key("/db.nsf/view"));
        assert_eq!(doc.target.key, key("/db.nsf/view/other?EditDocument"));
        assert_ne!(doc.target.key, key("/db.nsf/view2/doc"));
        assert_eq!(doc.target.class, ClassId::DYNAMIC);
        assert_eq!(doc.path, "/db.nsf/view/doc");
        let app = map("/app/db/view/doc?OpenDocument");
        assert_eq!(app.target.key, key("/app/db/view"));
        assert_eq!(app.target.key, key("/app/db/view/"));
        assert_ne!(app.target.key, key("/app/db/other/doc"));
        assert_eq!(key("/app/db"), TargetKey(crate::stable_hash::fnv1a64(b"/app/db")));
    }

    #[test]
    fn tree_is_the_leading_directories() {
        let one = TargetMapper::new(MapperConfig { tree_depth: Some(1), ..Default::default() });
        let tree = |u: &str| one.map(u.as_bytes()).unwrap().target.tree;
        assert_eq!(one.map(b"/a/b/c.html").unwrap().target.subtrees.levels(), [tree("/a/")]);
        assert_eq!(tree("/a/b/c.html"), tree("/a/x.html"));
        assert_eq!(tree("/a/b/c.html"), TargetKey(crate::stable_hash::fnv1a64(b"/a/")));
        assert_eq!(tree("/x.html"), TargetKey(crate::stable_hash::fnv1a64(b"/")));
        assert_eq!(tree("/a/"), tree("/a/y"));
        let deep = TargetMapper::new(MapperConfig { tree_depth: Some(2), ..Default::default() });
        let t = |u: &str| deep.map(u.as_bytes()).unwrap().target.tree;
        assert_ne!(t("/a/b/c"), t("/a/d/c"));
        assert_eq!(t("/a/b/c"), t("/a/b/d/e"));
        assert_eq!(t("/a/x"), TargetKey(crate::stable_hash::fnv1a64(b"/a/")));
    }

    #[test]
    fn adaptive_subtrees_are_every_enclosing_directory_then_the_target() {
        let fnv = |s: &str| TargetKey(crate::stable_hash::fnv1a64(s.as_bytes()));
        let m = map("/a/b/c.html");
        assert_eq!(
            m.target.subtrees.levels(),
            [fnv("/"), fnv("/a/"), fnv("/a/b/"), fnv("/a/b/c.html")]
        );
        assert_eq!(m.target.tree, fnv("/a/b/"));
        assert_eq!(map("/x.html").target.subtrees.levels(), [fnv("/"), fnv("/x.html")]);
        // A directory is its own finest level, once.
        assert_eq!(map("/a/").target.subtrees.levels(), [fnv("/"), fnv("/a/")]);
        // A view is keyed by its view; its directories are still its subtrees.
        let view = map("/app/db/view/doc?OpenDocument");
        assert_eq!(view.target.subtrees.levels().last(), Some(&fnv("/app/db/view")));
        // Deep paths keep the root, the first directories and the target.
        let segs: Vec<String> = (0..20).map(|i| format!("s{i}")).collect();
        let deep = map(&format!("/{}/x", segs.join("/")));
        let levels = deep.target.subtrees.levels();
        assert_eq!(levels.len(), TREE_LEVELS);
        assert_eq!(levels[TREE_LEVELS - 2], fnv(&format!("/{}/", segs[..6].join("/"))));
        assert_eq!(levels[TREE_LEVELS - 1], deep.target.key);
    }

    #[test]
    fn deep_paths_index_every_segment() {
        let segs: Vec<String> = (0..40).map(|i| format!("s{i}")).collect();
        let uri = format!("/{}/x.php", segs.join("/"));
        let deep = TargetMapper::new(MapperConfig { tree_depth: Some(20), ..Default::default() });
        let m = deep.map(uri.as_bytes()).unwrap();
        assert_eq!(m.path, uri);
        assert_eq!(m.target.key, TargetKey(crate::stable_hash::fnv1a64(uri.as_bytes())));
        assert_eq!(m.target.class, ClassId::DYNAMIC, "the extension of segment 41 counts");
        let tree = format!("/{}/", segs[..20].join("/"));
        assert_eq!(m.target.tree, TargetKey(crate::stable_hash::fnv1a64(tree.as_bytes())));
        let slow = format!("/./{}/./x.php", segs.join("//"));
        assert_eq!(deep.map(slow.as_bytes()).unwrap(), m, "normalised, then indexed alike");
    }

    #[test]
    fn classes_follow_the_first_matching_rule() {
        let class = |u: &str| map(u).target.class;
        assert_eq!(class("/static/x.css"), ClassId::DEFAULT);
        assert_eq!(class("/x.PHP"), ClassId::DYNAMIC);
        assert_eq!(class("/cgi-bin/run.cgi/extra"), ClassId::DYNAMIC);
        assert_eq!(class("/app"), ClassId::DYNAMIC);
        assert_eq!(class("/application/x"), ClassId::DEFAULT);
        let greedy = TargetMapper::new(MapperConfig {
            view_rules: vec![ViewRule {
                matcher: PathMatch::Prefix("/".into()),
                levels: usize::MAX,
            }],
            ..Default::default()
        });
        assert_eq!(greedy.map(b"/a/b?x").unwrap().target.key, key("/a/b"));
        let custom = TargetMapper::new(MapperConfig {
            class_rules: vec![
                ClassRule { matcher: PathMatch::Prefix("/img/".into()), class: ClassId(3) },
                ClassRule { matcher: PathMatch::Extension(".png".into()), class: ClassId(2) },
            ],
            ..Default::default()
        });
        let c = |u: &str| custom.map(u.as_bytes()).unwrap().target.class;
        assert_eq!(c("/img/a.png"), ClassId(3));
        assert_eq!(c("/b/a.png"), ClassId(2));
        assert_eq!(c("/b/a.php"), ClassId::DEFAULT);
    }

    #[test]
    fn bad_targets_get_typed_errors() {
        let m = TargetMapper::new(MapperConfig { max_uri_len: 8, ..Default::default() });
        assert_eq!(m.map(b""), Err(TargetError::Empty));
        assert_eq!(m.map(b"/123456789"), Err(TargetError::TooLong { len: 10, max: 8 }));
        assert_eq!(m.map(b"/a b"), Err(TargetError::InvalidByte { byte: b' ', at: 2 }));
        assert_eq!(m.map(b"/a#b"), Err(TargetError::InvalidByte { byte: b'#', at: 2 }));
        assert_eq!(m.map(b"/a/%4"), Err(TargetError::BadEscape { at: 3 }));
        assert_eq!(m.map(b"/%00"), Err(TargetError::EncodedNul { at: 1 }));
        assert_eq!(m.map(b"/x/%FF"), Err(TargetError::InvalidUtf8 { at: 3 }));
        assert_eq!(m.map(b"/a?%zz"), m.map(b"/a"), "the query is not decoded");
    }

    /// Request targets that exercise the parser's branches far more often than uniform
    /// bytes do, most of them valid.
    fn uri_like() -> impl Strategy<Value = Vec<u8>> {
        let start = prop_oneof![
            4 => Just(b"/".to_vec()),
            1 => Just(b"http://h/".to_vec()),
            1 => Just(b"http://h".to_vec()),
        ];
        let piece = prop_oneof![
            4 => Just(b"/".to_vec()),
            2 => Just(b".".to_vec()),
            2 => Just(b"..".to_vec()),
            1 => Just(b"%2F".to_vec()),
            1 => Just(b"%2e".to_vec()),
            1 => Just(b"%C3%A9".to_vec()),
            1 => Just(b"?".to_vec()),
            1 => Just(b".nsf".to_vec()),
            1 => Just(b"app".to_vec()),
            4 => "[a-z0-9:@+]{1,3}".prop_map(String::into_bytes),
            1 => "%[0-9A-Fa-f]{2}".prop_map(String::into_bytes),
        ];
        (start, proptest::collection::vec(piece, 0..16)).prop_map(|(s, p)| [s, p.concat()].concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            rng_seed: proptest::test_runner::RngSeed::Fixed(0x1a2d),
            ..ProptestConfig::with_cases(256)
        })]

        #[test]
        fn never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = TargetMapper::default().map(&bytes);
        }

        #[test]
        fn normalised_paths_are_clean_and_map_to_themselves(uri in uri_like()) {
            let m = TargetMapper::default();
            let first = match m.map(&uri) {
                Ok(first) => first,
                // The only bad input this generator makes is a random escape.
                Err(TargetError::EncodedNul { .. } | TargetError::InvalidUtf8 { .. }) => {
                    return Ok(());
                }
                Err(e) => return Err(TestCaseError::fail(format!("{e}"))),
            };
            prop_assert!(first.path.starts_with('/'));
            prop_assert!(!first.path.contains("//"), "{}", first.path);
            prop_assert!(first.path.split('/').all(|s| s != ".." && s != "."), "{}", first.path);
            let again = m.map(first.path.as_bytes()).expect("a normalised path maps");
            prop_assert_eq!(&again.path, &first.path);
            prop_assert_eq!(again.target, first.target);
        }

        #[test]
        fn spellings_of_one_path_share_a_key(
            segs in proptest::collection::vec(("[a-z]{1,4}", 0u8..5), 1..6)
        ) {
            let plain: String = segs.iter().map(|(s, _)| format!("/{s}")).collect();
            let spelled: String = segs
                .iter()
                .map(|(s, how)| match how {
                    0 => format!("/{s}"),
                    1 => format!("/./{s}"),
                    2 => format!("//{s}"),
                    3 => format!("/zz/../{s}"),
                    _ => format!("/%{:02x}{}", s.as_bytes()[0], &s[1..]),
                })
                .collect();
            let m = TargetMapper::default();
            prop_assert_eq!(m.map(plain.as_bytes()).unwrap(), m.map(spelled.as_bytes()).unwrap());
        }
    }
}

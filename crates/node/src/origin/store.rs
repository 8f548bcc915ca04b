//! The origin objects a node holds: complete responses in a byte-bounded LRU, keyed by
//! request target and, for responses with `Vary`, by the request's values of the fields it
//! names. Under the plain target a varying response leaves a small marker listing those
//! names, so a lookup knows which values to key on; if the marker is evicted, its variants
//! are unreachable until they are evicted too.

use super::fields::{first, Field};
use super::freshness::Freshness;
use super::site;
use super::slice_spec::{Slice, SliceSpec};
use super::vary::secondary_key;
use cache::{ByteCache, Lru};
use http1::RequestHead;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::SystemTime;
use wire::{Invalidation, InvalidationMode, InvalidationScope, TargetHint};

/// A complete origin response as stored and served.
#[derive(Debug)]
pub struct Stored {
    pub status: u16,
    /// End-to-end fields (hop-by-hop ones dropped); `Date` kept for freshness updates.
    pub fields: Vec<Field>,
    pub body: Arc<[u8]>,
    pub freshness: Freshness,
    /// The lower-cased names of `Vary`, and this request's key made of their values.
    pub vary: Vec<String>,
    pub vary_key: String,
}

impl Stored {
    pub fn etag(&self) -> Option<&[u8]> {
        first(&self.fields, "etag")
    }

    pub fn last_modified(&self) -> Option<&[u8]> {
        first(&self.fields, "last-modified")
    }

    /// Whether this response may answer `req` (same values for every `Vary` field).
    pub fn matches(&self, req: &RequestHead) -> bool {
        self.vary.is_empty() || secondary_key(&self.vary, req) == self.vary_key
    }

    fn bytes(&self, key: &str) -> u64 {
        let fields: usize = self.fields.iter().map(|(n, v)| n.len() + v.len() + 4).sum();
        (key.len() + fields + self.body.len() + 128) as u64
    }
}

/// A copy of `s` whose freshness ended at `now` (a soft purge), its stale-if-error
/// window counted from then.
fn stale_from(s: &Stored, now: SystemTime) -> Stored {
    let mut freshness = s.freshness;
    freshness.lifetime = freshness.lifetime.min(freshness.age(now));
    Stored {
        status: s.status,
        fields: s.fields.clone(),
        body: Arc::clone(&s.body),
        freshness,
        vary: s.vary.clone(),
        vary_key: s.vary_key.clone(),
    }
}

#[derive(Clone, Debug)]
enum Entry {
    Object(Arc<Stored>),
    /// The response for this target varies on these fields: look under the full key.
    Varies(Arc<[String]>),
    /// A large object stored as slices: its head (a [`Stored`] with an empty body) and how
    /// it is sliced; each slice is an entry of its own ([`SliceSpec::slice_key`]).
    Sliced(Arc<Stored>, Arc<SliceSpec>),
    /// One slice of a large object.
    Slice(Arc<Slice>),
}

/// The byte-bounded store of origin objects (loop-local).
pub struct ObjectStore {
    lru: RefCell<Lru<String, Entry>>,
    /// The target a router named for each request target (`X-Larder-Target`), so the load
    /// report can say what this node holds; pruned to what the store holds.
    named: RefCell<HashMap<String, TargetHint>>,
    /// Bumped on every store and removal, so the holdings digest knows to build again.
    changes: std::cell::Cell<u64>,
}

impl ObjectStore {
    pub fn new(capacity_bytes: u64) -> ObjectStore {
        ObjectStore {
            lru: RefCell::new(Lru::new(capacity_bytes)),
            named: RefCell::default(),
            changes: std::cell::Cell::new(0),
        }
    }

    /// Changes to what the store holds so far (stores and removals).
    pub fn changes(&self) -> u64 {
        self.changes.get()
    }

    /// Remember that a router placed requests for `target` by `hint`; true when that is
    /// news (the holdings digest must then be built again).
    pub fn name(&self, target: &str, hint: TargetHint) -> bool {
        let mut named = self.named.borrow_mut();
        let news = named.get(target) != Some(&hint);
        if news {
            named.insert(target.to_string(), hint);
        }
        // Targets never stored (uncacheable, failed) must not pile up between reports.
        let held = self.lru.borrow().len();
        if named.len() > 2 * held + 1024 {
            self.prune(&mut named);
        }
        news
    }

    /// How many entries the store holds.
    pub fn len(&self) -> usize {
        self.lru.borrow().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The named targets the store holds (a response, or the marker of varying ones).
    pub fn named(&self) -> Vec<TargetHint> {
        let mut named = self.named.borrow_mut();
        self.prune(&mut named);
        named.values().copied().collect()
    }

    fn prune(&self, named: &mut HashMap<String, TargetHint>) {
        let lru = self.lru.borrow();
        named.retain(|target, _| lru.contains(target));
    }

    /// The stored response that may answer `req` for `target`, fresh or not.
    pub fn get(&self, target: &str, req: &RequestHead) -> Option<Arc<Stored>> {
        let mut lru = self.lru.borrow_mut();
        let names = match lru.get(&target.to_string())? {
            Entry::Object(s) => return Some(Arc::clone(s)),
            Entry::Varies(names) => Arc::clone(names),
            Entry::Sliced(..) | Entry::Slice(_) => return None,
        };
        let key = format!("{target}{}", secondary_key(&names, req));
        match lru.get(&key)? {
            Entry::Object(s) if s.matches(req) => Some(Arc::clone(s)),
            _ => None,
        }
    }

    /// Store `s`, the response to a request for `target`.
    pub fn put(&self, target: &str, s: Arc<Stored>) {
        self.changes.set(self.changes.get() + 1);
        let mut lru = self.lru.borrow_mut();
        if s.vary.is_empty() {
            let bytes = s.bytes(target);
            lru.insert(target.to_string(), Entry::Object(s), bytes);
            return;
        }
        let names: Arc<[String]> = s.vary.clone().into();
        let marker_bytes = (target.len() + names.iter().map(|n| n.len() + 8).sum::<usize>()) as u64;
        lru.insert(target.to_string(), Entry::Varies(names), marker_bytes);
        let key = format!("{target}{}", s.vary_key);
        let bytes = s.bytes(&key);
        lru.insert(key, Entry::Object(s), bytes);
    }

    /// The head and slicing of the large object stored under `target`, if it is one.
    pub fn sliced(&self, target: &str) -> Option<(Arc<Stored>, Arc<SliceSpec>)> {
        match self.lru.borrow_mut().get(&target.to_string())? {
            Entry::Sliced(head, spec) => Some((Arc::clone(head), Arc::clone(spec))),
            _ => None,
        }
    }

    /// Store the head of a large object stored as slices under `spec`'s key.
    pub fn put_sliced(&self, head: Arc<Stored>, spec: Arc<SliceSpec>) {
        self.changes.set(self.changes.get() + 1);
        let bytes = head.bytes(&spec.key) + spec.key.len() as u64 + 64;
        self.lru.borrow_mut().insert(spec.key.clone(), Entry::Sliced(head, spec), bytes);
    }

    /// The slice stored under `key` ([`SliceSpec::slice_key`]).
    pub fn slice(&self, key: &str) -> Option<Arc<Slice>> {
        match self.lru.borrow_mut().get(&key.to_string())? {
            Entry::Slice(s) => Some(Arc::clone(s)),
            _ => None,
        }
    }

    /// Store one slice under `key`.
    pub fn put_slice(&self, key: &str, slice: Arc<Slice>) {
        let bytes = (key.len() + slice.body.len() + slice.version.validator.len() + 64) as u64;
        self.lru.borrow_mut().insert(key.to_string(), Entry::Slice(slice), bytes);
    }

    /// Forget what is stored under `key` (a large object's head, or one of its slices).
    pub fn remove_key(&self, key: &str) {
        self.changes.set(self.changes.get() + 1);
        self.lru.borrow_mut().remove(&key.to_string());
    }

    /// Forget the response that would answer `req` for `target`.
    pub fn remove(&self, target: &str, s: &Stored) {
        let key = format!("{target}{}", s.vary_key);
        self.changes.set(self.changes.get() + 1);
        self.lru.borrow_mut().remove(&key);
    }

    /// Drop every stored response for `target`, each variant of a varying one included
    /// (RFC 9111 §4.4: an unsafe request changed what the target is). Idempotent; true
    /// when something was held.
    pub fn invalidate(&self, target: &str) -> bool {
        let mut lru = self.lru.borrow_mut();
        let Some(entry) = lru.remove(&target.to_string()) else {
            return false;
        };
        if let Entry::Varies(_) = entry {
            // Variants are keyed by the target and "\n"-led field values (`vary.rs`).
            let prefix = format!("{target}\n");
            lru.retain(|key, _| !key.starts_with(&prefix));
        }
        self.changes.set(self.changes.get() + 1);
        true
    }

    /// Apply a purge: drop, or mark stale at `now`, every stored response `inv` names
    /// (its target exactly with each variant, or every target starting with it). A
    /// stale-marked response keeps its stale-if-error allowance, so the next request
    /// revalidates and an origin error can still be answered with it. With `every_site`,
    /// the target is matched on every site of a store keyed by site (`site.rs`). Visits
    /// every key for anything but an exact hard drop on one site (bounded by the store; an
    /// admin operation). True when something was held.
    pub fn purge(&self, inv: &Invalidation, every_site: bool, now: SystemTime) -> bool {
        let exact = (inv.mode, inv.scope) == (InvalidationMode::Hard, InvalidationScope::Exact);
        if exact && !every_site {
            return self.invalidate(&inv.target);
        }
        let variants = format!("{}\n", inv.target);
        let named = |key: &str| match inv.scope {
            InvalidationScope::Exact => key == inv.target || key.starts_with(&variants),
            InvalidationScope::Prefix => key.starts_with(&inv.target),
        };
        let mut held = false;
        self.lru.borrow_mut().retain(|key, entry| {
            if !named(if every_site { site::target_of(key) } else { key }) {
                return true;
            }
            held = true;
            match (inv.mode, entry) {
                (InvalidationMode::Hard, _) => false,
                (InvalidationMode::Soft, Entry::Object(s)) => {
                    *s = Arc::new(stale_from(s, now));
                    true
                }
                (InvalidationMode::Soft, Entry::Sliced(head, _)) => {
                    *head = Arc::new(stale_from(head, now));
                    true
                }
                (InvalidationMode::Soft, Entry::Varies(_) | Entry::Slice(_)) => true,
            }
        });
        if held {
            self.changes.set(self.changes.get() + 1);
        }
        held
    }

    pub fn used_bytes(&self) -> u64 {
        self.lru.borrow().used_bytes()
    }

    pub fn capacity_bytes(&self) -> u64 {
        self.lru.borrow().capacity_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use wire::{InvalidationMode as Mode, InvalidationScope as Scope};

    fn stored(at: SystemTime) -> Arc<Stored> {
        let freshness = Freshness {
            lifetime: Duration::from_secs(600),
            initial_age: Duration::ZERO,
            response_time: at,
            no_cache: false,
            must_revalidate: false,
            stale_if_error: Duration::from_secs(60),
            stale_while_revalidate: Duration::ZERO,
        };
        let body: Arc<[u8]> = Arc::from(&b"x"[..]);
        let (fields, vary, vary_key) = (Vec::new(), Vec::new(), String::new());
        Arc::new(Stored { status: 200, fields, body, freshness, vary, vary_key })
    }

    fn purge(target: &str, mode: Mode, scope: Scope) -> Invalidation {
        Invalidation { target: target.into(), mode, scope, site: None }
    }

    #[test]
    fn purges_by_prefix_and_softly() {
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let store = ObjectStore::new(1 << 20);
        for target in ["/p/a", "/p/b?x", "/q"] {
            store.put(target, stored(t0));
        }
        let now = t0 + Duration::from_secs(10);
        assert!(store.purge(&purge("/q", Mode::Soft, Scope::Exact), false, now));
        let limits = http1::Limits::default();
        let (req, _) =
            http1::parse_head(b"GET /q HTTP/1.1\r\nHost: h\r\n\r\n", &limits).unwrap().unwrap();
        let q = store.get("/q", &req).unwrap();
        assert!(!q.freshness.is_fresh(now) && q.freshness.usable_on_error(now));
        assert!(store.purge(&purge("/p/", Mode::Hard, Scope::Prefix), false, now));
        assert!(!store.purge(&purge("/p/", Mode::Hard, Scope::Prefix), false, now));
        assert!(store.get("/p/a", &req).is_none() && store.get("/p/b?x", &req).is_none());
        assert!(store.get("/q", &req).is_some());
    }

    #[test]
    fn a_purge_names_one_site_or_every_site() {
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let store = ObjectStore::new(1 << 20);
        for key in ["//a.example/x", "//b.example/x", "//b.example/y"] {
            store.put(key, stored(t0));
        }
        let limits = http1::Limits::default();
        let (req, _) =
            http1::parse_head(b"GET /x HTTP/1.1\r\nHost: h\r\n\r\n", &limits).unwrap().unwrap();
        assert!(store.purge(&purge("//a.example/x", Mode::Hard, Scope::Exact), false, t0));
        assert!(store.get("//a.example/x", &req).is_none());
        assert!(store.get("//b.example/x", &req).is_some());
        store.put("//a.example/x", stored(t0));
        assert!(store.purge(&purge("/x", Mode::Hard, Scope::Exact), true, t0));
        assert!(store.get("//a.example/x", &req).is_none());
        assert!(store.get("//b.example/x", &req).is_none());
        assert!(store.get("//b.example/y", &req).is_some());
    }
}

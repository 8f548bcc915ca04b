//! The state one event loop owns: configuration, helper pools, the three caches of Flash
//! (path translation, response headers inside it, file data), counters and the access log.
//! Only the loop thread touches it, so it lives in an `Rc` with `RefCell`s and no locks.

use crate::access_log::AccessLog;
use crate::buffers::BufferPool;
use crate::config::Config;
use crate::error::NodeError;
use crate::forwarder::Forwarder;
use crate::holdings::Holdings;
use crate::origin::OriginState;
use crate::pollers::Pollers;
use crate::pool::{HelperPool, PoolGone};
use crate::single_flight::SingleFlight;
use crate::stats::{Counters, LoadSampler, NodeReport};
use crate::translate::{Stamp, TranslateOptions, Translation};
use cache::{ByteCache, Lru};
use http1::{DateCache, ResponseHead};
use std::cell::RefCell;
use std::sync::Arc;
use std::time::{Instant, SystemTime};
use tokio::sync::watch;

/// A path translation and when it was checked against the file system.
#[derive(Clone, Debug)]
pub struct PathEntry {
    pub translation: Arc<Translation>,
    pub checked: Instant,
}

/// What the content cache holds: file bodies (by request path) and computed views.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum BodyKey {
    File(String),
    View(String),
}

/// A cached body. File bodies carry the stamp of the file version they were read from, so
/// a changed file is never served stale once its translation is refreshed.
#[derive(Clone, Debug)]
pub struct CachedBody {
    pub stamp: Option<Stamp>,
    pub bytes: Arc<[u8]>,
    /// The target a router last named for this body, for the holdings digest.
    pub target: Option<wire::TargetHint>,
}

pub struct NodeState {
    pub config: Config,
    pub translate: Arc<TranslateOptions>,
    /// Helpers for path translation and disk reads.
    pub disk: HelperPool,
    /// Helpers for computing dynamic views.
    pub cpu: HelperPool,
    pub paths: RefCell<Lru<String, PathEntry>>,
    pub bodies: RefCell<Lru<BodyKey, CachedBody>>,
    /// Path translations under way, so concurrent misses share one helper job.
    pub translating: SingleFlight<Result<Arc<Translation>, PoolGone>>,
    /// Dynamic views being computed, so concurrent misses share one computation.
    pub computing: SingleFlight<Option<Arc<[u8]>>>,
    pub dates: RefCell<DateCache>,
    pub buffers: BufferPool,
    pub counters: Counters,
    pub load: RefCell<LoadSampler>,
    pub log: Option<RefCell<AccessLog>>,
    /// The origins and their object store when the node is a cache (`--origin`).
    pub origin: Option<OriginState>,
    pub shutting_down: watch::Receiver<bool>,
    /// What the content cache holds, summarised for the load report.
    pub holdings: RefCell<Holdings>,
    /// The routers that polled the load report lately.
    pub pollers: RefCell<Pollers>,
    /// When the node started (its uptime is in the load report).
    pub started: Instant,
    /// Pools to the other nodes later requests on adopted connections are forwarded to.
    pub forwarder: Forwarder,
}

impl NodeState {
    pub fn new(
        config: Config,
        shutting_down: watch::Receiver<bool>,
    ) -> Result<NodeState, NodeError> {
        config.validate()?;
        // A caching node serves no files: its docroot need not exist.
        let root = match config.origin {
            Some(_) => config.docroot.clone(),
            None => config
                .docroot
                .canonicalize()
                .map_err(NodeError::path("docroot", &config.docroot))?,
        };
        let origin = config.origin.clone().map(|o| OriginState::new(o, config.cache_bytes));
        let translate = Arc::new(crate::translate::TranslateOptions {
            root,
            follow_outside_symlinks: config.follow_outside_symlinks,
            direct_io: config.direct_io,
            index_file: config.index_file.clone(),
        });
        let log = match &config.access_log {
            Some(p) => {
                Some(RefCell::new(AccessLog::open(p).map_err(NodeError::path("access log", p))?))
            }
            None => None,
        };
        let pollers = RefCell::new(Pollers::new(config.routers_window, config.max_routers));
        Ok(NodeState {
            translate,
            disk: HelperPool::new("larder-disk", config.disk_threads)?,
            cpu: HelperPool::new("larder-cpu", config.cpu_threads)?,
            paths: RefCell::new(Lru::new(config.path_cache_entries)),
            bodies: RefCell::new(Lru::new(config.cache_bytes)),
            translating: SingleFlight::default(),
            computing: SingleFlight::default(),
            dates: RefCell::new(DateCache::new()),
            buffers: BufferPool::default(),
            counters: Counters::default(),
            started: Instant::now(),
            forwarder: Forwarder::new(
                config.handoff.as_ref().map(|h| h.forward.clone()).unwrap_or_default(),
            ),
            load: RefCell::new(LoadSampler::default()),
            log,
            origin,
            shutting_down,
            config,
            holdings: RefCell::new(Holdings::new(SystemTime::now())),
            pollers,
        })
    }

    pub fn is_shutting_down(&self) -> bool {
        *self.shutting_down.borrow()
    }

    /// Add the `Date` header of the current second.
    pub fn write_date(&self, head: &mut ResponseHead<'_>) {
        let mut dates = self.dates.borrow_mut();
        head.header("Date", dates.get(SystemTime::now()).as_bytes());
    }

    pub fn report(&self) -> NodeReport {
        let c = &self.counters;
        let sampler = self.load.borrow();
        let bodies = self.bodies.borrow();
        let (origin_used, origin_capacity) =
            self.origin.as_ref().map_or((0, 0), OriginState::cache_bytes);
        let origin = self.origin.as_ref().map(OriginState::counters);
        let origin_named = self.origin.as_ref().map_or_else(Vec::new, |o| o.upstream.store.named());
        let origin_changes = self.origin.as_ref().map_or(0, |o| o.upstream.store.changes());
        let origin_count = |f: fn(&crate::origin::OriginCounters) -> u64| origin.map_or(0, f);
        let peer_fills = self.origin.as_ref().map_or((0, 0), OriginState::peer_fills);
        let slices = self.origin.as_ref().map_or((0, 0, 0), OriginState::slices);
        let load = wire::LoadReport {
            in_flight: c.in_flight.get(),
            open_connections: c.open_connections.get(),
            cpu_pct: sampler.cpu_pct,
            disk_read_bytes_per_sec: sampler.disk_read_bytes_per_sec,
            disk_read_bytes: sampler.disk_read_bytes,
            cache_bytes: bodies.used_bytes() + origin_used,
            // A caching node's content goes to the origin store; its file-body cache then
            // stays empty and is no capacity to count.
            cache_capacity_bytes: match &self.origin {
                Some(_) => origin_capacity,
                None => bodies.capacity_bytes(),
            },
            cache_objects: (bodies.len()
                + self.origin.as_ref().map_or(0, |o| o.upstream.store.len()))
                as u64,
            hits: c.hits.get(),
            misses: c.misses.get(),
            requests: c.requests.get(),
            helper_queue: (self.disk.pending() + self.cpu.pending()) as u64,
            miss_bytes_reading: c.miss_bytes_reading.get(),
            disk_pct: None,
            holdings: self.holdings.borrow_mut().digest(origin_changes, || {
                let bodies = bodies.iter().filter_map(|(_, b, _)| b.target);
                bodies.chain(origin_named.iter().copied())
            }),
            origin_fetches: origin_count(|c| c.fetches.get()),
            origin_bytes: origin_count(|c| c.bytes.get()),
            origin_errors: origin_count(|c| c.errors.get()),
            peer_fills: peer_fills.0,
            peer_fill_failures: peer_fills.1,
            slices_from_cache: slices.0,
            slices_from_origin: slices.1,
            slices_from_peers: slices.2,
            uptime_ms: self.started.elapsed().as_millis() as u64,
            handoff_socket: self.config.handoff.as_ref().map(|h| h.socket.display().to_string()),
            forwarded: self.forwarder.forwarded.get(),
            forward_failures: self.forwarder.failures.get(),
            routers: self.pollers.borrow_mut().count(Instant::now()),
        };
        NodeReport {
            load,
            bytes_sent: c.bytes_sent.get(),
            responses_by_class: std::array::from_fn(|i| c.by_class[i].get()),
            header_timeouts: c.header_timeouts.get(),
            request_duration: c.request_duration.borrow().clone(),
        }
    }

    /// Look up a cached body, counting a hit or a miss. `valid` rejects stale entries; a
    /// hit remembers `hint` as the body's target when a router named one.
    pub fn cached_body(
        &self,
        key: &BodyKey,
        hint: Option<wire::TargetHint>,
        valid: impl Fn(&CachedBody) -> bool,
    ) -> Option<Arc<[u8]>> {
        let mut bodies = self.bodies.borrow_mut();
        let hit = bodies.get_mut(key).filter(|b| valid(b)).map(|b| {
            if hint.is_some() && b.target != hint {
                b.target = hint;
                self.holdings.borrow_mut().changed();
            }
            Arc::clone(&b.bytes)
        });
        drop(bodies);
        let counter = if hit.is_some() { &self.counters.hits } else { &self.counters.misses };
        Counters::add(counter, 1);
        hit
    }

    pub fn store_body(&self, key: BodyKey, body: CachedBody) {
        let bytes = body.bytes.len() as u64 + key_bytes(&key);
        self.bodies.borrow_mut().insert(key, body, bytes);
        self.holdings.borrow_mut().changed();
    }
}

fn key_bytes(key: &BodyKey) -> u64 {
    match key {
        BodyKey::File(s) | BodyKey::View(s) => s.len() as u64,
    }
}

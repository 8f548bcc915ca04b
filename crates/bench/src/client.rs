//! One user's or connection's view of a run: it opens connections as needed, sends one
//! request at a time and records the outcome in its own statistics, which the run collects
//! every epoch. Shared, read-mostly run state lives in `RunState`.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

use crate::config::Config;
use crate::crowd::CrowdState;
use crate::http_client::{ranged_request_bytes, ExchangeError, HttpConnection};
use crate::plan::{Plan, PlanCursor};
use crate::stats::{ErrorKind, Stats};

/// What every user of a run reads.
pub struct RunState {
    pub plan: Plan,
    pub cursor: PlanCursor,
    /// The bytes of the request for each path, built once.
    requests: Vec<Vec<u8>>,
    addr: SocketAddr,
    close_each: bool,
    timeout: Option<Duration>,
    /// When the run started; the open loop's schedule counts from here.
    pub start: Instant,
    /// Requests due before this are warm-up: sent, not counted.
    pub measure_start: Instant,
    deadline: Option<Instant>,
    /// Requests still allowed after the warm-up, when bounded.
    tickets: Option<AtomicU64>,
    crowd: Option<CrowdState>,
}

impl RunState {
    pub fn new(config: &Config, start: Instant) -> RunState {
        let close = config.connection_per_request;
        let measure_start = start + config.warmup;
        RunState {
            requests: config
                .plan
                .paths
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let range = config.plan.shape(i as u32).range;
                    ranged_request_bytes(&config.target.host, p, close, range)
                })
                .collect(),
            plan: config.plan.clone(),
            cursor: PlanCursor::new(config.cycle),
            addr: config.target.addr,
            close_each: close,
            timeout: config.timeout,
            start,
            measure_start,
            deadline: config.duration.map(|d| measure_start + d),
            tickets: config.requests.map(AtomicU64::new),
            crowd: config.flash_crowd.clone().map(|c| CrowdState::new(c, start)),
        }
    }

    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// Whether a request due at `due` may be sent: before the deadline and, after the
    /// warm-up, while request tickets last (taking one).
    pub fn admit(&self, due: Instant) -> bool {
        if self.deadline.is_some_and(|d| due >= d) {
            return false;
        }
        if due < self.measure_start {
            return true;
        }
        match &self.tickets {
            None => true,
            Some(t) => {
                t.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1)).is_ok()
            }
        }
    }

    /// Whether `--requests` have all been handed out.
    pub fn tickets_exhausted(&self) -> bool {
        self.tickets.as_ref().is_some_and(|t| t.load(Ordering::Relaxed) == 0)
    }
}

/// Statistics of one client, drained by the run at every epoch.
pub type StatsSlot = Arc<Mutex<Stats>>;

/// Take what `slot` recorded since the last drain.
pub fn drain(slot: &StatsSlot) -> Stats {
    std::mem::take(&mut *slot.lock().unwrap_or_else(PoisonError::into_inner))
}

/// A client: at most one open connection, and where it records.
pub struct Client {
    pub run: Arc<RunState>,
    conn: Option<HttpConnection>,
    stats: StatsSlot,
}

impl Client {
    pub fn new(run: Arc<RunState>, stats: StatsSlot) -> Client {
        Client { run, conn: None, stats }
    }

    /// Send the request for path `target`, due at `due` (which decides whether it falls in
    /// the warm-up); its latency counts from `since` (the due time, or the send time when
    /// that came first).
    pub async fn request(&mut self, target: u32, due: Instant, since: Instant) {
        let target = self.run.crowd.as_ref().map_or(target, |c| c.target(target, due));
        let limit = self.run.timeout.map(|t| Instant::now() + t);
        let mut connect_took = None;
        let outcome = match self.conn.as_mut() {
            Some(conn) => within(limit, conn.exchange(&self.run.requests[target as usize])).await,
            None => {
                let begin = Instant::now();
                match within(limit, HttpConnection::connect(self.run.addr)).await {
                    Ok(Ok(conn)) => {
                        connect_took = Some(begin.elapsed());
                        let conn = self.conn.insert(conn);
                        within(limit, conn.exchange(&self.run.requests[target as usize])).await
                    }
                    Ok(Err(_)) | Err(_) => Err(ErrorKind::Connect),
                }
            }
        };
        let outcome = outcome.and_then(|r| {
            r.map_err(|e| match e {
                ExchangeError::Reset => ErrorKind::Reset,
                ExchangeError::Protocol(_) => ErrorKind::Protocol,
            })
        });
        let done = Instant::now();
        let reuse = matches!(&outcome, Ok(r) if r.keep_alive) && !self.run.close_each;
        if !reuse {
            self.conn = None;
        }
        if due < self.run.measure_start {
            return;
        }
        let mut stats = self.stats.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(took) = connect_took {
            stats.record_connect(took);
        }
        match outcome {
            Ok(response)
                if !(400..600).contains(&response.status)
                    && !self
                        .run
                        .plan
                        .shape(target)
                        .answered_by(response.status, response.body_bytes) =>
            {
                stats.record_error(ErrorKind::Mismatch)
            }
            Ok(response) => stats.record_response(&response, done - since),
            Err(kind) => stats.record_error(kind),
        }
    }
}

/// Run `fut` until `limit`; past it the request timed out.
async fn within<T>(limit: Option<Instant>, fut: impl Future<Output = T>) -> Result<T, ErrorKind> {
    match limit {
        None => Ok(fut.await),
        Some(at) => tokio::time::timeout_at(at, fut).await.map_err(|_| ErrorKind::Timeout),
    }
}

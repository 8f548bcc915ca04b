//! Synthetic dynamic content, standing in for HACC's Domino and ASP application servers.
//!
//! A URL `/<mount>/<db>/<view>/<doc>?OpenDocument` is answered with a page computed by real
//! CPU work. The costly part depends only on the view (as a Domino view index would) and
//! is cached per view in the node's content cache; a document is then cut cheaply out of
//! its view. So a view miss costs the computation, and sending a view's requests to the
//! same node (locality) pays. Everything is a pure function of the URL and the
//! configuration, so tests can check the bytes.

use std::time::{Duration, Instant};

/// Shape and cost of the dynamic route.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DynamicConfig {
    /// First path segment of the route (`app` for `/app/...`).
    pub mount: String,
    /// Rounds of the hash loop per view computation (the CPU cost of a miss).
    pub iterations: u64,
    /// Bytes of a computed view (what it occupies in the cache).
    pub view_bytes: usize,
    /// Bytes of a document response.
    pub doc_bytes: usize,
}

impl DynamicConfig {
    /// Hash-loop rounds per view: `iterations` if given (the same bytes and CPU on every
    /// machine), else as many as cost `cost_us` of CPU here, calibrated now.
    pub fn iterations_for(cost_us: u64, iterations: Option<u64>) -> u64 {
        iterations.unwrap_or_else(|| (iterations_per_us() * cost_us as f64).round() as u64)
    }
}

impl Default for DynamicConfig {
    fn default() -> Self {
        DynamicConfig {
            mount: "app".into(),
            iterations: 200_000,
            view_bytes: 64 * 1024,
            doc_bytes: 8 * 1024,
        }
    }
}

/// The parts of a dynamic URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppPath<'a> {
    pub db: &'a str,
    pub view: &'a str,
    pub doc: &'a str,
}

/// Why a URL under the mount is not a document request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AppPathError {
    #[error("expected /<mount>/<db>/<view>/<doc>")]
    Shape,
    #[error("unsupported action (only OpenDocument)")]
    Action,
}

/// Match a sanitized relative path and query against the route. `None`: not under the
/// mount at all (a static file).
pub fn parse_app_path<'a>(
    cfg: &DynamicConfig,
    rel: &'a str,
    query: Option<&str>,
) -> Option<Result<AppPath<'a>, AppPathError>> {
    let rest = rel.strip_prefix(cfg.mount.as_str())?;
    if !(rest.is_empty() || rest.starts_with('/')) {
        return None;
    }
    let mut segs = rest.split('/').skip(1);
    let (Some(db), Some(view), Some(doc), None) =
        (segs.next(), segs.next(), segs.next(), segs.next())
    else {
        return Some(Err(AppPathError::Shape));
    };
    let action_ok = match query {
        None | Some("") => true,
        Some(q) => q.split('&').next().is_some_and(|a| a.eq_ignore_ascii_case("OpenDocument")),
    };
    if !action_ok {
        return Some(Err(AppPathError::Action));
    }
    Some(Ok(AppPath { db, view, doc }))
}

fn fnv1a(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for &b in p.as_bytes().iter().chain(b"/") {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// One splitmix64 step: the unit of CPU work.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// The costly part: `iterations` rounds of hashing seeded by the view, expanded into
/// `view_bytes` of hex text. The output depends on every round, so the work is real.
pub fn compute_view(db: &str, view: &str, iterations: u64, view_bytes: usize) -> Vec<u8> {
    let mut h = fnv1a(&[db, view]);
    for _ in 0..iterations {
        h = mix(h);
    }
    let mut out = Vec::with_capacity(view_bytes);
    while out.len() < view_bytes {
        h = mix(h);
        for i in 0..16 {
            if out.len() == view_bytes {
                break;
            }
            out.push(HEX[((h >> (i * 4)) & 0xf) as usize]);
        }
    }
    out
}

fn escape_html(s: &str, out: &mut Vec<u8>) {
    for c in s.chars() {
        match c {
            '<' => out.extend_from_slice(b"&lt;"),
            '>' => out.extend_from_slice(b"&gt;"),
            '&' => out.extend_from_slice(b"&amp;"),
            '"' => out.extend_from_slice(b"&quot;"),
            c => {
                let mut b = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
            }
        }
    }
}

/// The cheap part: a document page of `doc_bytes` (or just its frame, if larger) cut out of
/// its computed view at an offset given by the document name.
pub fn render_document(app: &AppPath<'_>, view_state: &[u8], doc_bytes: usize) -> Vec<u8> {
    let mut page = Vec::with_capacity(doc_bytes.max(256));
    page.extend_from_slice(b"<!DOCTYPE html>\n<html><head><title>");
    for (i, part) in [app.db, app.view, app.doc].iter().enumerate() {
        if i > 0 {
            page.push(b'/');
        }
        escape_html(part, &mut page);
    }
    page.extend_from_slice(b"</title></head><body><pre>\n");
    const TAIL: &[u8] = b"\n</pre></body></html>\n";
    let filler = doc_bytes.saturating_sub(page.len() + TAIL.len());
    if !view_state.is_empty() {
        let start = (fnv1a(&[app.doc]) % view_state.len() as u64) as usize;
        page.extend(view_state.iter().cycle().skip(start).take(filler));
    }
    page.extend_from_slice(TAIL);
    page
}

/// Hash-loop rounds per microsecond on this machine, measured once at start-up so that
/// `--dyn-cost-us` means roughly what it says. It counts the calibrating thread's own CPU
/// time, not the clock: nodes start together on busy machines, and time spent waiting for
/// a core would make the loop look slower and every later miss cheaper than asked.
pub fn iterations_per_us() -> f64 {
    const ROUNDS: u64 = 4_000_000;
    let (wall, cpu) = (Instant::now(), thread_cpu_time());
    let h = std::hint::black_box(compute_view("calibrate", "calibrate", ROUNDS, 16));
    std::hint::black_box(h);
    // The clock only where the thread's CPU time cannot be read.
    let took = match (cpu, thread_cpu_time()) {
        (Some(a), Some(b)) => b.saturating_sub(a),
        _ => wall.elapsed(),
    };
    (ROUNDS as f64 / (took.as_secs_f64() * 1e6).max(1.0)).max(1.0)
}

/// CPU time the calling thread has used, if the system can tell.
fn thread_cpu_time() -> Option<Duration> {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid timespec that lives across the call.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    (rc == 0).then(|| Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_iterations_win_over_the_cost() {
        assert_eq!(DynamicConfig::iterations_for(2000, Some(7)), 7);
        assert!(DynamicConfig::iterations_for(2000, None) > 0);
    }

    #[test]
    fn calibration_counts_the_threads_cpu_time() {
        let before = thread_cpu_time().expect("Linux reads a thread's CPU time");
        let rate = iterations_per_us();
        let after = thread_cpu_time().unwrap();
        assert!(after > before, "the calibration ran on this thread");
        // 4 M rounds take milliseconds on any machine: the rate is finite and above the
        // floor of 1 round per microsecond only if a real duration was measured.
        assert!(rate.is_finite() && rate > 1.0, "{rate}");
    }

    #[test]
    fn route_shapes() {
        let cfg = DynamicConfig::default();
        let ok = parse_app_path(&cfg, "app/db1/v2/doc3", Some("OpenDocument")).unwrap().unwrap();
        assert_eq!(ok, AppPath { db: "db1", view: "v2", doc: "doc3" });
        assert!(parse_app_path(&cfg, "app/db1/v2/doc3", None).unwrap().is_ok());
        assert_eq!(parse_app_path(&cfg, "app/db1/v2", None), Some(Err(AppPathError::Shape)));
        assert_eq!(
            parse_app_path(&cfg, "app/a/b/c", Some("EditDocument")),
            Some(Err(AppPathError::Action))
        );
        assert_eq!(parse_app_path(&cfg, "apple/a/b/c", None), None);
        assert_eq!(parse_app_path(&cfg, "static/x", None), None);
    }

    #[test]
    fn deterministic_and_sized() {
        let a = compute_view("db", "v", 1000, 4096);
        assert_eq!(a, compute_view("db", "v", 1000, 4096));
        assert_ne!(a, compute_view("db", "v", 1001, 4096), "every round counts");
        assert_ne!(a, compute_view("db", "w", 1000, 4096));
        let app = AppPath { db: "db", view: "v", doc: "<d>" };
        let page = render_document(&app, &a, 2000);
        assert_eq!(page.len(), 2000);
        let title: &[u8] = b"<title>db/v/&lt;d&gt;</title>";
        assert!(page.windows(title.len()).any(|w| w == title));
        let other = render_document(&AppPath { doc: "e", ..app.clone() }, &a, 2000);
        assert_ne!(page, other);
    }
}

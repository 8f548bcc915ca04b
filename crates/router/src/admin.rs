//! The admin listener (127.0.0.1 by default, apart from the traffic port): `/` (the
//! live dashboard), `/stats` (JSON), `/metrics` (Prometheus text), `/targets?top=N`
//! (hottest targets and the nodes that hold them), `/healthz` (for liveness and
//! readiness probes) and `POST /purge?target=…[&mode=soft][&scope=prefix]` (the query of a
//! [`wire::Invalidation`]; answered like `PURGE` on the traffic listener, `purge.rs`;
//! whoever reaches this listener may purge, as it is bound to loopback by default).
//! One request per connection; answers are small.

use std::sync::Arc;
use std::time::Duration;

use http1::Status;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};

use crate::admin_metrics::metrics;
use crate::admin_stats::{stats, targets};
use crate::buf::IoBuf;
use crate::cluster::Cluster;
use crate::head;

/// An admin request must arrive within this long.
const ADMIN_TIMEOUT: Duration = Duration::from_secs(5);
/// Default and largest `top` for `/targets`.
const DEFAULT_TOP: usize = 20;
const MAX_TOP: usize = 10_000;

pub(crate) async fn run(listener: TcpListener, cluster: Arc<Cluster>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else { continue };
        let cluster = cluster.clone();
        tokio::spawn(async move {
            let _ = tokio::time::timeout(ADMIN_TIMEOUT, answer(stream, &cluster)).await;
        });
    }
}

async fn answer(mut stream: TcpStream, cluster: &Cluster) -> std::io::Result<()> {
    let limits = http1::Limits::default();
    let mut buf = IoBuf::new(limits.max_header_bytes + 1);
    let head = loop {
        match http1::parse_head(buf.filled(), &limits) {
            Ok(Some((head, _))) => break head,
            Ok(None) if !buf.is_full() => {
                if buf.fill(&mut stream).await? == 0 {
                    return Ok(());
                }
            }
            _ => {
                return reply(&mut stream, Status::BAD_REQUEST, "text/plain", "bad request\n").await
            }
        }
    };
    let top = head
        .query()
        .and_then(|q| q.split('&').find_map(|kv| kv.strip_prefix("top=")))
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(DEFAULT_TOP)
        .min(MAX_TOP);
    match head.path() {
        "/" | "/index.html" => {
            reply(&mut stream, Status::OK, "text/html; charset=utf-8", crate::dashboard::PAGE).await
        }
        "/healthz" => reply(&mut stream, Status::OK, "text/plain", "ok\n").await,
        "/purge" if head.method != http1::Method::Post => {
            let body = "a purge is POST /purge?target=/path[&mode=soft][&scope=prefix]\n";
            reply(&mut stream, Status::METHOD_NOT_ALLOWED, "text/plain", body).await
        }
        "/purge" => {
            let (status, body) = match wire::Invalidation::parse_query(head.query()) {
                Ok(inv) => crate::purge::report(cluster, inv).await,
                Err(e) => (Status::BAD_REQUEST, format!("{e}\n")),
            };
            reply(&mut stream, status, "text/plain", &body).await
        }
        "/stats" => {
            let body = serde_json::to_string(&stats(cluster)).unwrap_or_default();
            reply(&mut stream, Status::OK, "application/json", &body).await
        }
        "/metrics" => {
            reply(&mut stream, Status::OK, wire::METRICS_CONTENT_TYPE, &metrics(cluster)).await
        }
        "/targets" => {
            reply(&mut stream, Status::OK, "application/json", &targets(cluster, top).to_string())
                .await
        }
        _ => {
            reply(
                &mut stream,
                Status::NOT_FOUND,
                "text/plain",
                "try /, /stats, /metrics, /targets?top=N, /healthz or POST /purge?target=/path\n",
            )
            .await
        }
    }
}

async fn reply(
    stream: &mut TcpStream,
    status: Status,
    ctype: &str,
    body: &str,
) -> std::io::Result<()> {
    let mut out = Vec::with_capacity(body.len() + 128);
    head::simple_response(status, ctype, body.as_bytes(), true, &mut out);
    stream.write_all(&out).await
}

//! A minimal HTTP/1.1 client for the router's own requests to nodes (health checks, load
//! reports, invalidations): one fresh connection (TLS for a TLS node), `Connection:
//! close`, a bounded response.

use std::sync::Arc;
use std::time::Duration;

use http1::BodyFraming;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;

use crate::body::{self, BodyPlan};
use crate::buf::IoBuf;
use crate::head::{self, ResponseRules};
use crate::node_io::NodeIo;
use crate::upstream::Upstream;

/// Largest probe response (head and body) read.
const MAX_PROBE: usize = 64 * 1024;

/// Why a probe failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ProbeError {
    #[error("connect or I/O failed: {0}")]
    Io(#[from] std::io::Error),
    #[error("timed out")]
    Timeout,
    #[error("malformed or oversized response")]
    Malformed,
}

/// GET `path` from the node of `upstream` (over TLS with `node_tls` for a TLS node); the
/// status and body, all within `timeout`. A load report's poll names this router by
/// `poller` ([`wire::PollerId`]), so the node counts the routers that poll it.
pub(crate) async fn get(
    upstream: &Upstream,
    node_tls: Option<&Arc<rustls::ClientConfig>>,
    path: &str,
    poller: Option<wire::PollerId>,
    timeout: Duration,
) -> Result<(u16, Vec<u8>), ProbeError> {
    let request = |host: &str| {
        let mut head = http1::get_request(host, path, Some("larder-route"), true);
        if let Some(poller) = poller {
            // Before the blank line that ends the head.
            head.truncate(head.len() - 2);
            poller.write_field(&mut head);
            head.extend_from_slice(b"\r\n");
        }
        head
    };
    send(upstream, node_tls, &request, timeout).await
}

/// Send the request `request` renders for the node's `Host` (it must close the
/// connection) to the node of `upstream`; the status and body, all within `timeout`.
pub(crate) async fn send(
    upstream: &Upstream,
    node_tls: Option<&Arc<rustls::ClientConfig>>,
    request: &(dyn Fn(&str) -> Vec<u8> + Sync),
    timeout: Duration,
) -> Result<(u16, Vec<u8>), ProbeError> {
    let host = match &upstream.server_name {
        Some(name) => name.to_str().into_owned(),
        None => upstream.addr.to_string(),
    };
    let request = request(&host);
    let got = async {
        match &upstream.server_name {
            None => send_over::<TcpStream>(upstream, node_tls, &request, timeout).await,
            Some(_) => {
                send_over::<TlsStream<TcpStream>>(upstream, node_tls, &request, timeout).await
            }
        }
    };
    tokio::time::timeout(timeout, got).await.map_err(|_| ProbeError::Timeout)?
}

async fn send_over<S: NodeIo>(
    upstream: &Upstream,
    node_tls: Option<&Arc<rustls::ClientConfig>>,
    request: &[u8],
    timeout: Duration,
) -> Result<(u16, Vec<u8>), ProbeError> {
    let mut stream = S::connect(upstream.at(), node_tls, timeout).await?;
    stream.write_all(request).await?;
    let mut buf = IoBuf::new(MAX_PROBE);
    let rules = ResponseRules {
        max_headers: 64,
        via: "",
        head_request: false,
        client_keep_alive: false,
        client_minor: 1,
        node_name: None,
        router_field: None,
        upgrade: false,
    };
    let mut discard = Vec::new();
    let response = loop {
        discard.clear();
        match head::parse_response(buf.filled(), &rules, &mut discard) {
            Ok(Some((len, r))) if !r.is_interim() => {
                buf.consume(len);
                break r;
            }
            Ok(Some((len, _))) => buf.consume(len),
            Ok(None) if !buf.is_full() => {
                if buf.fill(&mut stream).await? == 0 {
                    return Err(ProbeError::Malformed);
                }
            }
            _ => return Err(ProbeError::Malformed),
        }
    };
    if let BodyFraming::Length(n) = response.framing {
        if n > MAX_PROBE as u64 {
            return Err(ProbeError::Malformed);
        }
    }
    let plan = BodyPlan {
        framing: response.framing,
        chunked_out: false,
        chunk_limits: http1::ChunkLimits::default(),
        timeout,
        max_bytes: MAX_PROBE as u64,
        splice_from: 0,
        pipes: None,
    };
    let mut body = Vec::new();
    let mut sink = BoundedSink(&mut body);
    let mut out = Vec::new();
    body::relay(&mut stream, &mut buf, &mut sink, &mut out, &plan)
        .await
        .map_err(|_| ProbeError::Malformed)?;
    Ok((response.status, body))
}

/// Collects a probe body, refusing to grow past [`MAX_PROBE`].
struct BoundedSink<'a>(&'a mut Vec<u8>);

impl crate::splice::Spliceable for BoundedSink<'_> {
    fn tcp(&self) -> Option<&tokio::net::TcpStream> {
        None
    }
}

impl tokio::io::AsyncWrite for BoundedSink<'_> {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
        data: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        let me = self.get_mut();
        if me.0.len() + data.len() > MAX_PROBE {
            return std::task::Poll::Ready(Err(std::io::ErrorKind::OutOfMemory.into()));
        }
        me.0.extend_from_slice(data);
        std::task::Poll::Ready(Ok(data.len()))
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}

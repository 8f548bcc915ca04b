//! Relaying a message body from one socket to another in bounded memory.
//!
//! Bodies are never held whole: bytes go out as they come in, through the connection's
//! fixed read buffer. A chunked body is decoded strictly and re-encoded canonically (chunk
//! extensions and trailers dropped), so what the next hop parses is exactly what the
//! router checked. Every read and write has a deadline.

use std::pin::Pin;
use std::task::Poll;
use std::time::Duration;

use http1::chunked::{encode_chunk_head, CHUNK_END, LAST_CHUNK};
use http1::{BodyFraming, ChunkError, ChunkEvent, ChunkLimits, ChunkedDecoder};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};

use crate::buf::IoBuf;
use crate::pipe_pool::PipePool;
use crate::splice::{self, Spliceable, Stop};

/// Pending output is written once it reaches this size.
const FLUSH_AT: usize = 16 * 1024;

/// Why a body could not be relayed, by side.
#[derive(Debug)]
pub(crate) enum BodyError {
    /// The sender failed: closed early, stalled, sent a malformed or oversized body.
    Source(SourceError),
    /// The receiver could not take the bytes in time.
    Sink,
}

#[derive(Debug)]
pub(crate) enum SourceError {
    Closed,
    Timeout,
    Chunk(ChunkError),
    TooLarge,
}

/// How one body is to be relayed.
pub(crate) struct BodyPlan<'a> {
    pub framing: BodyFraming,
    /// Re-encode as chunked (else a chunked body goes out as raw bytes).
    pub chunked_out: bool,
    pub chunk_limits: ChunkLimits,
    /// Longest pause for any read or write.
    pub timeout: Duration,
    /// Most body bytes accepted; 0 means no limit.
    pub max_bytes: u64,
    /// A body of known length with at least this many bytes still to come moves
    /// socket to socket by splice when both ends are plain TCP; 0 never splices.
    pub splice_from: u64,
    /// The router's pipes, for splicing; none never splices (a probe's body).
    pub pipes: Option<&'a PipePool>,
}

/// Write `out` to `dst` within `timeout` and clear it.
pub(crate) async fn flush<D: AsyncWrite + Unpin>(
    dst: &mut D,
    out: &mut Vec<u8>,
    timeout: Duration,
) -> Result<(), BodyError> {
    if out.is_empty() {
        return Ok(());
    }
    write_direct(dst, out, timeout).await?;
    out.clear();
    Ok(())
}

async fn refill<S: AsyncRead + Unpin>(
    src: &mut S,
    buf: &mut IoBuf,
    timeout: Duration,
) -> Result<(), BodyError> {
    match tokio::time::timeout(timeout, buf.fill(src)).await {
        Ok(Ok(0)) | Ok(Err(_)) => Err(BodyError::Source(SourceError::Closed)),
        Ok(Ok(_)) => Ok(()),
        Err(_) => Err(BodyError::Source(SourceError::Timeout)),
    }
}

/// Relay the body that starts at the front of `buf` (more comes from `src`) to `dst`.
/// `out` holds bytes already due to `dst` (a head); they go out with the first body
/// bytes. Returns the number of body bytes relayed; `buf` keeps what follows the body.
pub(crate) async fn relay<S, D>(
    src: &mut S,
    buf: &mut IoBuf,
    dst: &mut D,
    out: &mut Vec<u8>,
    plan: &BodyPlan<'_>,
) -> Result<u64, BodyError>
where
    S: AsyncRead + Spliceable + Unpin,
    D: AsyncWrite + Spliceable + Unpin,
{
    let t = plan.timeout;
    match plan.framing {
        BodyFraming::Empty => {
            flush(dst, out, t).await?;
            Ok(0)
        }
        BodyFraming::Length(n) => {
            if plan.max_bytes > 0 && n > plan.max_bytes {
                return Err(BodyError::Source(SourceError::TooLarge));
            }
            let mut left = n;
            let to_come = n.saturating_sub(buf.len() as u64);
            if let Some(pipes) = plan.pipes.filter(|_| plan.splice_from > 0) {
                if to_come >= plan.splice_from {
                    left = relay_spliced(src, buf, dst, out, n, pipes, t).await?;
                }
            }
            loop {
                let take = left.min(buf.len() as u64) as usize;
                if take > 0 {
                    if out.is_empty() {
                        write_direct(dst, &buf.filled()[..take], t).await?;
                    } else {
                        out.extend_from_slice(&buf.filled()[..take]);
                    }
                    buf.consume(take);
                    left -= take as u64;
                }
                flush(dst, out, t).await?;
                if left == 0 {
                    return Ok(n);
                }
                refill(src, buf, t).await?;
            }
        }
        BodyFraming::Chunked => relay_chunked(src, buf, dst, out, plan).await,
        BodyFraming::UntilClose => {
            let mut total = 0u64;
            loop {
                total += buf.len() as u64;
                out.extend_from_slice(buf.filled());
                buf.clear();
                flush(dst, out, t).await?;
                match tokio::time::timeout(t, buf.fill(src)).await {
                    Ok(Ok(0)) => return Ok(total),
                    Ok(Ok(_)) => {}
                    Ok(Err(_)) => return Err(BodyError::Source(SourceError::Closed)),
                    Err(_) => return Err(BodyError::Source(SourceError::Timeout)),
                }
            }
        }
    }
}

/// The first `n` bytes of a body of length `n`: those already in `buf` go out by copy
/// (with `out`), the rest socket to socket by splice. Returns how many bytes are left for
/// the copy path: none, unless the kernel refused to splice (or an end is not plain TCP).
async fn relay_spliced<S, D>(
    src: &mut S,
    buf: &mut IoBuf,
    dst: &mut D,
    out: &mut Vec<u8>,
    n: u64,
    pipes: &PipePool,
    timeout: Duration,
) -> Result<u64, BodyError>
where
    S: Spliceable,
    D: AsyncWrite + Spliceable + Unpin,
{
    if src.tcp().is_none() || dst.tcp().is_none() {
        return Ok(n);
    }
    let take = n.min(buf.len() as u64) as usize;
    out.extend_from_slice(&buf.filled()[..take]);
    buf.consume(take);
    flush(dst, out, timeout).await?;
    let rest = n - take as u64;
    let (Some(from), Some(to)) = (src.tcp(), dst.tcp()) else { return Ok(rest) };
    match splice::relay(pipes, from, to, rest, timeout).await {
        Ok(()) => Ok(0),
        Err(Stop::Refused { moved }) => Ok(rest - moved),
        Err(Stop::SourceClosed) => Err(BodyError::Source(SourceError::Closed)),
        Err(Stop::SourceTimeout) => Err(BodyError::Source(SourceError::Timeout)),
        Err(Stop::Sink) => Err(BodyError::Sink),
    }
}

/// Write all of `bytes` to `dst` within `timeout`. A socket with room takes them at once,
/// so the first attempt goes without a timer (arming and dropping one per write would cost
/// more than the write's own bookkeeping); only a write that has to wait gets a deadline.
async fn write_direct<D: AsyncWrite + Unpin>(
    dst: &mut D,
    bytes: &[u8],
    timeout: Duration,
) -> Result<(), BodyError> {
    let mut written = 0;
    let at_once = std::future::poll_fn(|cx| {
        while written < bytes.len() {
            match Pin::new(&mut *dst).poll_write(cx, &bytes[written..]) {
                Poll::Ready(Ok(0)) | Poll::Ready(Err(_)) => {
                    return Poll::Ready(Err(BodyError::Sink))
                }
                Poll::Ready(Ok(n)) => written += n,
                Poll::Pending => break,
            }
        }
        Poll::Ready(Ok(()))
    });
    at_once.await?;
    if written == bytes.len() {
        return Ok(());
    }
    match tokio::time::timeout(timeout, dst.write_all(&bytes[written..])).await {
        Ok(Ok(())) => Ok(()),
        _ => Err(BodyError::Sink),
    }
}

async fn relay_chunked<S, D>(
    src: &mut S,
    buf: &mut IoBuf,
    dst: &mut D,
    out: &mut Vec<u8>,
    plan: &BodyPlan<'_>,
) -> Result<u64, BodyError>
where
    S: AsyncRead + Unpin,
    D: AsyncWrite + Unpin,
{
    let mut decoder = ChunkedDecoder::new(plan.chunk_limits);
    let mut total = 0u64;
    loop {
        while !buf.is_empty() {
            let (used, event) =
                decoder.feed(buf.filled()).map_err(|e| BodyError::Source(SourceError::Chunk(e)))?;
            match event {
                ChunkEvent::Data { start, len } => {
                    total += len as u64;
                    if plan.max_bytes > 0 && total > plan.max_bytes {
                        return Err(BodyError::Source(SourceError::TooLarge));
                    }
                    if plan.chunked_out {
                        encode_chunk_head(len, out);
                    }
                    out.extend_from_slice(&buf.filled()[start..start + len]);
                    if plan.chunked_out {
                        out.extend_from_slice(CHUNK_END);
                    }
                }
                ChunkEvent::End => {
                    buf.consume(used);
                    if plan.chunked_out {
                        out.extend_from_slice(LAST_CHUNK);
                    }
                    flush(dst, out, plan.timeout).await?;
                    return Ok(total);
                }
                ChunkEvent::NeedMore => {}
            }
            buf.consume(used);
            if out.len() >= FLUSH_AT {
                flush(dst, out, plan.timeout).await?;
            }
        }
        flush(dst, out, plan.timeout).await?;
        refill(src, buf, plan.timeout).await?;
    }
}

/// Check the chunked body bytes already received, without consuming them, so a request
/// whose first chunk is malformed is refused before anything is sent upstream.
pub(crate) fn precheck_chunked(bytes: &[u8], limits: ChunkLimits) -> Result<(), ChunkError> {
    let mut decoder = ChunkedDecoder::new(limits);
    let mut at = 0;
    while at < bytes.len() {
        let (used, event) = decoder.feed(&bytes[at..])?;
        at += used;
        if matches!(event, ChunkEvent::End | ChunkEvent::NeedMore) {
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};

    use super::*;

    async fn pair() -> (TcpStream, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let near = TcpStream::connect(listener.local_addr().unwrap()).await.unwrap();
        let (far, _) = listener.accept().await.unwrap();
        (near, far)
    }

    /// A Content-Length body spliced, copied, or spliced until the kernel refuses (at the
    /// start, in the middle) and copied from there: the same bytes arrive, once, with the
    /// head first, and what follows the body is left for the next message.
    #[test]
    fn a_length_body_arrives_exact_whether_spliced_copied_or_refused_midway() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let body: Vec<u8> = (0..200_000u32).map(|i| (i * 7 + i / 251) as u8).collect();
        let cases = [(0, None), (1, None), (1, Some(0)), (1, Some(70_000)), (150_000, None)];
        let pipes = PipePool::default();
        for (splice_from, refuse) in cases {
            splice::tests::refuse_from(refuse);
            rt.block_on(async {
                let (mut feeder, mut src) = pair().await;
                let (mut dst, mut reader) = pair().await;
                let sent = body.clone();
                let feed = tokio::spawn(async move {
                    feeder.write_all(&sent).await.unwrap();
                    feeder.write_all(b"NEXT").await.unwrap();
                    feeder
                });
                let mut buf = IoBuf::new(32 * 1024);
                buf.fill(&mut src).await.unwrap();
                let mut out = b"HEAD".to_vec();
                let plan = BodyPlan {
                    framing: BodyFraming::Length(body.len() as u64),
                    chunked_out: false,
                    chunk_limits: ChunkLimits::default(),
                    timeout: Duration::from_secs(10),
                    max_bytes: 0,
                    splice_from,
                    pipes: Some(&pipes),
                };
                let read = tokio::spawn(async move {
                    let mut got = vec![0u8; 4 + 200_000];
                    reader.read_exact(&mut got).await.unwrap();
                    got
                });
                let n = relay(&mut src, &mut buf, &mut dst, &mut out, &plan).await.unwrap();
                assert_eq!(n, body.len() as u64);
                let got = read.await.unwrap();
                assert_eq!(&got[..4], b"HEAD");
                assert!(got[4..] == body[..], "case {splice_from} {refuse:?}: body differs");
                let _feeder = feed.await.unwrap();
                while buf.len() < 4 {
                    buf.fill(&mut src).await.unwrap();
                }
                assert_eq!(buf.filled(), b"NEXT", "case {splice_from} {refuse:?}");
            });
        }
        splice::tests::refuse_from(None);
    }
}

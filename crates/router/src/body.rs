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
pub(crate) struct BodyPlan {
    pub framing: BodyFraming,
    /// Re-encode as chunked (else a chunked body goes out as raw bytes).
    pub chunked_out: bool,
    pub chunk_limits: ChunkLimits,
    /// Longest pause for any read or write.
    pub timeout: Duration,
    /// Most body bytes accepted; 0 means no limit.
    pub max_bytes: u64,
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
    plan: &BodyPlan,
) -> Result<u64, BodyError>
where
    S: AsyncRead + Unpin,
    D: AsyncWrite + Unpin,
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
    plan: &BodyPlan,
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

//! A tunnel: once a node answered an upgrade request (a WebSocket handshake) with `101
//! Switching Protocols`, the client connection and that node connection carry another
//! protocol, so the router copies bytes both ways, each direction on its own (a side may
//! close its half and still read), until both sides closed, nothing moved either way for
//! the idle time, or the router drains; then both connections close.
//!
//! The bytes that came with the handshake on either side go first, so a client that
//! sends its first frames right behind the request loses none. Once one side has closed
//! its half, the other gets the shorter `half_closed` time to follow, not the whole idle
//! time.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::time::Instant;

use crate::buf::IoBuf;
use crate::drain::DrainWait;

/// Bytes read at a time in each direction.
const CHUNK: usize = 16 * 1024;

/// Why a tunnel ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum TunnelEnd {
    /// Both sides closed (or one broke it).
    Closed,
    /// Nothing moved for the idle time.
    Idle,
    /// The router is draining.
    Drained,
}

/// What a tunnel carried.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Tunnelled {
    /// Bytes from the node to the client (the handshake's answer not counted).
    pub to_client: u64,
    pub end: TunnelEnd,
}

/// How long a tunnel may go without a byte.
#[derive(Copy, Clone, Debug)]
pub(crate) struct TunnelTimes {
    /// Both directions open.
    pub idle: Duration,
    /// One side has closed its half.
    pub half_closed: Duration,
}

/// Tunnel `client` and `upstream`: first `head` (the `101` for the client) and what each
/// side sent past the handshake (`client_buf`, `upstream_buf`), then both directions.
pub(crate) async fn run<C, U>(
    client: &mut C,
    client_buf: &mut IoBuf,
    upstream: &mut U,
    upstream_buf: &mut IoBuf,
    head: &[u8],
    times: TunnelTimes,
    drain: &mut DrainWait,
) -> Tunnelled
where
    C: AsyncRead + AsyncWrite + Unpin,
    U: AsyncRead + AsyncWrite + Unpin,
{
    let closed = Tunnelled { to_client: 0, end: TunnelEnd::Closed };
    let early = upstream_buf.filled().len() as u64;
    if client.write_all(head).await.is_err()
        || client.write_all(upstream_buf.filled()).await.is_err()
        || upstream.write_all(client_buf.filled()).await.is_err()
    {
        return closed;
    }
    upstream_buf.clear();
    client_buf.clear();
    let epoch = Instant::now();
    let active = AtomicU64::new(0);
    let one_closed = AtomicBool::new(false);
    let end = {
        let (mut client_in, mut client_out) = tokio::io::split(&mut *client);
        let (mut upstream_in, mut upstream_out) = tokio::io::split(&mut *upstream);
        let both = async {
            let up = async {
                let n = pump(&mut client_in, &mut upstream_out, &active, epoch).await;
                one_closed.store(true, Ordering::Relaxed);
                n
            };
            let down = async {
                let n = pump(&mut upstream_in, &mut client_out, &active, epoch).await;
                one_closed.store(true, Ordering::Relaxed);
                n
            };
            tokio::join!(up, down)
        };
        let watchdog = async {
            loop {
                let idle = match one_closed.load(Ordering::Relaxed) {
                    false => times.idle,
                    true => times.half_closed.min(times.idle),
                };
                let due = epoch + Duration::from_millis(active.load(Ordering::Relaxed)) + idle;
                if Instant::now() >= due {
                    return;
                }
                tokio::time::sleep_until(due).await;
            }
        };
        tokio::select! {
            (_, down) = both => Tunnelled { to_client: early + down, end: TunnelEnd::Closed },
            _ = watchdog => Tunnelled { to_client: early, end: TunnelEnd::Idle },
            _ = drain => Tunnelled { to_client: early, end: TunnelEnd::Drained },
        }
    };
    if end.end != TunnelEnd::Closed {
        // End both cleanly (FIN, or TLS close_notify), each bounded: a peer that does not
        // read cannot hold the connection.
        let bound = Duration::from_secs(1);
        let _ = tokio::time::timeout(bound, client.shutdown()).await;
        let _ = tokio::time::timeout(bound, upstream.shutdown()).await;
    }
    end
}

/// Copy `from` to `to` until `from` ends or either breaks, then close `to`'s half; the
/// bytes copied. Each piece moved marks the tunnel active (milliseconds since `epoch`).
async fn pump<R, W>(from: &mut R, to: &mut W, active: &AtomicU64, epoch: Instant) -> u64
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut buf = vec![0u8; CHUNK];
    let mut total = 0u64;
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if to.write_all(&buf[..n]).await.is_err() {
            break;
        }
        total += n as u64;
        let now = u64::try_from(epoch.elapsed().as_millis()).unwrap_or(u64::MAX);
        active.store(now, Ordering::Relaxed);
    }
    let _ = to.shutdown().await;
    total
}

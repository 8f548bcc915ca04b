//! Socket reads and writes for the hot path, shaped to cost as few system calls and timers
//! as nginx's: a read that drains the socket leaves it marked not-ready (no `EAGAIN` read
//! per request), and a write tries the socket at once, arming a timer only if it must wait.

use std::io::{self, IoSlice};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};
use tokio::io::Interest;
use tokio::net::TcpStream;
use tokio::time::timeout_at;

/// Wait until `stream` is readable, then read once into the spare capacity of `buf` (which
/// `prepare` gives room first, after readiness, so an idle connection holds no buffer).
///
/// A read shorter than the room offered means the socket was drained, so its readiness is
/// cleared then and there, as nginx does (`rev->ready = 0` in `ngx_unix_recv`): the next
/// wait goes straight to the event loop instead of costing a read that says `EAGAIN`.
/// Clearing is safe with edge-triggered epoll: bytes that arrive later raise a new event,
/// and tokio ignores the clear if one arrived meanwhile.
pub async fn read_some(
    stream: &TcpStream,
    buf: &mut Vec<u8>,
    mut prepare: impl FnMut(&mut Vec<u8>),
) -> io::Result<usize> {
    let fd = stream.as_raw_fd();
    loop {
        stream.readable().await?;
        prepare(buf);
        let mut drained = None;
        let res = stream.try_io(Interest::READABLE, || {
            let spare = buf.spare_capacity_mut();
            let room = spare.len();
            // SAFETY: `spare` is writable memory of `room` bytes owned by `buf`; recv writes
            // at most `room` bytes into it and the fd stays open while `stream` is borrowed.
            let n = unsafe { libc::recv(fd, spare.as_mut_ptr().cast(), room, 0) };
            if n < 0 {
                return Err(io::Error::last_os_error());
            }
            let n = n as usize;
            // SAFETY: recv initialised the first `n` bytes of the spare capacity.
            unsafe { buf.set_len(buf.len() + n) };
            if n > 0 && n < room {
                drained = Some(n);
                return Err(io::ErrorKind::WouldBlock.into());
            }
            Ok(n)
        });
        match (res, drained) {
            (_, Some(n)) => return Ok(n),
            (Err(e), None) if e.kind() == io::ErrorKind::WouldBlock => continue,
            (Err(e), None) if e.kind() == io::ErrorKind::Interrupted => continue,
            (other, None) => return other,
        }
    }
}

/// Write all of `head` then all of `body` (one `writev` when the socket takes it all, the
/// usual case), so a cached body goes out from its shared buffer without being copied.
/// Only a socket that cannot take everything at once costs a timer: it gets `limit` to
/// drain, measured from the first wait.
pub async fn write_head_and_body(
    stream: &TcpStream,
    head: &[u8],
    body: &[u8],
    limit: Duration,
) -> io::Result<()> {
    let (mut h, mut b) = (0, 0);
    let mut deadline = None;
    while h < head.len() || b < body.len() {
        let parts = [IoSlice::new(&head[h..]), IoSlice::new(&body[b..])];
        match stream.try_write_vectored(&parts) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(mut n) => {
                let from_head = n.min(head.len() - h);
                h += from_head;
                n -= from_head;
                b += n;
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                let at = *deadline.get_or_insert_with(|| Instant::now() + limit);
                timeout_at(at.into(), stream.writable())
                    .await
                    .map_err(|_| io::Error::from(io::ErrorKind::TimedOut))??;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

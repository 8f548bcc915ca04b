//! Connection handoff, the node's side: a router on this host passes a client connection
//! whose first request it placed here, as a file descriptor over the node's Unix socket
//! (SCM_RIGHTS), with the bytes it already read ([`wire::Handoff`]). The node answers
//! before it touches the connection ([`HandoffStep::Adopt`] or [`HandoffStep::Refuse`]),
//! and serves it, with its ordinary connection code starting from those bytes, only once
//! the router commits (then it says [`HandoffStep::Started`] first): a router that gave up
//! waiting closes the Unix stream instead, and the connection is dropped unread, so a
//! client is never served twice.

use crate::connection::serve_connection_from;
use crate::handoff_config::HandoffConfig;
use crate::state::NodeState;
use rustix::net::{recvmsg, RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags};
use std::io::{self, IoSliceMut};
use std::mem::MaybeUninit;
use std::os::fd::OwnedFd;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt, Interest};
use tokio::net::{TcpStream, UnixListener, UnixStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use wire::{Handoff, HandoffStep};

/// Bind the socket, replacing a stale one an earlier run left behind.
pub(crate) fn bind(cfg: &HandoffConfig) -> io::Result<UnixListener> {
    let path = &cfg.socket;
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if !meta.file_type().is_socket() {
            let msg = format!("{} exists and is not a socket", path.display());
            return Err(io::Error::new(io::ErrorKind::AlreadyExists, msg));
        }
        std::fs::remove_file(path)?;
    }
    let listener = UnixListener::bind(path)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    Ok(listener)
}

/// Remove the socket file on the way out.
pub(crate) fn unlink(path: &Path) {
    let _ = std::fs::remove_file(path);
}

/// Take offers until the listener fails; `slots` are the node's connection slots.
pub(crate) async fn accept(node: Rc<NodeState>, listener: UnixListener, slots: Arc<Semaphore>) {
    let Some(cfg) = node.config.handoff.clone() else { return };
    let adopted = Arc::new(Semaphore::new(cfg.max_connections));
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            // Out of descriptors: back off instead of spinning on an error that repeats.
            tokio::time::sleep(Duration::from_millis(20)).await;
            continue;
        };
        if node.is_shutting_down() {
            // Closed unanswered: the router relays the request itself.
            continue;
        }
        let (node, slots, adopted) = (Rc::clone(&node), Arc::clone(&slots), Arc::clone(&adopted));
        let timeout = cfg.timeout;
        let max = cfg.max_message_bytes;
        tokio::task::spawn_local(async move {
            let offer = tokio::time::timeout(timeout, take(stream, max, &slots, &adopted)).await;
            if let Ok(Some((client, message, permits))) = offer {
                serve_connection_from(node, client, message.client, message.bytes).await;
                drop(permits);
            }
        });
    }
}

/// The node's half of one exchange; `Some` when the router committed.
async fn take(
    mut router: UnixStream,
    max: usize,
    slots: &Arc<Semaphore>,
    adopted: &Arc<Semaphore>,
) -> Option<(TcpStream, Handoff, [OwnedSemaphorePermit; 2])> {
    let Ok((message, fd)) = receive(&router, max).await else {
        let _ = router.write_all(&[HandoffStep::Refuse.byte()]).await;
        return None;
    };
    let client = fd.and_then(tcp_client);
    let permits = Arc::clone(adopted)
        .try_acquire_owned()
        .ok()
        .zip(Arc::clone(slots).try_acquire_owned().ok())
        .map(|(a, b)| [a, b]);
    let (Some(client), Some(permits)) = (client, permits) else {
        let _ = router.write_all(&[HandoffStep::Refuse.byte()]).await;
        return None;
    };
    router.write_all(&[HandoffStep::Adopt.byte()]).await.ok()?;
    let mut commit = [0u8; 1];
    router.read_exact(&mut commit).await.ok()?;
    if HandoffStep::from_byte(commit[0]) != Some(HandoffStep::Commit) {
        return None;
    }
    // Committed: the connection is this node's whatever happens to the router now.
    let _ = router.write_all(&[HandoffStep::Started.byte()]).await;
    Some((client, message, permits))
}

/// A connected TCP socket, ready for the loop; `None` for any other descriptor.
fn tcp_client(fd: OwnedFd) -> Option<TcpStream> {
    let std = std::net::TcpStream::from(fd);
    std.peer_addr().ok()?;
    std.set_nonblocking(true).ok()?;
    let _ = std.set_nodelay(true);
    TcpStream::from_std(std).ok()
}

/// Why an offer could not be read.
#[derive(Debug)]
enum Unreadable {
    Io,
    Message,
}

impl From<io::Error> for Unreadable {
    fn from(_: io::Error) -> Self {
        Unreadable::Io
    }
}

/// Read one message, and the descriptor that came with it.
async fn receive(
    router: &UnixStream,
    max: usize,
) -> Result<(Handoff, Option<OwnedFd>), Unreadable> {
    let mut buf = vec![0u8; wire::handoff::HANDOFF_HEADER_MAX + max];
    let mut filled = 0;
    let mut fd = None;
    loop {
        let n = recv_with_descriptor(router, &mut buf[filled..], &mut fd).await?;
        if n == 0 {
            return Err(Unreadable::Io);
        }
        filled += n;
        match Handoff::decode(&buf[..filled], max) {
            Ok(Some((message, _))) => return Ok((message, fd)),
            Ok(None) if filled < buf.len() => {}
            Ok(None) | Err(_) => return Err(Unreadable::Message),
        }
    }
}

/// One read from the router; a descriptor that arrives is kept in `fd` (the first only:
/// any other is closed).
async fn recv_with_descriptor(
    router: &UnixStream,
    buf: &mut [u8],
    fd: &mut Option<OwnedFd>,
) -> io::Result<usize> {
    router
        .async_io(Interest::READABLE, || {
            let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
            let mut control = RecvAncillaryBuffer::new(&mut space);
            let mut iov = [IoSliceMut::new(buf)];
            let got = recvmsg(router, &mut iov, &mut control, RecvFlags::CMSG_CLOEXEC)?;
            for message in control.drain() {
                if let RecvAncillaryMessage::ScmRights(fds) = message {
                    for received in fds {
                        fd.get_or_insert(received);
                    }
                }
            }
            Ok(got.bytes)
        })
        .await
}

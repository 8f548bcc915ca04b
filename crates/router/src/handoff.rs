//! Connection handoff, the router's side: pass a plain HTTP/1.1 client connection, whose
//! first request has been placed, to that request's node on this host as a file
//! descriptor over the node's Unix socket (SCM_RIGHTS), with the bytes already read
//! ([`wire::Handoff`]). The node answers before it touches the connection; the router
//! commits, and only then lets its own copy go. Anything else (no socket, a refusal, an
//! error, no answer within the bound) leaves the connection the router's, unread by the
//! node, and the request is relayed as usual: a failed handoff costs time, never a request.

use std::io::{self, IoSlice};
use std::mem::MaybeUninit;
use std::net::SocketAddr;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rustix::net::{sendmsg, SendAncillaryBuffer, SendAncillaryMessage, SendFlags};
use tokio::io::{AsyncReadExt, AsyncWriteExt, Interest};
use tokio::net::{TcpStream, UnixStream};
use wire::{Handoff, HandoffStep};

use crate::poison::Recover;

/// Where a node takes connections, as its last load report said (none: it takes none).
#[derive(Debug, Default)]
pub(crate) struct HandoffSocket(Mutex<Option<Arc<Path>>>);

impl HandoffSocket {
    /// Keep what a load report said, allocating only when it changed.
    pub(crate) fn set(&self, reported: Option<&str>) {
        let mut at = self.0.lock().recover();
        if at.as_deref().map(Path::as_os_str) != reported.map(std::ffi::OsStr::new) {
            *at = reported.map(|p| Arc::from(PathBuf::from(p)));
        }
    }

    pub(crate) fn get(&self) -> Option<Arc<Path>> {
        self.0.lock().recover().clone()
    }
}

/// What `/stats` and `/metrics` count of handoffs.
#[derive(Debug, Default)]
pub(crate) struct HandoffCounts {
    handed: AtomicU64,
    fallbacks: AtomicU64,
}

impl HandoffCounts {
    pub(crate) fn handed(&self) -> u64 {
        self.handed.load(Ordering::Relaxed)
    }

    pub(crate) fn fallbacks(&self) -> u64 {
        self.fallbacks.load(Ordering::Relaxed)
    }

    fn count(&self, handed: bool) {
        let c = if handed { &self.handed } else { &self.fallbacks };
        c.fetch_add(1, Ordering::Relaxed);
    }
}

/// Why a node did not take a connection.
#[derive(Debug)]
enum Declined {
    /// No socket at the path, nobody listening, or the node went away mid-way.
    Io,
    /// The node answered that it will not take it (full, or the message too large).
    Refused,
    /// No answer within the bound.
    TimedOut,
}

impl From<io::Error> for Declined {
    fn from(_: io::Error) -> Self {
        Declined::Io
    }
}

/// Whether the first request's bytes can go to a node as they are: an origin-form target
/// (`GET /x`). An absolute-form target is rewritten by the router, which a node would
/// not do.
pub(crate) fn origin_form(bytes: &[u8]) -> bool {
    let line = bytes.trim_ascii_start();
    line.iter().position(|&b| b == b' ').is_some_and(|sp| line.get(sp + 1) == Some(&b'/'))
}

/// Offer `client` (its first `bytes` already read, `peer` its address) to the node at
/// `socket`, waiting at most `wait`. True when the node took it: the caller then drops
/// its copy without reading, writing or shutting it down.
pub(crate) async fn offer(
    socket: &Path,
    client: &TcpStream,
    peer: SocketAddr,
    bytes: &[u8],
    wait: Duration,
    counts: &HandoffCounts,
) -> bool {
    let deadline = tokio::time::Instant::now() + wait;
    let committed = tokio::time::timeout_at(deadline, offered(socket, client, peer, bytes));
    let handed = match committed.await {
        Ok(Ok(node)) => started(node, deadline).await,
        Ok(Err(e)) => Err(e),
        Err(_) => Err(Declined::TimedOut),
    };
    counts.count(handed.is_ok());
    handed.is_ok()
}

/// Step 4: the node says it starts serving. End of stream instead: it died before it
/// touched the connection, which is still the router's. No answer in time after a commit
/// cannot be told from a node that is merely slow and will serve, so the connection is
/// left to it.
async fn started(mut node: UnixStream, deadline: tokio::time::Instant) -> Result<(), Declined> {
    let mut answer = [0u8; 1];
    match tokio::time::timeout_at(deadline, node.read_exact(&mut answer)).await {
        Ok(Ok(_)) if HandoffStep::from_byte(answer[0]) == Some(HandoffStep::Started) => Ok(()),
        Ok(_) => Err(Declined::Refused),
        Err(_) => Ok(()),
    }
}

/// Steps 1 to 3 of [`wire::handoff`]: message and descriptor, the node's answer, commit.
/// Dropping the Unix stream before the commit (an error, or the caller's timeout) tells
/// the node to let the connection go unread.
async fn offered(
    socket: &Path,
    client: &TcpStream,
    peer: SocketAddr,
    bytes: &[u8],
) -> Result<UnixStream, Declined> {
    let mut node = UnixStream::connect(socket).await?;
    let mut message = Vec::with_capacity(wire::handoff::HANDOFF_HEADER_MAX + bytes.len());
    Handoff { client: peer, bytes: bytes.to_vec() }.encode(&mut message);
    let sent = send_with_descriptor(&node, &message, client).await?;
    node.write_all(&message[sent..]).await?;
    let mut answer = [0u8; 1];
    node.read_exact(&mut answer).await?;
    if HandoffStep::from_byte(answer[0]) != Some(HandoffStep::Adopt) {
        return Err(Declined::Refused);
    }
    node.write_all(&[HandoffStep::Commit.byte()]).await?;
    Ok(node)
}

/// Send the start of `message` with `client`'s descriptor beside its first byte; returns
/// how many bytes went (the rest follows as plain writes).
async fn send_with_descriptor(
    node: &UnixStream,
    message: &[u8],
    client: &TcpStream,
) -> io::Result<usize> {
    node.async_io(Interest::WRITABLE, || {
        let fds = [client.as_fd()];
        let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
        let mut control = SendAncillaryBuffer::new(&mut space);
        if !control.push(SendAncillaryMessage::ScmRights(&fds)) {
            return Err(io::Error::other("no room for the descriptor"));
        }
        let iov = [IoSlice::new(message)];
        Ok(sendmsg(node, &iov, &mut control, SendFlags::NOSIGNAL)?)
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_origin_form_targets_go_as_they_are() {
        assert!(origin_form(b"GET /a HTTP/1.1\r\n"));
        assert!(origin_form(b"\r\nHEAD /?q HTTP/1.1\r\n"));
        assert!(!origin_form(b"GET http://h/a HTTP/1.1\r\n"));
        assert!(!origin_form(b"OPTIONS * HTTP/1.1\r\n"));
        assert!(!origin_form(b"GET"));
    }

    #[test]
    fn a_socket_is_kept_as_reported() {
        let s = HandoffSocket::default();
        assert!(s.get().is_none());
        s.set(Some("/run/n1.sock"));
        let first = s.get().unwrap();
        s.set(Some("/run/n1.sock"));
        assert!(Arc::ptr_eq(&first, &s.get().unwrap()), "unchanged: not reallocated");
        s.set(None);
        assert!(s.get().is_none());
    }
}

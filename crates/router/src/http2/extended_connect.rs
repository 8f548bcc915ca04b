//! Extended CONNECT (RFC 8441): a WebSocket, or another protocol an HTTP/1.1 node
//! switches to, over one HTTP/2 stream. The client sends `CONNECT` with `:protocol`; the
//! router asks the picked node for the same switch as an HTTP/1.1 upgrade (`GET`,
//! `Connection: upgrade`, `Upgrade: <protocol>`, and for a WebSocket a fresh
//! `Sec-WebSocket-Key`, which HTTP/2 does without), and once the node answers `101` the
//! client gets `200` and the stream's DATA frames carry the tunnel both ways, through the
//! same tunnel as an HTTP/1.1 upgrade (`crate::tunnel`).
//!
//! The router offers it (`SETTINGS_ENABLE_CONNECT_PROTOCOL`) only when upgrades are on
//! (`limits.upgrades`).

use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use base64::Engine as _;
use bytes::{Buf, Bytes};
use h2::{RecvStream, SendStream};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The protocol an extended CONNECT asks for (`:protocol`), if the request is one.
pub(super) fn protocol(parts: &http::request::Parts) -> Option<&str> {
    if parts.method != http::Method::CONNECT {
        return None;
    }
    parts.extensions.get::<h2::ext::Protocol>().map(h2::ext::Protocol::as_str)
}

/// The fields that turn the request into an HTTP/1.1 upgrade to `protocol`, appended to
/// a head through `push` (name, value).
pub(super) fn upgrade_fields(protocol: &str, mut push: impl FnMut(&[u8], &[u8])) {
    push(b"connection", b"upgrade");
    push(b"upgrade", protocol.as_bytes());
    if protocol.eq_ignore_ascii_case("websocket") {
        push(b"sec-websocket-key", websocket_key().as_bytes());
    }
}

/// A WebSocket handshake key (RFC 6455 §4.1): 16 random bytes in base64. The node's
/// `Sec-WebSocket-Accept` answers it; the HTTP/2 client never sees either.
fn websocket_key() -> String {
    let mut nonce = [0u8; 16];
    let random = rustls::crypto::ring::default_provider().secure_random;
    if random.fill(&mut nonce).is_err() {
        // Not a secret: any value the node can answer will do.
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
        nonce = now.map_or(0, |d| d.as_nanos()).to_le_bytes();
    }
    base64::engine::general_purpose::STANDARD.encode(nonce)
}

/// Response fields that belong to the HTTP/1.1 handshake, never sent on the stream's
/// `200` (RFC 8441 §5).
pub(super) const HANDSHAKE_ONLY: [&str; 1] = ["sec-websocket-accept"];

/// One HTTP/2 stream as a byte stream: reads are its DATA frames (their window given
/// back as they are read), writes go out as DATA frames as the client's window grants
/// room, and shutting down ends the stream.
pub(super) struct StreamIo<'a> {
    pub(super) recv: &'a mut RecvStream,
    pub(super) send: SendStream<Bytes>,
    /// What a DATA frame brought beyond the last read's room.
    pub(super) pending: Bytes,
}

impl AsyncRead for StreamIo<'_> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        out: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        while self.pending.is_empty() {
            match ready!(self.recv.poll_data(cx)) {
                Some(Ok(data)) => {
                    let _ = self.recv.flow_control().release_capacity(data.len());
                    self.pending = data;
                }
                None => return Poll::Ready(Ok(())),
                Some(Err(e)) => return Poll::Ready(Err(io::Error::other(e))),
            }
        }
        let n = self.pending.len().min(out.remaining());
        out.put_slice(&self.pending[..n]);
        self.pending.advance(n);
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for StreamIo<'_> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        if data.is_empty() {
            return Poll::Ready(Ok(0));
        }
        self.send.reserve_capacity(data.len());
        let mut room = self.send.capacity();
        while room == 0 {
            room = match ready!(self.send.poll_capacity(cx)) {
                Some(Ok(n)) => n,
                Some(Err(e)) => return Poll::Ready(Err(io::Error::other(e))),
                None => return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into())),
            };
        }
        let n = room.min(data.len());
        match self.send.send_data(Bytes::copy_from_slice(&data[..n]), false) {
            Ok(()) => Poll::Ready(Ok(n)),
            Err(e) => Poll::Ready(Err(io::Error::other(e))),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        // h2 sends what it was given as the connection is driven.
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        // Ending an already ended stream fails harmlessly.
        let _ = self.send.send_data(Bytes::new(), true);
        Poll::Ready(Ok(()))
    }
}

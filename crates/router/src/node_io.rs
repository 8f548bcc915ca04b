//! What a connection to a node runs over: plain TCP, or TLS over TCP for a node given as
//! `https://`. The request walk in `conn` is generic over it, so a plain node's requests
//! run the very code they ran before TLS to nodes existed, and only a TLS node's pay for
//! its session (its attempt is boxed, the upload watch splits the stream).

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;

use crate::log::event;
use crate::splice::Spliceable;

/// Where a node is: its address, and for a TLS node the name its certificate is checked
/// against.
#[derive(Clone, Copy)]
pub(crate) struct NodeAt<'a> {
    pub addr: SocketAddr,
    pub server_name: Option<&'a ServerName<'static>>,
}

pub(crate) trait NodeIo:
    AsyncRead + AsyncWrite + Spliceable + Unpin + Send + Sized + 'static
{
    /// True when the connection is still open and nothing waits unread on it (fit to
    /// take a request); a connection that fails this is dropped.
    fn idle_and_open(&mut self) -> bool;

    /// A fresh connection to the node `at`, the TLS handshake (with `tls`) included,
    /// within `timeout`.
    fn connect(
        at: NodeAt<'_>,
        tls: Option<&Arc<rustls::ClientConfig>>,
        timeout: Duration,
    ) -> impl Future<Output = io::Result<Self>> + Send;

    /// The connection split for an upload: a future that completes when the node sends
    /// something or stops (an early answer), and the writing half. The future's output is
    /// how many response bytes it took into `first` (which then come before the rest).
    fn watch_while_writing<'a>(
        &'a mut self,
        first: &'a mut [u8; 1],
    ) -> (impl Future<Output = usize> + Send + 'a, impl AsyncWrite + Spliceable + Unpin + Send + 'a);

    /// Completes when the node may have sent something (or closed), so that a request
    /// waiting for its answer need not hold a read buffer meanwhile; at once when that
    /// cannot be known without reading.
    fn answered(&self) -> impl Future<Output = ()> + Send + '_;
}

/// A fresh TCP connection to `addr`, within `timeout`.
async fn connect_tcp(addr: SocketAddr, timeout: Duration) -> io::Result<TcpStream> {
    let stream = tokio::time::timeout(timeout, TcpStream::connect(addr))
        .await
        .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "connect timed out"))??;
    stream.set_nodelay(true)?;
    Ok(stream)
}

impl NodeIo for TcpStream {
    fn idle_and_open(&mut self) -> bool {
        let mut probe = [0u8; 1];
        // Anything but "would block" is a closed, failed or chattering connection.
        matches!(self.try_read(&mut probe), Err(e) if e.kind() == io::ErrorKind::WouldBlock)
    }

    async fn connect(
        at: NodeAt<'_>,
        _tls: Option<&Arc<rustls::ClientConfig>>,
        timeout: Duration,
    ) -> io::Result<Self> {
        connect_tcp(at.addr, timeout).await
    }

    fn watch_while_writing<'a>(
        &'a mut self,
        _first: &'a mut [u8; 1],
    ) -> (impl Future<Output = usize> + Send + 'a, impl AsyncWrite + Spliceable + Unpin + Send + 'a)
    {
        let (mut from_node, to_node) = self.split();
        let watch = async move {
            // A peek: the byte stays for the response reader.
            let mut probe = [0u8; 1];
            let _ = from_node.peek(&mut probe).await;
            0
        };
        (watch, to_node)
    }

    async fn answered(&self) {
        // An error shows again at the read that follows.
        let _ = self.readable().await;
    }
}

impl NodeIo for TlsStream<TcpStream> {
    fn idle_and_open(&mut self) -> bool {
        // One read that must not wait: records that carry no data (a session ticket) are
        // taken in; data, an end (close_notify, FIN) or an error mean the connection is
        // unfit.
        let mut probe = [0u8; 1];
        let mut buf = ReadBuf::new(&mut probe);
        let mut cx = Context::from_waker(Waker::noop());
        matches!(Pin::new(self).poll_read(&mut cx, &mut buf), Poll::Pending)
    }

    async fn connect(
        at: NodeAt<'_>,
        tls: Option<&Arc<rustls::ClientConfig>>,
        timeout: Duration,
    ) -> io::Result<Self> {
        let started = Instant::now();
        let (Some(config), Some(name)) = (tls, at.server_name.cloned()) else {
            return Err(io::Error::other("no TLS configuration for this node"));
        };
        let tcp = connect_tcp(at.addr, timeout).await?;
        let left = timeout.saturating_sub(started.elapsed());
        let connector = tokio_rustls::TlsConnector::from(config.clone());
        let handshake = tokio::time::timeout(left, connector.connect(name.clone(), tcp)).await;
        let error = match handshake {
            Ok(Ok(stream)) => return Ok(stream),
            Ok(Err(e)) => e,
            Err(_) => io::Error::new(io::ErrorKind::TimedOut, "TLS handshake timed out"),
        };
        // The reason (an unknown issuer, a name the certificate is not valid for) is what
        // an operator needs; the request itself only gets a 502.
        let node = format!("https://{} ({})", at.addr, name.to_str());
        event("warn", "TLS handshake with node failed", &[("node", &node), ("error", &error)]);
        Err(error)
    }

    fn watch_while_writing<'a>(
        &'a mut self,
        first: &'a mut [u8; 1],
    ) -> (impl Future<Output = usize> + Send + 'a, impl AsyncWrite + Spliceable + Unpin + Send + 'a)
    {
        // A TLS session cannot be peeked: the watch reads the first byte of the answer
        // (decrypted), and hands it over.
        let (mut from_node, to_node) = tokio::io::split(self);
        let watch = async move { from_node.read(first).await.unwrap_or(0) };
        (watch, to_node)
    }

    /// The session may hold decrypted bytes already: the read finds out.
    async fn answered(&self) {}
}

/// A TLS session's bytes are not the socket's: its bodies keep the copy path.
impl Spliceable for TlsStream<TcpStream> {
    fn tcp(&self) -> Option<&TcpStream> {
        None
    }
}

/// The writing half of a TLS session split for an upload: copied, like the session.
impl Spliceable for tokio::io::WriteHalf<&mut TlsStream<TcpStream>> {
    fn tcp(&self) -> Option<&TcpStream> {
        None
    }
}

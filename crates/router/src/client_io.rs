//! What a client connection runs over: plain TCP, or TLS over TCP. The request walk in
//! `conn` is the same for both; only waiting for an idle client's next request differs.

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio_rustls::server::TlsStream;

pub(crate) trait ClientIo: AsyncRead + AsyncWrite + Unpin + Send + 'static {
    /// The socket itself, when its readiness means the next request has begun: then an
    /// idle connection waits on it without holding a read buffer. Not under TLS, where
    /// decrypted bytes may already wait inside the session.
    fn plain(&self) -> Option<&TcpStream>;
}

impl ClientIo for TcpStream {
    fn plain(&self) -> Option<&TcpStream> {
        Some(self)
    }
}

impl ClientIo for TlsStream<TcpStream> {
    fn plain(&self) -> Option<&TcpStream> {
        None
    }
}

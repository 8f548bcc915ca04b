//! What a client connection runs over: plain TCP, or TLS over TCP. The request walk in
//! `conn` is the same for both; only waiting for an idle client's next request, and
//! splicing bodies, differ.

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio_rustls::server::TlsStream;

use crate::splice::Spliceable;

/// [`Spliceable::tcp`] gives the socket itself when its bytes are the client's bytes:
/// then an idle connection waits on its readiness (the next request has begun) without
/// holding a read buffer, and bodies may be spliced to and from it. Not under TLS, where
/// decrypted bytes may already wait inside the session.
pub(crate) trait ClientIo:
    AsyncRead + AsyncWrite + Spliceable + Unpin + Send + 'static
{
}

impl ClientIo for TcpStream {}

impl ClientIo for TlsStream<TcpStream> {}

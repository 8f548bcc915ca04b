//! Later requests on a handed-off connection that belong to another node. A node that
//! runs beside a distributor (a peer, `larder peer`) knows, through the distributor's
//! placement, where each request belongs; given a [`HandOn`], it fetches such a request
//! from the node that should serve it (`forward.rs`), or passes the connection on to
//! that node from that request's first byte, the way it was handed the connection, as
//! [`crate::LaterRequests`] says. A plain node has none and serves every request itself.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use tokio::net::TcpStream;

/// A hand-on under way; true when the other node took the connection.
pub type Offer<'a> = Pin<Box<dyn Future<Output = bool> + 'a>>;

/// Where a request on an adopted connection belongs.
pub trait HandOn: Send + Sync {
    /// `None` when the request for `target` (origin-form, `host` its Host field) belongs
    /// here or cannot be handed on; else the node it belongs to.
    fn elsewhere(&self, target: &str, host: Option<&[u8]>) -> Option<Box<dyn Elsewhere>>;
}

/// The node a request belongs to, ready to be offered the connection or asked for the
/// response.
pub trait Elsewhere {
    /// That node's HTTP address (its listener, not a distributor's): where a forwarded
    /// request goes.
    fn node(&self) -> SocketAddr;

    /// The target the request was placed by, told to that node with a forwarded request.
    fn hint(&self) -> Option<wire::TargetHint>;

    /// Offer `client` (its address `peer`), with `bytes` (the request and anything
    /// pipelined behind it), to that node. A refused or failed offer leaves the
    /// connection untouched: the node then serves the request itself.
    fn offer<'a>(
        self: Box<Self>,
        client: &'a TcpStream,
        peer: SocketAddr,
        bytes: &'a [u8],
    ) -> Offer<'a>;
}
/// A [`HandOn`] shared by the node's config and its connections.
#[derive(Clone)]
pub struct SharedHandOn(pub std::sync::Arc<dyn HandOn>);

impl std::fmt::Debug for SharedHandOn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HandOn")
    }
}

//! What a node does with a later request on a connection it adopted that belongs to
//! another node: the choice `larder peer --handoff-later` makes.

/// Where a later request on an adopted connection that another node should serve is
/// served. The connection came with its first request, which this node serves; its
/// later requests are placed as the distributor places any request. Default is
/// [`LaterRequests::Forward`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum LaterRequests {
    /// Served by the node that holds the connection, wherever it belongs: no locality for
    /// later requests, nothing spent on other nodes.
    Here,
    /// Fetched from the node it belongs to over pooled keep-alive connections and answered
    /// by the node that holds the connection (back-end forwarding): locality kept for
    /// one loopback round trip and a copy of the response per such request; when the
    /// owner fails the request is served here.
    #[default]
    Forward,
    /// The connection is handed on to the node it belongs to, from that request on (a
    /// Unix-socket connect, the descriptor and two round trips per change of owner,
    /// nothing after it); a refused offer is served here. Costly when consecutive
    /// requests keep changing owner.
    HandOn,
}

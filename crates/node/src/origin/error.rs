//! Why a fetch from the origin failed, and the status a client gets for it.

use http1::Status;

/// A failed exchange with the origin.
#[derive(Debug, thiserror::Error)]
pub enum OriginError {
    #[error("cannot connect to origin {origin}: {source}")]
    Connect { origin: String, source: std::io::Error },
    #[error("origin {origin} did not answer within {ms} ms")]
    Timeout { origin: String, ms: u128 },
    #[error("origin {origin} broke the exchange: {what}")]
    Protocol { origin: String, what: String },
    /// The client's request body failed on the way (too large, malformed, cut): the
    /// client's fault, answered with the body error's status.
    #[error(transparent)]
    Client(#[from] crate::request_body::BodyError),
}

impl OriginError {
    /// 504 for a timeout, the client error for a broken request body, 502 for everything
    /// else (RFC 9110 §15.6.3, §15.6.5).
    pub fn status(&self) -> Status {
        match self {
            OriginError::Timeout { .. } => Status::GATEWAY_TIMEOUT,
            OriginError::Client(e) => e.status(),
            _ => Status::BAD_GATEWAY,
        }
    }
}

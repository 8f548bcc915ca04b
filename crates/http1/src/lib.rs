//! HTTP/1.1 building blocks shared by `larder node`, `larder route` and larder's clients (the
//! load generator, the lab's probes, the tests).
//!
//! Map of the crate:
//! - [`limits`]: the configurable bounds a request head must respect ([`Limits`]), and a
//!   response head ([`ResponseLimits`]).
//! - [`request`]: request-head parsing on top of `httparse` ([`parse_head`], [`RequestHead`]),
//!   typed errors that know their status ([`ParseError`]), keep-alive semantics for
//!   HTTP/1.0 and HTTP/1.1 ([`RequestHead::keep_alive`]), and telling a peer that does not
//!   speak HTTP/1 at all ([`is_not_http1`]).
//! - [`response`]: status codes with reason phrases ([`Status`]) and a response-head writer
//!   ([`ResponseHead`]).
//! - [`response_head`]: response-head parsing for every client, borrowing the received
//!   bytes ([`parse_response_head`], [`ReceivedHead`], [`ResponseHeadError`]).
//! - [`header_slots`]: stack room for the fields of a head parsed in place
//!   ([`HeaderSlots`]).
//! - [`tokens`]: tokens of list fields and keep-alive by `Connection` ([`has_token`],
//!   [`keep_alive`]), for requests and responses.
//! - [`client_request`]: the bodyless GET of larder's own small clients ([`get_request`]).
//! - [`framing`]: where a message body ends (RFC 9112 §6), refusing every ambiguity that
//!   request smuggling needs ([`BodyFraming`], [`FramingError`]).
//! - [`authority`]: `Host` values and absolute-form targets checked against RFC 3986's
//!   authority grammar, and split for forwarding in origin-form ([`is_valid_host`]).
//! - [`chunked`]: a strict, streaming chunked decoder and the encoder ([`ChunkedDecoder`]).
//! - [`date`]: IMF-fixdate formatting and parsing (the two obsolete formats are accepted on
//!   input), and a per-second cache of the formatted `Date` ([`DateCache`]); calendar
//!   arithmetic ([`CivilTime`]) comes from `wire::civil`.
//!
//! Nothing here does I/O: callers own their sockets and buffers, so the same code serves an
//! event loop, a thread per connection or a test.

#![forbid(unsafe_code)]

pub mod authority;
pub mod chunked;
pub mod client_request;
pub mod date;
pub mod framing;
pub mod header_slots;
pub mod limits;
pub mod request;
pub mod response;
pub mod response_head;
pub mod tokens;
pub mod version;

pub use authority::{is_valid_host, split_absolute, Absolute, AuthorityError};
pub use chunked::{ChunkError, ChunkEvent, ChunkLimits, ChunkedDecoder};
pub use client_request::get_request;
pub use date::{format_http_date, parse_http_date, CivilTime, DateCache};
pub use framing::{BodyFraming, FramingError};
pub use header_slots::HeaderSlots;
pub use limits::{Limits, ResponseLimits};
pub use request::{is_not_http1, parse_head, Header, Method, ParseError, RequestHead, Version};
pub use response::{ResponseHead, Status};
pub use response_head::{parse_response_head, ReceivedHead, ResponseHeadError};
pub use tokens::{has_token, keep_alive};

//! Reading an origin response body in pieces, whatever its framing (length, chunked, until
//! close), each wait bounded by the origin timeout. Read to its end on a keep-alive
//! connection, the body gives the connection back to the pool; dropped early, the
//! connection is closed (its remaining bytes would desynchronise the next response).

use super::conn::{io_protocol, OriginConn, OriginCounters, Shared, READ_CHUNK};
use super::error::OriginError;
use http1::{BodyFraming, ChunkEvent, ChunkLimits, ChunkedDecoder};
use std::rc::Rc;
use std::time::Instant;
use tokio::io::AsyncReadExt;
use tokio::time::timeout_at;

/// The body of one origin response.
pub struct OriginBody {
    conn: Option<OriginConn>,
    state: State,
    keep_alive: bool,
    shared: Rc<Shared>,
}

enum State {
    Length(u64),
    Chunked(ChunkedDecoder),
    UntilClose,
    Done,
}

impl std::fmt::Debug for OriginBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OriginBody")
    }
}

impl OriginBody {
    pub(super) fn new(
        conn: OriginConn,
        framing: BodyFraming,
        keep_alive: bool,
        shared: Rc<Shared>,
    ) -> OriginBody {
        let state = match framing {
            BodyFraming::Empty | BodyFraming::Length(0) => State::Done,
            BodyFraming::Length(n) => State::Length(n),
            BodyFraming::Chunked => State::Chunked(ChunkedDecoder::new(ChunkLimits::default())),
            BodyFraming::UntilClose => State::UntilClose,
        };
        let keep_alive = keep_alive && !matches!(state, State::UntilClose);
        let mut body = OriginBody { conn: Some(conn), state, keep_alive, shared };
        body.finish_if_done();
        body
    }

    /// The body length when the origin declared it.
    pub fn declared_len(&self) -> Option<u64> {
        match self.state {
            State::Length(n) => Some(n),
            State::Done => Some(0),
            _ => None,
        }
    }

    /// The next piece of the body, `None` at its end; a failure counts as an origin error.
    pub async fn next(&mut self) -> Result<Option<Vec<u8>>, OriginError> {
        let piece = self.read_next().await;
        if piece.is_err() {
            OriginCounters::add(&self.shared.counters.errors, 1);
        }
        piece
    }

    async fn read_next(&mut self) -> Result<Option<Vec<u8>>, OriginError> {
        loop {
            let Some(conn) = self.conn.as_mut() else {
                return Ok(None);
            };
            let origin = conn.origin;
            let buf = &mut conn.buf;
            let piece = match &mut self.state {
                State::Done => None,
                State::Length(left) if !buf.is_empty() => {
                    let n = (*left).min(buf.len() as u64) as usize;
                    *left -= n as u64;
                    if *left == 0 {
                        self.state = State::Done;
                    }
                    Some(buf.drain(..n).collect())
                }
                State::UntilClose if !buf.is_empty() => Some(std::mem::take(buf)),
                State::Chunked(decoder) if !buf.is_empty() => {
                    let (used, event) = decoder.feed(buf).map_err(|e| OriginError::Protocol {
                        origin: self.shared.name(origin),
                        what: format!("chunked body: {e}"),
                    })?;
                    let piece = match event {
                        ChunkEvent::Data { start, len } => Some(buf[start..start + len].to_vec()),
                        ChunkEvent::End => {
                            self.state = State::Done;
                            None
                        }
                        ChunkEvent::NeedMore => None,
                    };
                    buf.drain(..used);
                    match piece {
                        Some(p) => Some(p),
                        None => continue,
                    }
                }
                _ => {
                    if self.fill().await? {
                        continue;
                    }
                    // The origin closed: the end of an until-close body, else a cut one.
                    if matches!(self.state, State::UntilClose) {
                        self.state = State::Done;
                        self.conn = None;
                        return Ok(None);
                    }
                    self.conn = None;
                    return Err(OriginError::Protocol {
                        origin: self.shared.name(origin),
                        what: "connection closed inside the body".into(),
                    });
                }
            };
            self.finish_if_done();
            match piece {
                Some(p) => return Ok(Some(p)),
                None if matches!(self.state, State::Done) => return Ok(None),
                None => {}
            }
        }
    }

    /// Read more bytes from the origin; false when it closed the connection.
    async fn fill(&mut self) -> Result<bool, OriginError> {
        let Some(conn) = self.conn.as_mut() else {
            return Ok(false);
        };
        conn.buf.reserve(READ_CHUNK);
        let deadline = Instant::now() + self.shared.timeout;
        match timeout_at(deadline.into(), conn.stream.read_buf(&mut conn.buf)).await {
            Err(_) => {
                let e = self.shared.timeout_error(conn.origin);
                self.conn = None;
                Err(e)
            }
            Ok(Ok(0)) => Ok(false),
            Ok(Ok(n)) => {
                OriginCounters::add(&self.shared.counters.bytes, n as u64);
                Ok(true)
            }
            Ok(Err(e)) => {
                let e = io_protocol(self.shared.name(conn.origin), &e);
                self.conn = None;
                Err(e)
            }
        }
    }

    /// Once the body has ended, hand a reusable connection back to the pool.
    fn finish_if_done(&mut self) {
        if matches!(self.state, State::Done) {
            if let Some(conn) = self.conn.take() {
                if self.keep_alive {
                    self.shared.put_back(conn);
                }
            }
        }
    }
}

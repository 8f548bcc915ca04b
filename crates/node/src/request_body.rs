//! A request body read from the client connection in pieces, for a request a caching
//! node passes to its origin (POST, PUT, …): never more than one read's worth in memory,
//! Content-Length or chunked (decoded: the origin gets it re-framed), the total bounded by
//! `max_body_bytes` and each wait for bytes by the header timeout. A client that sent
//! `Expect: 100-continue` is told to go on when the first piece is wanted, so it does not
//! stall waiting for an answer the origin never sends (the field is not forwarded).

use crate::socket::read_some;
use http1::{BodyFraming, ChunkEvent, ChunkLimits, ChunkedDecoder, Status};
use std::io;
use std::time::Duration;
use tokio::net::TcpStream;
use tokio::time::timeout;

/// Room made in the input buffer before each read of a body.
const BODY_READ: usize = 64 * 1024;
const CONTINUE: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";

/// Why a request body could not be read to its end: the client's fault, answered with
/// [`BodyError::status`] and the connection closed.
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    #[error("request body larger than {0} bytes")]
    TooLarge(u64),
    #[error("malformed chunked request body")]
    Malformed,
    #[error("request body not received in time")]
    TimedOut,
    #[error("client closed the connection mid-body")]
    Closed,
    #[error("reading the request body: {0}")]
    Io(#[from] io::Error),
}

impl BodyError {
    pub fn status(&self) -> Status {
        match self {
            BodyError::TooLarge(_) => Status::CONTENT_TOO_LARGE,
            BodyError::TimedOut => Status::REQUEST_TIMEOUT,
            BodyError::Malformed | BodyError::Closed | BodyError::Io(_) => Status::BAD_REQUEST,
        }
    }
}

enum State {
    Length(u64),
    Chunked { decoder: ChunkedDecoder, total: u64 },
    Done,
    Failed,
}

/// The body of the request being answered, read from the connection's input buffer
/// (where pipelined bytes after it stay for the next request).
pub struct RequestBody<'a> {
    stream: &'a TcpStream,
    inbuf: &'a mut Vec<u8>,
    /// Start of the unconsumed bytes in `inbuf`.
    pos: &'a mut usize,
    state: State,
    /// The declared length, `None` when chunked.
    declared: Option<u64>,
    max: u64,
    wait: Duration,
    continue_pending: bool,
}

impl<'a> RequestBody<'a> {
    /// The body framed as `framing` (already checked against `max`).
    pub fn new(
        stream: &'a TcpStream,
        inbuf: &'a mut Vec<u8>,
        pos: &'a mut usize,
        framing: BodyFraming,
        max: u64,
        wait: Duration,
        expect_continue: bool,
    ) -> RequestBody<'a> {
        let (state, declared) = match framing {
            BodyFraming::Length(n) if n > 0 => (State::Length(n), Some(n)),
            BodyFraming::Chunked => {
                let decoder = ChunkedDecoder::new(ChunkLimits::default());
                (State::Chunked { decoder, total: 0 }, None)
            }
            _ => (State::Done, Some(0)),
        };
        let continue_pending = expect_continue && !matches!(state, State::Done);
        RequestBody { stream, inbuf, pos, state, declared, max, wait, continue_pending }
    }

    /// The body length when the client declared it (`Some(0)` for no body).
    pub fn declared_len(&self) -> Option<u64> {
        self.declared
    }

    /// Whether the body was read to its end (so the next request starts after it).
    pub fn is_done(&self) -> bool {
        matches!(self.state, State::Done)
    }

    /// Whether reading it failed (the connection must close).
    pub fn failed(&self) -> bool {
        matches!(self.state, State::Failed)
    }

    /// The next piece of the body, `None` at its end.
    pub async fn next(&mut self) -> Result<Option<Vec<u8>>, BodyError> {
        let got = self.next_piece().await;
        match &got {
            Err(_) => self.state = State::Failed,
            // The client is sending (it did not wait for 100 Continue): no need to ask.
            Ok(Some(_)) => self.continue_pending = false,
            Ok(None) => {}
        }
        got
    }

    /// Read the rest of the body and drop it (the origin did not want it all), so the
    /// connection can go on; false when that failed and the connection must close.
    pub async fn skip_rest(&mut self) -> bool {
        if self.is_done() {
            return true;
        }
        if self.continue_pending {
            // The client waits to be told to send: it is not, and the connection closes.
            self.state = State::Failed;
            return false;
        }
        loop {
            match self.next().await {
                Ok(Some(_)) => {}
                Ok(None) => return true,
                Err(_) => return false,
            }
        }
    }

    async fn next_piece(&mut self) -> Result<Option<Vec<u8>>, BodyError> {
        loop {
            let available = &self.inbuf[*self.pos..];
            match &mut self.state {
                State::Done => return Ok(None),
                State::Failed => return Err(BodyError::Closed),
                State::Length(rest) => {
                    if !available.is_empty() {
                        let n = (*rest).min(available.len() as u64) as usize;
                        let piece = available[..n].to_vec();
                        *self.pos += n;
                        *rest -= n as u64;
                        if *rest == 0 {
                            self.state = State::Done;
                        }
                        return Ok(Some(piece));
                    }
                }
                State::Chunked { decoder, total } => {
                    let (used, event) =
                        decoder.feed(available).map_err(|_| BodyError::Malformed)?;
                    let piece = match event {
                        ChunkEvent::Data { start, len } => {
                            *total += len as u64;
                            if *total > self.max {
                                return Err(BodyError::TooLarge(self.max));
                            }
                            Some(available[start..start + len].to_vec())
                        }
                        ChunkEvent::End => None,
                        ChunkEvent::NeedMore => {
                            *self.pos += used;
                            self.read_more().await?;
                            continue;
                        }
                    };
                    *self.pos += used;
                    if piece.is_none() {
                        self.state = State::Done;
                    }
                    return Ok(piece);
                }
            }
            self.read_more().await?;
        }
    }

    /// Wait (bounded) for more body bytes, telling a waiting client to go on first.
    async fn read_more(&mut self) -> Result<(), BodyError> {
        if std::mem::take(&mut self.continue_pending) {
            self.write_all(CONTINUE).await?;
        }
        if *self.pos == self.inbuf.len() {
            self.inbuf.clear();
            *self.pos = 0;
        }
        let read = read_some(self.stream, self.inbuf, |b| {
            if b.capacity() - b.len() < BODY_READ {
                b.reserve(BODY_READ);
            }
        });
        match timeout(self.wait, read).await {
            Err(_) => Err(BodyError::TimedOut),
            Ok(Ok(0)) => Err(BodyError::Closed),
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(BodyError::Io(e)),
        }
    }

    /// Write through the shared stream (the connection's writer is not in use while the
    /// request is being answered).
    async fn write_all(&self, mut data: &[u8]) -> Result<(), BodyError> {
        while !data.is_empty() {
            timeout(self.wait, self.stream.writable()).await.map_err(|_| BodyError::TimedOut)??;
            match self.stream.try_write(data) {
                Ok(0) => return Err(BodyError::Closed),
                Ok(n) => data = &data[n..],
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(BodyError::Io(e)),
            }
        }
        Ok(())
    }
}

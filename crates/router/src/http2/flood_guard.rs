//! The defence against floods of the frames a server must answer but that carry no
//! request: `PING` (each answered with a `PING` ack) and `SETTINGS` (each acknowledged).
//! h2 answers one at a time and reads no further until the answer is written, so memory
//! stays bounded, but a client that reads the answers could keep the router answering
//! at the speed of its link. This reader watches the frame headers as the bytes pass (it
//! never looks into payloads) and ends the connection with an error once a client sends
//! more of them in a second than `http2.max_control_frames_per_second`.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, ReadBuf};

const PREFACE_LEN: usize = 24;
const FRAME_HEADER_LEN: usize = 9;
const SETTINGS: u8 = 0x4;
const PING: u8 = 0x6;
const ACK: u8 = 0x1;

/// Where the reader is in the client's byte stream.
#[derive(Debug)]
enum Position {
    /// Inside the connection preface; this many bytes of it are still to come.
    Preface(usize),
    /// Inside a frame header; `have` of its bytes are in `header`.
    Header { header: [u8; FRAME_HEADER_LEN], have: usize },
    /// Inside a frame's payload; this many bytes are still to come.
    Payload(usize),
}

/// Counts the control frames of one second and says when there were too many.
#[derive(Debug)]
struct Budget {
    per_second: u32,
    window_start: Option<Instant>,
    in_window: u32,
}

impl Budget {
    /// One more control frame at `now`: false when it is over the limit.
    fn spend(&mut self, now: Instant) -> bool {
        match self.window_start {
            Some(start) if now.saturating_duration_since(start) < Duration::from_secs(1) => {
                self.in_window += 1;
            }
            _ => {
                self.window_start = Some(now);
                self.in_window = 1;
            }
        }
        self.in_window <= self.per_second
    }
}

pub(crate) struct FloodGuard<S> {
    inner: S,
    position: Position,
    budget: Budget,
}

impl<S> FloodGuard<S> {
    /// `inner`, read from the start of the HTTP/2 preface.
    pub(crate) fn new(inner: S, per_second: u32) -> Self {
        FloodGuard {
            inner,
            position: Position::Preface(PREFACE_LEN),
            budget: Budget { per_second, window_start: None, in_window: 0 },
        }
    }

    /// Follow the frames through `bytes`; false when the client went over its budget.
    fn watch(&mut self, mut bytes: &[u8]) -> bool {
        while !bytes.is_empty() {
            match &mut self.position {
                Position::Preface(left) | Position::Payload(left) => {
                    let n = (*left).min(bytes.len());
                    *left -= n;
                    bytes = &bytes[n..];
                    if *left == 0 {
                        self.position = Position::Header { header: [0; FRAME_HEADER_LEN], have: 0 };
                    }
                }
                Position::Header { header, have } => {
                    let n = (FRAME_HEADER_LEN - *have).min(bytes.len());
                    header[*have..*have + n].copy_from_slice(&bytes[..n]);
                    *have += n;
                    bytes = &bytes[n..];
                    if *have < FRAME_HEADER_LEN {
                        continue;
                    }
                    let h = *header;
                    let len = usize::from(h[0]) << 16 | usize::from(h[1]) << 8 | usize::from(h[2]);
                    let control = matches!(h[3], SETTINGS | PING) && h[4] & ACK == 0;
                    if control && !self.budget.spend(Instant::now()) {
                        return false;
                    }
                    self.position = if len == 0 {
                        Position::Header { header: [0; FRAME_HEADER_LEN], have: 0 }
                    } else {
                        Position::Payload(len)
                    };
                }
            }
        }
        true
    }
}

/// What the guard's error says.
const FLOOD: &str = "too many PING or SETTINGS frames";

/// Whether `e` is the guard's: the connection was closed for a flood.
pub(super) fn is_flood(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::InvalidData
        && e.get_ref().is_some_and(|inner| inner.to_string() == FLOOD)
}

impl<S: AsyncRead + Unpin> AsyncRead for FloodGuard<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if this.watch(&buf.filled()[before..]) {
                    Poll::Ready(Ok(()))
                } else {
                    Poll::Ready(Err(io::Error::new(io::ErrorKind::InvalidData, FLOOD)))
                }
            }
            other => other,
        }
    }
}

super::write_through::write_through!(FloodGuard);

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(kind: u8, flags: u8, payload: &[u8]) -> Vec<u8> {
        let len = payload.len() as u32;
        let mut f = vec![(len >> 16) as u8, (len >> 8) as u8, len as u8, kind, flags, 0, 0, 0, 0];
        f.extend_from_slice(payload);
        f
    }

    #[test]
    fn counts_pings_and_settings_across_any_split_and_skips_payloads() {
        let mut stream = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
        stream.extend(frame(SETTINGS, 0, &[0; 6]));
        // A DATA frame whose payload looks like PING headers counts for nothing.
        stream.extend(frame(0x0, 0, &frame(PING, 0, &[0; 8]).repeat(3)));
        stream.extend(frame(PING, ACK, &[0; 8]));
        stream.extend(frame(PING, 0, &[0; 8]));
        stream.extend(frame(SETTINGS, ACK, &[]));
        for split in [1, 2, 5, 9, 13, stream.len()] {
            let mut guard = FloodGuard::new((), 2);
            assert!(stream.chunks(split).all(|c| guard.watch(c)), "split {split}");
            assert_eq!(guard.budget.in_window, 2, "one SETTINGS and one PING, split {split}");
            assert!(!guard.watch(&frame(PING, 0, &[0; 8])), "a third is one too many");
        }
    }
}

//! A body relayed to one client as it arrives: a response too large for the cache (or
//! not cacheable) straight from the origin, a cacheable one from its filling buffer, or a
//! large one slice by slice: one piece in memory at a time, each write bounded by the
//! send timeout, re-chunked when the origin did not say how long the body is.

use super::body::OriginBody;
use super::filling::FillReader;
use super::slice_reader::SliceReader;
use http1::chunked::{encode_chunk_head, CHUNK_END, LAST_CHUNK};
use std::io;
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::time::timeout;

/// Where a relayed body comes from.
#[derive(Debug)]
pub enum Source {
    /// Straight from the origin connection (this client alone).
    Origin(OriginBody),
    /// From a response being filled into the cache (shared with other clients).
    Fill(FillReader),
    /// From the slices of a large object.
    Slices(SliceReader),
}

impl Source {
    async fn next(&mut self) -> Result<Option<Vec<u8>>, String> {
        match self {
            Source::Origin(b) => b.next().await.map_err(|e| e.to_string()),
            Source::Fill(r) => r.next().await.map_err(|e| e.to_string()),
            Source::Slices(r) => r.next().await,
        }
    }
}

/// A body to send after the head: bytes already read, then the rest from its source.
#[derive(Debug)]
pub struct Relay {
    pub prefix: Vec<u8>,
    pub body: Source,
    /// Send with the chunked coding (the length is unknown and the client speaks 1.1).
    pub chunked: bool,
}

impl Relay {
    /// Copy the body to `stream`; the body bytes sent. An origin failure mid-way is an
    /// error: the client connection must close, as the response cannot be completed.
    pub async fn send(mut self, stream: &mut TcpStream, send_timeout: Duration) -> io::Result<u64> {
        let mut sent = 0u64;
        let mut piece = std::mem::take(&mut self.prefix);
        let mut framed = Vec::new();
        loop {
            if !piece.is_empty() {
                let data = if self.chunked {
                    framed.clear();
                    encode_chunk_head(piece.len(), &mut framed);
                    framed.extend_from_slice(&piece);
                    framed.extend_from_slice(CHUNK_END);
                    &framed
                } else {
                    &piece
                };
                write(stream, data, send_timeout).await?;
                sent += piece.len() as u64;
            }
            match self.body.next().await {
                Ok(Some(p)) => piece = p,
                Ok(None) => break,
                Err(e) => return Err(io::Error::other(e)),
            }
        }
        if self.chunked {
            write(stream, LAST_CHUNK, send_timeout).await?;
        }
        Ok(sent)
    }
}

async fn write(stream: &mut TcpStream, data: &[u8], limit: Duration) -> io::Result<()> {
    timeout(limit, stream.write_all(data))
        .await
        .map_err(|_| io::Error::from(io::ErrorKind::TimedOut))?
}

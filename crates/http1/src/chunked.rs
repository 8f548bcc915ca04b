//! The chunked transfer coding (RFC 9112 §7.1), decoded as a stream and re-encoded.
//!
//! The decoder is strict on purpose: a proxy that is lenient where the server behind it
//! is strict (or the reverse) is how request smuggling works. Chunk sizes are plain hex
//! (no sign, no `0x`, at most 16 digits), every line ends in CRLF, the chunk-size line
//! and the trailer section are bounded, and chunk data must be followed by CRLF. Input is
//! fed in pieces of any size and nothing is buffered, so memory stays bounded whatever
//! the body size. Trailer fields are validated and dropped (a proxy may discard them).

/// Bounds on the parts of a chunked body that are not data.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ChunkLimits {
    /// Longest chunk-size line, extensions included, CRLF excluded.
    pub max_line: usize,
    /// Most bytes in the trailer section.
    pub max_trailer: usize,
}

impl Default for ChunkLimits {
    fn default() -> Self {
        ChunkLimits { max_line: 4096, max_trailer: 16 * 1024 }
    }
}

/// Why a chunked body was rejected.
#[derive(Copy, Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ChunkError {
    #[error("chunk size is not plain hexadecimal")]
    BadSize,
    #[error("chunk size does not fit in 64 bits")]
    SizeOverflow,
    #[error("chunk-size line is longer than the limit")]
    LineTooLong,
    #[error("malformed chunk extension")]
    BadExtension,
    #[error("chunk line does not end in CRLF")]
    BadLineEnd,
    #[error("chunk data is not followed by CRLF")]
    MissingDataEnd,
    #[error("trailer section is malformed or longer than the limit")]
    BadTrailer,
}

/// What one call to [`ChunkedDecoder::feed`] found.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ChunkEvent {
    /// Body data at `input[start..start + len]`.
    Data { start: usize, len: usize },
    /// All input was consumed and more is needed.
    NeedMore,
    /// The last chunk and the trailer section are complete; the body ended.
    End,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum State {
    /// Reading hex digits of a chunk size.
    Size {
        value: u64,
        digits: u8,
    },
    /// After the size: optional whitespace then `;` extensions or CR.
    AfterSize,
    /// Inside chunk extensions, up to CR.
    Extension,
    /// Saw CR ending the size line, expect LF.
    SizeLf,
    Data {
        remaining: u64,
    },
    DataCr,
    DataLf,
    /// At the start of a trailer line (or of the final empty line).
    TrailerStart,
    /// Inside a trailer field's name, up to its colon.
    TrailerName,
    /// Inside a trailer field's value.
    TrailerLine,
    TrailerLf,
    FinalLf,
    Done,
}

/// A streaming decoder for one chunked body.
#[derive(Clone, Debug)]
pub struct ChunkedDecoder {
    state: State,
    limits: ChunkLimits,
    /// The size of the chunk whose size line is being finished.
    pending_size: u64,
    line_len: usize,
    trailer_len: usize,
    /// The trailer section's field lines as received, when asked to keep them
    /// ([`ChunkedDecoder::keeping_trailers`]); bounded by `limits.max_trailer`.
    trailers: Option<Vec<u8>>,
}

impl ChunkedDecoder {
    pub fn new(limits: ChunkLimits) -> Self {
        ChunkedDecoder {
            state: State::Size { value: 0, digits: 0 },
            limits,
            pending_size: 0,
            line_len: 0,
            trailer_len: 0,
            trailers: None,
        }
    }

    /// A decoder that keeps the trailer section's field lines for
    /// [`ChunkedDecoder::trailer_section`], for a relay that passes trailers on (to an
    /// HTTP/2 client, say) rather than dropping them.
    pub fn keeping_trailers(limits: ChunkLimits) -> Self {
        ChunkedDecoder { trailers: Some(Vec::new()), ..ChunkedDecoder::new(limits) }
    }

    /// The trailer field lines seen so far (`name: value` lines, each ending in CRLF,
    /// validated like the rest of the body); empty unless the decoder was made by
    /// [`ChunkedDecoder::keeping_trailers`].
    pub fn trailer_section(&self) -> &[u8] {
        self.trailers.as_deref().unwrap_or_default()
    }

    /// True once the whole body (last chunk and trailers) has been seen.
    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// Decode from `input`; returns how many bytes were consumed and what was found.
    /// A `Data` event's bytes are inside the consumed prefix. Call again with the rest.
    pub fn feed(&mut self, input: &[u8]) -> Result<(usize, ChunkEvent), ChunkError> {
        let mut i = 0;
        while i < input.len() {
            if let State::Data { remaining } = self.state {
                let len = remaining.min((input.len() - i) as u64) as usize;
                let left = remaining - len as u64;
                self.state =
                    if left == 0 { State::DataCr } else { State::Data { remaining: left } };
                return Ok((i + len, ChunkEvent::Data { start: i, len }));
            }
            let b = input[i];
            i += 1;
            let before = self.state;
            self.state = self.step(b)?;
            if let Some(kept) = &mut self.trailers {
                // A field line: from its name's first byte to its LF.
                let in_field = matches!(before, State::TrailerName | State::TrailerLine)
                    || before == State::TrailerLf
                    || (before == State::TrailerStart && self.state == State::TrailerName);
                if in_field {
                    kept.push(b);
                }
            }
            if self.state == State::Done {
                return Ok((i, ChunkEvent::End));
            }
        }
        if self.state == State::Done {
            return Ok((i, ChunkEvent::End));
        }
        Ok((i, ChunkEvent::NeedMore))
    }

    fn step(&mut self, b: u8) -> Result<State, ChunkError> {
        Ok(match self.state {
            State::Size { value, digits } => {
                self.count_line()?;
                match wire::percent::hex_value(b) {
                    Some(d) => {
                        if digits == 16 {
                            return Err(ChunkError::SizeOverflow);
                        }
                        State::Size { value: value << 4 | d as u64, digits: digits + 1 }
                    }
                    None if digits == 0 => return Err(ChunkError::BadSize),
                    None => {
                        self.pending_size = value;
                        self.after_size(b)?
                    }
                }
            }
            State::AfterSize => {
                self.count_line()?;
                self.after_size(b)?
            }
            State::Extension => {
                self.count_line()?;
                match b {
                    b'\r' => State::SizeLf,
                    b'\t' | b' '..=b'~' | 0x80..=0xff => State::Extension,
                    _ => return Err(ChunkError::BadExtension),
                }
            }
            State::SizeLf => {
                if b != b'\n' {
                    return Err(ChunkError::BadLineEnd);
                }
                self.line_len = 0;
                match self.pending_size {
                    0 => State::TrailerStart,
                    n => State::Data { remaining: n },
                }
            }
            State::Data { .. } => unreachable!("data is consumed in bulk by feed"),
            State::DataCr if b == b'\r' => State::DataLf,
            State::DataLf if b == b'\n' => State::Size { value: 0, digits: 0 },
            State::DataCr | State::DataLf => return Err(ChunkError::MissingDataEnd),
            State::TrailerStart => {
                self.count_trailer()?;
                match b {
                    b'\r' => State::FinalLf,
                    b' ' | b'\t' => return Err(ChunkError::BadTrailer), // obs-fold
                    _ if is_token(b) => State::TrailerName,
                    _ => return Err(ChunkError::BadTrailer),
                }
            }
            State::TrailerName => {
                self.count_trailer()?;
                match b {
                    b':' => State::TrailerLine,
                    _ if is_token(b) => State::TrailerName,
                    _ => return Err(ChunkError::BadTrailer),
                }
            }
            State::TrailerLine => {
                self.count_trailer()?;
                match b {
                    b'\r' => State::TrailerLf,
                    b'\n' | 0..=8 | 0x0a..=0x1f | 0x7f => return Err(ChunkError::BadTrailer),
                    _ => State::TrailerLine,
                }
            }
            State::TrailerLf if b == b'\n' => State::TrailerStart,
            State::FinalLf if b == b'\n' => State::Done,
            State::TrailerLf | State::FinalLf => return Err(ChunkError::BadLineEnd),
            State::Done => State::Done,
        })
    }

    fn after_size(&mut self, b: u8) -> Result<State, ChunkError> {
        Ok(match b {
            b' ' | b'\t' => State::AfterSize,
            b';' => State::Extension,
            b'\r' => State::SizeLf,
            b'\n' => return Err(ChunkError::BadLineEnd),
            _ => return Err(ChunkError::BadSize),
        })
    }

    fn count_line(&mut self) -> Result<(), ChunkError> {
        self.line_len += 1;
        if self.line_len > self.limits.max_line {
            return Err(ChunkError::LineTooLong);
        }
        Ok(())
    }

    fn count_trailer(&mut self) -> Result<(), ChunkError> {
        self.trailer_len += 1;
        if self.trailer_len > self.limits.max_trailer {
            return Err(ChunkError::BadTrailer);
        }
        Ok(())
    }
}

fn is_token(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Append the header line of a chunk of `len` bytes (`len` must not be 0: that is
/// [`LAST_CHUNK`]).
pub fn encode_chunk_head(len: usize, out: &mut Vec<u8>) {
    debug_assert!(len > 0, "an empty chunk would end the body");
    let mut digits = [0u8; 16];
    let mut n = len;
    let mut at = digits.len();
    while n > 0 {
        at -= 1;
        digits[at] = b"0123456789abcdef"[n & 0xf];
        n >>= 4;
    }
    out.extend_from_slice(&digits[at..]);
    out.extend_from_slice(b"\r\n");
}

/// What follows each chunk's data.
pub const CHUNK_END: &[u8] = b"\r\n";

/// The last chunk with an empty trailer section: the end of a chunked body.
pub const LAST_CHUNK: &[u8] = b"0\r\n\r\n";

#[cfg(test)]
mod tests {
    use super::*;

    /// Decode `input` fed in pieces of `step` bytes; the data, or the first error.
    fn decode(input: &[u8], step: usize) -> Result<(Vec<u8>, bool), ChunkError> {
        let mut d = ChunkedDecoder::new(ChunkLimits::default());
        let mut out = Vec::new();
        for piece in input.chunks(step) {
            let mut at = 0;
            while at < piece.len() {
                let (used, ev) = d.feed(&piece[at..])?;
                if let ChunkEvent::Data { start, len } = ev {
                    out.extend_from_slice(&piece[at + start..at + start + len]);
                }
                at += used;
                if ev == ChunkEvent::End {
                    return Ok((out, true));
                }
            }
        }
        Ok((out, d.is_done()))
    }

    #[test]
    fn keeps_the_trailer_lines_when_asked_in_any_piece_size() {
        let body = b"5\r\nhello\r\n0\r\nX-T: 1\r\nGrpc-Status: 0\r\n\r\n";
        for step in 1..body.len() {
            let mut d = ChunkedDecoder::keeping_trailers(ChunkLimits::default());
            for piece in body.chunks(step) {
                let mut at = 0;
                while at < piece.len() {
                    at += d.feed(&piece[at..]).unwrap().0;
                }
            }
            assert!(d.is_done(), "{step}");
            assert_eq!(d.trailer_section(), b"X-T: 1\r\nGrpc-Status: 0\r\n", "{step}");
        }
        let mut plain = ChunkedDecoder::new(ChunkLimits::default());
        plain.feed(body).unwrap();
        assert_eq!(plain.trailer_section(), b"");
        let mut none = ChunkedDecoder::keeping_trailers(ChunkLimits::default());
        none.feed(b"0\r\n\r\n").unwrap();
        assert!(none.is_done());
        assert_eq!(none.trailer_section(), b"");
    }

    #[test]
    fn decodes_in_any_piece_size() {
        let body = b"5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nX-T: 1\r\n\r\n";
        for step in 1..body.len() {
            assert_eq!(decode(body, step).unwrap(), (b"hello, world".to_vec(), true), "{step}");
        }
    }

    #[test]
    fn stops_exactly_at_the_end() {
        let mut d = ChunkedDecoder::new(ChunkLimits::default());
        let (used, ev) = d.feed(b"0\r\n\r\nGET / HTTP/1.1\r\n").unwrap();
        assert_eq!((used, ev), (5, ChunkEvent::End));
    }

    #[test]
    fn rejects_bad_sizes_and_line_ends() {
        let cases: &[(&[u8], ChunkError)] = &[
            (b"zz\r\n", ChunkError::BadSize),
            (b"0x5\r\nhello\r\n", ChunkError::BadSize),
            (b"-5\r\n", ChunkError::BadSize),
            (b"+5\r\n", ChunkError::BadSize),
            (b" 5\r\n", ChunkError::BadSize),
            (b"\r\n", ChunkError::BadSize),
            (b"5 5\r\n", ChunkError::BadSize),
            (b"11111111111111111\r\n", ChunkError::SizeOverflow),
            (b"5\nhello\r\n", ChunkError::BadLineEnd),
            (b"5\rhello", ChunkError::BadLineEnd),
            (b"5\r\nhelloX\r\n", ChunkError::MissingDataEnd),
            (b"5\r\nhello\n0\r\n\r\n", ChunkError::MissingDataEnd),
            (b"5;\x00\r\n", ChunkError::BadExtension),
            (b"0\r\n folded\r\n\r\n", ChunkError::BadTrailer),
            (b"0\r\nX: a\rb\r\n\r\n", ChunkError::BadLineEnd),
            (b"0\r\n\r\r", ChunkError::BadLineEnd),
        ];
        for (input, want) in cases {
            assert_eq!(decode(input, 64), Err(*want), "{}", String::from_utf8_lossy(input));
        }
    }

    #[test]
    fn a_trailer_line_without_a_colon_is_refused() {
        // A trailer field is `field-name ":" field-value` (RFC 9112 §7.1.2, §5).
        for input in [&b"0\r\nno-colon\r\n\r\n"[..], b"0\r\nX-T 1\r\n\r\n", b"0\r\nX-T : 1\r\n\r\n"]
        {
            assert_eq!(decode(input, 64), Err(ChunkError::BadTrailer), "{input:?}");
        }
        assert_eq!(decode(b"0\r\nX-T:\r\nY: a:b\r\n\r\n", 3), Ok((Vec::new(), true)));
    }

    #[test]
    fn bounds_the_size_line_and_trailers() {
        let mut line = b"5;".to_vec();
        line.extend(std::iter::repeat_n(b'a', 5000));
        assert_eq!(decode(&line, 100), Err(ChunkError::LineTooLong));
        let mut trailer = b"0\r\n".to_vec();
        for _ in 0..2000 {
            trailer.extend_from_slice(b"X-Long: abcdefgh\r\n");
        }
        assert_eq!(decode(&trailer, 100), Err(ChunkError::BadTrailer));
    }

    #[test]
    fn encoder_round_trips() {
        let mut out = Vec::new();
        for piece in [&b"a"[..], &[b'x'; 300][..], b"tail"] {
            encode_chunk_head(piece.len(), &mut out);
            out.extend_from_slice(piece);
            out.extend_from_slice(CHUNK_END);
        }
        out.extend_from_slice(LAST_CHUNK);
        assert!(out.starts_with(b"1\r\na\r\n12c\r\n"));
        let mut want = b"a".to_vec();
        want.extend_from_slice(&[b'x'; 300]);
        want.extend_from_slice(b"tail");
        assert_eq!(decode(&out, 7).unwrap(), (want, true));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(128))]
        #[test]
        fn encode_then_decode_is_identity(
            pieces in proptest::collection::vec(proptest::collection::vec(0u8..=255, 1..300), 0..8),
            step in 1usize..64,
        ) {
            let mut wire = Vec::new();
            for p in &pieces {
                encode_chunk_head(p.len(), &mut wire);
                wire.extend_from_slice(p);
                wire.extend_from_slice(CHUNK_END);
            }
            wire.extend_from_slice(LAST_CHUNK);
            let want: Vec<u8> = pieces.concat();
            proptest::prop_assert_eq!(decode(&wire, step), Ok((want, true)));
        }

        #[test]
        fn arbitrary_input_never_panics(bytes in proptest::collection::vec(0u8..=255, 0..256)) {
            let _ = decode(&bytes, 7);
        }
    }
}

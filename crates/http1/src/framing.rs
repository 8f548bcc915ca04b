//! Message framing (RFC 9112 §6): where a message body ends.
//!
//! This is the part of HTTP/1.1 that request smuggling attacks. A proxy and the server
//! behind it must agree on where every request ends, so anything ambiguous is refused
//! instead of interpreted: both Content-Length and Transfer-Encoding, several or
//! malformed Content-Length values, a Transfer-Encoding whose last coding is not
//! `chunked`, `chunked` applied twice, Transfer-Encoding in an HTTP/1.0 request. Header
//! syntax (obs-fold, bare CR, bad names, space before the colon) is refused by the head
//! parser before framing is looked at.

/// How the body of a message is delimited.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum BodyFraming {
    /// No body at all.
    #[default]
    Empty,
    /// Exactly this many bytes.
    Length(u64),
    /// The chunked transfer coding.
    Chunked,
    /// Everything until the connection closes (responses only).
    UntilClose,
}

/// Why a message's framing was refused.
#[derive(Copy, Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FramingError {
    #[error("both Content-Length and Transfer-Encoding")]
    LengthAndTransferEncoding,
    #[error("several Content-Length values")]
    SeveralLengths,
    #[error("malformed Content-Length")]
    BadLength,
    #[error("the last transfer coding is not chunked")]
    NotChunkedLast,
    #[error("chunked applied more than once")]
    ChunkedTwice,
    #[error("malformed Transfer-Encoding")]
    BadTransferEncoding,
    #[error("Transfer-Encoding in an HTTP/1.0 message")]
    TransferEncodingInHttp10,
    /// A coding other than chunked before it: not smuggling, just unsupported (501).
    #[error("unsupported transfer coding")]
    UnsupportedCoding,
}

/// The framing-relevant fields of a message head, gathered in one pass.
#[derive(Clone, Debug, Default)]
struct FramingFields {
    length: Option<u64>,
    lengths_seen: u32,
    /// Codings of every Transfer-Encoding field, in order, lower-cased.
    codings: Vec<String>,
    transfer_encoding_seen: bool,
}

fn gather<'a>(
    headers: impl IntoIterator<Item = (&'a str, &'a [u8])>,
) -> Result<FramingFields, FramingError> {
    let mut f = FramingFields::default();
    for (name, value) in headers {
        if name.eq_ignore_ascii_case("content-length") {
            f.lengths_seen += 1;
            if f.lengths_seen > 1 {
                return Err(FramingError::SeveralLengths);
            }
            f.length = Some(parse_length(value)?);
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            f.transfer_encoding_seen = true;
            let text = std::str::from_utf8(value).map_err(|_| FramingError::BadTransferEncoding)?;
            for coding in text.split(',') {
                let coding = coding.trim_matches([' ', '\t']);
                if coding.is_empty() {
                    continue;
                }
                let name = coding.split(';').next().unwrap_or("").trim_matches([' ', '\t']);
                if name.is_empty() || !name.bytes().all(is_token) {
                    return Err(FramingError::BadTransferEncoding);
                }
                f.codings.push(name.to_ascii_lowercase());
            }
            if f.codings.is_empty() {
                return Err(FramingError::BadTransferEncoding);
            }
        }
    }
    Ok(f)
}

/// A Content-Length value: 1*DIGIT, nothing else (no sign, no list, no spaces inside).
pub fn parse_length(value: &[u8]) -> Result<u64, FramingError> {
    let v = trim_ows(value);
    if v.is_empty() || v.len() > 19 || !v.iter().all(u8::is_ascii_digit) {
        return Err(FramingError::BadLength);
    }
    v.iter()
        .try_fold(0u64, |n, d| n.checked_mul(10)?.checked_add((d - b'0') as u64))
        .ok_or(FramingError::BadLength)
}

fn trim_ows(v: &[u8]) -> &[u8] {
    let start = v.iter().position(|b| !matches!(b, b' ' | b'\t')).unwrap_or(v.len());
    let end = v.iter().rposition(|b| !matches!(b, b' ' | b'\t')).map_or(start, |e| e + 1);
    &v[start..end]
}

fn is_token(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Check the codings end in exactly one `chunked`.
fn chunked_codings(codings: &[String]) -> Result<(), FramingError> {
    match codings.last().map(String::as_str) {
        Some("chunked") => {}
        _ => return Err(FramingError::NotChunkedLast),
    }
    if codings.iter().filter(|c| *c == "chunked").count() > 1 {
        return Err(FramingError::ChunkedTwice);
    }
    if codings.len() > 1 {
        return Err(FramingError::UnsupportedCoding);
    }
    Ok(())
}

/// The framing of a request body (RFC 9112 §6.3), refusing every ambiguous case.
/// `minor` is the HTTP/1.x minor version.
pub fn request_framing<'a>(
    headers: impl IntoIterator<Item = (&'a str, &'a [u8])>,
    minor: u8,
) -> Result<BodyFraming, FramingError> {
    let f = gather(headers)?;
    if f.transfer_encoding_seen {
        if f.lengths_seen > 0 {
            return Err(FramingError::LengthAndTransferEncoding);
        }
        if minor == 0 {
            return Err(FramingError::TransferEncodingInHttp10);
        }
        chunked_codings(&f.codings)?;
        return Ok(BodyFraming::Chunked);
    }
    Ok(match f.length {
        None | Some(0) => BodyFraming::Empty,
        Some(n) => BodyFraming::Length(n),
    })
}

/// The framing of a response body to a request with method `HEAD` or not (RFC 9112
/// §6.3). A response is refused on the same ambiguities as a request, so a confused
/// upstream cannot desynchronise the client connection either.
pub fn response_framing<'a>(
    headers: impl IntoIterator<Item = (&'a str, &'a [u8])>,
    status: u16,
    head_request: bool,
) -> Result<BodyFraming, FramingError> {
    let f = gather(headers)?;
    if head_request || (100..200).contains(&status) || status == 204 || status == 304 {
        return Ok(BodyFraming::Empty);
    }
    if f.transfer_encoding_seen {
        if f.lengths_seen > 0 {
            return Err(FramingError::LengthAndTransferEncoding);
        }
        return match chunked_codings(&f.codings) {
            Ok(()) => Ok(BodyFraming::Chunked),
            // A response whose last coding is not chunked is delimited by close.
            Err(FramingError::NotChunkedLast) => Ok(BodyFraming::UntilClose),
            Err(e) => Err(e),
        };
    }
    Ok(match f.length {
        Some(0) => BodyFraming::Empty,
        Some(n) => BodyFraming::Length(n),
        None => BodyFraming::UntilClose,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(headers: &[(&str, &str)], minor: u8) -> Result<BodyFraming, FramingError> {
        request_framing(headers.iter().map(|(n, v)| (*n, v.as_bytes())), minor)
    }

    #[test]
    fn plain_requests() {
        assert_eq!(req(&[], 1), Ok(BodyFraming::Empty));
        assert_eq!(req(&[("Content-Length", "0")], 1), Ok(BodyFraming::Empty));
        assert_eq!(req(&[("content-length", " 12 ")], 1), Ok(BodyFraming::Length(12)));
        assert_eq!(req(&[("Transfer-Encoding", "Chunked")], 1), Ok(BodyFraming::Chunked));
    }

    #[test]
    fn refuses_ambiguity() {
        use FramingError::*;
        type Fields = &'static [(&'static str, &'static str)];
        let cases: &[(Fields, u8, FramingError)] = &[
            (
                &[("Content-Length", "5"), ("Transfer-Encoding", "chunked")],
                1,
                LengthAndTransferEncoding,
            ),
            (
                &[("Transfer-Encoding", "chunked"), ("Content-Length", "5")],
                1,
                LengthAndTransferEncoding,
            ),
            (&[("Content-Length", "5"), ("Content-Length", "5")], 1, SeveralLengths),
            (&[("Content-Length", "5"), ("Content-Length", "6")], 1, SeveralLengths),
            (&[("Content-Length", "5, 5")], 1, BadLength),
            (&[("Content-Length", "-1")], 1, BadLength),
            (&[("Content-Length", "+5")], 1, BadLength),
            (&[("Content-Length", "0x5")], 1, BadLength),
            (&[("Content-Length", "")], 1, BadLength),
            (&[("Content-Length", "1 2")], 1, BadLength),
            (&[("Content-Length", "99999999999999999999")], 1, BadLength),
            (&[("Transfer-Encoding", "chunked, gzip")], 1, NotChunkedLast),
            (&[("Transfer-Encoding", "gzip")], 1, NotChunkedLast),
            (&[("Transfer-Encoding", "xchunked")], 1, NotChunkedLast),
            (
                &[("Transfer-Encoding", "chunked"), ("Transfer-Encoding", "identity")],
                1,
                NotChunkedLast,
            ),
            (&[("Transfer-Encoding", "chunked, chunked")], 1, ChunkedTwice),
            (&[("Transfer-Encoding", "")], 1, BadTransferEncoding),
            (&[("Transfer-Encoding", "\"chunked\"")], 1, BadTransferEncoding),
            (&[("Transfer-Encoding", "chunked")], 0, TransferEncodingInHttp10),
            (&[("Transfer-Encoding", "gzip, chunked")], 1, UnsupportedCoding),
        ];
        for (headers, minor, want) in cases {
            assert_eq!(req(headers, *minor), Err(*want), "{headers:?}");
        }
    }

    #[test]
    fn response_bodies() {
        let resp = |h: &[(&str, &str)], status, head| {
            response_framing(h.iter().map(|(n, v)| (*n, v.as_bytes())), status, head)
        };
        assert_eq!(resp(&[("Content-Length", "5")], 200, true), Ok(BodyFraming::Empty));
        assert_eq!(resp(&[("Content-Length", "5")], 304, false), Ok(BodyFraming::Empty));
        assert_eq!(resp(&[("Content-Length", "5")], 200, false), Ok(BodyFraming::Length(5)));
        assert_eq!(resp(&[], 200, false), Ok(BodyFraming::UntilClose));
        assert_eq!(resp(&[("Transfer-Encoding", "gzip")], 200, false), Ok(BodyFraming::UntilClose));
        assert_eq!(
            resp(&[("Transfer-Encoding", "chunked"), ("Content-Length", "5")], 200, false),
            Err(FramingError::LengthAndTransferEncoding)
        );
    }
}

//! The rest of a body whose source failed mid-way (a peer that died or stalled while a
//! fill relayed its response), fetched from the origin: `Range` from the first byte
//! missing, with `If-Range` naming the copy already begun, so the origin sends the rest of
//! that same copy or nothing usable. A changed copy (another validator or length) is
//! refused: the fill ends with an error, and clients see a cut body, never a mixed one.

use super::body::OriginBody;
use super::client::OriginClient;
use super::fields::{first, Field};
use std::rc::Rc;
use std::sync::Arc;

/// What identifies the copy being filled, to ask the origin for the same one.
#[derive(Clone, Debug)]
enum Validator {
    /// A strong entity tag (a weak one cannot validate a range: RFC 9110 §13.1.5).
    ETag(Vec<u8>),
    LastModified(Vec<u8>),
}

/// How to fetch the rest of one body from the origin.
pub struct Resume {
    client: Rc<OriginClient>,
    target: String,
    host: Option<Vec<u8>>,
    validator: Validator,
    /// The whole body's length.
    len: u64,
}

impl std::fmt::Debug for Resume {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Resume({} of {} bytes, {:?})", self.target, self.len, self.validator)
    }
}

impl Resume {
    /// A resume of the response with `fields` and length `len` for `target` on the site
    /// `host`; `None` when the response has no validator to ask for the same copy with.
    pub fn new(
        client: Rc<OriginClient>,
        (target, host): (&str, Option<&[u8]>),
        fields: &[Field],
        len: u64,
    ) -> Option<Resume> {
        let strong = first(fields, "etag").filter(|t| t.starts_with(b"\""));
        let validator = match (strong, first(fields, "last-modified")) {
            (Some(tag), _) => Validator::ETag(tag.to_vec()),
            (None, Some(date)) => Validator::LastModified(date.to_vec()),
            (None, None) => return None,
        };
        let (target, host) = (target.to_string(), host.map(<[u8]>::to_vec));
        Some(Resume { client, target, host, validator, len })
    }

    /// The body from byte `from` on, and how many bytes of it to skip first (an origin
    /// that ignores `Range` sends the whole copy again); an error when the origin's copy
    /// is not the one begun.
    pub async fn rest(&self, from: u64) -> Result<(OriginBody, u64), Arc<str>> {
        let range = format!("bytes={from}-");
        let (name, value) = match &self.validator {
            Validator::ETag(v) => ("etag", v),
            Validator::LastModified(v) => ("last-modified", v),
        };
        let fields: [(&str, &[u8]); 2] = [("Range", range.as_bytes()), ("If-Range", value)];
        let (head, body) = self
            .client
            .get(&self.target, self.host.as_deref(), &fields)
            .await
            .map_err(|e| Arc::from(format!("resuming from the origin: {e}")))?;
        let same = first(&head.fields, name) == Some(value.as_slice());
        let expected = format!("bytes {from}-{}/{}", self.len.saturating_sub(1), self.len);
        let skip = match head.status {
            206 if first(&head.fields, "content-range") == Some(expected.as_bytes()) => 0,
            200 if body.declared_len() == Some(self.len) => from,
            _ => return Err(changed(head.status)),
        };
        if !same {
            return Err(changed(head.status));
        }
        Ok((body, skip))
    }
}

fn changed(status: u16) -> Arc<str> {
    format!("the origin's copy changed mid-fill (it answered {status} to the rest)").into()
}

//! What a large object stored as slices is: which copy (its [`Version`]: validator and
//! length, which every slice must share, so a changed object never mixes slices), how it
//! is cut, and where each slice is stored. Data only; fetching is `slices.rs`.

use super::fields::{first, Field};
use std::sync::Arc;

/// Largest slice one node asks of another (and that `--slice-kb` may set).
pub const MAX_SLICE_BYTES: u64 = 64 << 20;

/// The copy of an object its slices belong to: a strong `ETag` (else `Last-Modified`) and
/// the whole length.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Version {
    /// The value an `If-Range` names the copy by.
    pub validator: Vec<u8>,
    /// The whole object's length in bytes.
    pub total: u64,
}

impl Version {
    /// The version of a response with `fields` and whole length `total`; `None` without
    /// a validator a range request can name it by (a weak `ETag` cannot: RFC 9110 §13.1.5).
    pub fn of(fields: &[Field], total: u64) -> Option<Version> {
        let strong = first(fields, "etag").filter(|t| t.starts_with(b"\""));
        let validator = strong.or_else(|| first(fields, "last-modified"))?.to_vec();
        Some(Version { validator, total })
    }

    /// The field that carries the validator: `ETag` or `Last-Modified`.
    pub fn field_name(&self) -> &'static str {
        if self.validator.starts_with(b"\"") {
            "ETag"
        } else {
            "Last-Modified"
        }
    }
}

/// How one object is sliced, and how to ask the origin for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SliceSpec {
    /// The object's store key (`site.rs`).
    pub key: String,
    /// The request target sent to the origin, and the `Host` (`None`: the origin's own).
    pub target: String,
    pub host: Option<Vec<u8>>,
    pub version: Version,
    /// Bytes per slice (the last one may be shorter).
    pub slice_bytes: u64,
}

impl SliceSpec {
    /// How many slices the object has.
    pub fn count(&self) -> u64 {
        self.version.total.div_ceil(self.slice_bytes)
    }

    /// The first and last byte (inclusive) of slice `index`.
    pub fn bytes_of(&self, index: u64) -> (u64, u64) {
        let first = index * self.slice_bytes;
        (first, (first + self.slice_bytes).min(self.version.total) - 1)
    }

    /// The store key of slice `index`: the object's key, a space (which no request target
    /// holds), the slice size and the index, so a purge by prefix drops the slices with the
    /// object.
    pub fn slice_key(&self, index: u64) -> String {
        format!("{} slice {}:{index}", self.key, self.slice_bytes)
    }

    /// The slice as asked of its owner.
    pub fn request(&self, index: u64) -> wire::SliceRequest {
        wire::SliceRequest { index, size: self.slice_bytes, total: self.version.total }
    }
}

/// Why a slice could not be had.
#[derive(Clone, Debug, thiserror::Error)]
pub enum SliceError {
    /// The origin's copy is not the one the slice was wanted for.
    #[error("the origin's copy of the object changed")]
    Changed,
    #[error("{0}")]
    Failed(Arc<str>),
}

/// One stored slice: its bytes and the copy they are of.
#[derive(Debug)]
pub struct Slice {
    pub version: Version,
    pub body: Arc<[u8]>,
}

#[cfg(test)]
mod tests {
    use super::super::fields::from_pairs as fields;
    use super::*;

    #[test]
    fn a_strong_tag_else_the_date_names_the_copy() {
        let lm = "Tue, 15 Nov 1994 12:45:26 GMT";
        let v = Version::of(&fields(&[("ETag", "\"a\""), ("Last-Modified", lm)]), 9).unwrap();
        assert_eq!((v.validator.as_slice(), v.field_name()), (&b"\"a\""[..], "ETag"));
        let v = Version::of(&fields(&[("ETag", "W/\"a\""), ("Last-Modified", lm)]), 9).unwrap();
        assert_eq!((v.validator.as_slice(), v.field_name()), (lm.as_bytes(), "Last-Modified"));
        assert_eq!(Version::of(&fields(&[("ETag", "W/\"a\"")]), 9), None);
    }

    #[test]
    fn slices_cover_the_object_the_last_one_short() {
        let version = Version { validator: b"\"a\"".to_vec(), total: 25 };
        let spec = SliceSpec {
            key: "/v".into(),
            target: "/v".into(),
            host: None,
            version,
            slice_bytes: 10,
        };
        assert_eq!(spec.count(), 3);
        assert_eq!((spec.bytes_of(0), spec.bytes_of(2)), ((0, 9), (20, 24)));
        assert_eq!(spec.slice_key(2), "/v slice 10:2");
        assert_eq!(spec.request(2).bytes(), spec.bytes_of(2));
    }
}

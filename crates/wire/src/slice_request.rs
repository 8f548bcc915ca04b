//! Slice fill: a caching node that stores a large object as fixed-size slices asks each
//! slice of the node that owns it (the same node on every node: rendezvous hashing of the
//! target and the slice's index over the cluster's nodes), so one large object costs the
//! origin at most one request per slice cluster-wide and spreads over the cluster.
//!
//! The request to the owner is a GET of the object's target carrying the peer-fill mark
//! ([`crate::PEER_FILL_FIELD`]), the copy's validator in `If-Range`, and
//! `X-Larder-Slice: <index>/<slice bytes>/<object bytes>` ([`SliceRequest`]). The owner
//! answers 206 with exactly that slice (`Content-Range`, and the validator it has), from
//! its store or from the origin, never from another node: a slice request is never sent
//! on, so no two nodes can pass one back and forth.

/// The field naming the slice a node asks of its owner.
pub const SLICE_HEADER: &str = "X-Larder-Slice";

/// One slice of an object: the `index`-th run of `size` bytes of an object of `total`
/// bytes (the last one shorter).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SliceRequest {
    pub index: u64,
    pub size: u64,
    pub total: u64,
}

impl SliceRequest {
    /// The field's value, `<index>/<size>/<total>`.
    pub fn value(&self) -> String {
        format!("{}/{}/{}", self.index, self.size, self.total)
    }

    /// Read a field value; `None` unless it is three numbers naming a slice inside its
    /// object (a size above zero, an index below the slice count).
    pub fn parse(value: &[u8]) -> Option<SliceRequest> {
        let text = std::str::from_utf8(value.trim_ascii()).ok()?;
        let mut parts = text.split('/').map(|p| p.parse::<u64>().ok());
        let (index, size, total) = (parts.next()??, parts.next()??, parts.next()??);
        if parts.next().is_some() || size == 0 || index >= total.div_ceil(size) {
            return None;
        }
        Some(SliceRequest { index, size, total })
    }

    /// The first and last byte (inclusive) of the slice.
    pub fn bytes(&self) -> (u64, u64) {
        let first = self.index * self.size;
        (first, (first + self.size).min(self.total) - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_and_read_back() {
        let s = SliceRequest { index: 4, size: 1 << 20, total: 5 << 20 };
        assert_eq!(SliceRequest::parse(s.value().as_bytes()), Some(s));
        assert_eq!(s.bytes(), (4 << 20, (5 << 20) - 1));
        let last = SliceRequest { index: 2, size: 10, total: 25 };
        assert_eq!(last.bytes(), (20, 24));
        assert_eq!(SliceRequest::parse(b" 2/10/25 "), Some(last));
    }

    #[test]
    fn refuses_what_names_no_slice() {
        for bad in ["", "1/2", "1/2/3/4", "0/0/10", "3/10/25", "a/1/2", "-1/1/2", "1/1/1"] {
            assert_eq!(SliceRequest::parse(bad.as_bytes()), None, "{bad:?}");
        }
    }
}

//! The bytes of a large object stored as slices, from one byte to another, slice after
//! slice as a client's connection takes them: one slice in memory per reader at a time,
//! whatever the object's size.

use super::slice_spec::{Slice, SliceSpec};
use super::slices;
use crate::state::NodeState;
use std::rc::Rc;
use std::sync::Arc;

/// Most bytes handed over at a time.
const PIECE: usize = 256 * 1024;

/// One client's position in a sliced object.
pub struct SliceReader {
    node: Rc<NodeState>,
    spec: Arc<SliceSpec>,
    /// The next byte to hand over, and the end (exclusive).
    pos: u64,
    end: u64,
    /// The slice being handed over, by index.
    current: Option<(u64, Arc<Slice>)>,
}

impl std::fmt::Debug for SliceReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SliceReader({} at {} of {})", self.spec.key, self.pos, self.end)
    }
}

impl SliceReader {
    /// A reader of bytes `first..=last` of `spec`'s object.
    pub fn new(node: &Rc<NodeState>, spec: Arc<SliceSpec>, (first, last): (u64, u64)) -> Self {
        let node = Rc::clone(node);
        SliceReader { node, spec, pos: first, end: last + 1, current: None }
    }

    /// The next bytes, `None` at the end; an error when a slice cannot be had (the
    /// client's answer is then cut, never completed with another copy's bytes).
    pub async fn next(&mut self) -> Result<Option<Vec<u8>>, String> {
        if self.pos >= self.end {
            return Ok(None);
        }
        let index = self.pos / self.spec.slice_bytes;
        let slice = match &self.current {
            Some((i, s)) if *i == index => Arc::clone(s),
            _ => {
                let Some(origin) = &self.node.origin else {
                    return Err("not a caching node".into());
                };
                let s = slices::get(&origin.upstream, &self.spec, index, false)
                    .await
                    .map_err(|e| e.to_string())?;
                self.current = Some((index, Arc::clone(&s)));
                s
            }
        };
        let (first, _) = self.spec.bytes_of(index);
        let from = (self.pos - first) as usize;
        let to = ((self.end - first) as usize).min(slice.body.len()).min(from + PIECE);
        if from >= to {
            return Err(format!("slice {index} of {} is short", self.spec.key));
        }
        self.pos += (to - from) as u64;
        Ok(Some(slice.body[from..to].to_vec()))
    }
}

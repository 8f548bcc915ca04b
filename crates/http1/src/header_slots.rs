//! Room for the fields httparse finds in a head, without paying for it per message.

use std::mem::MaybeUninit;

/// Slots on the stack up to this many fields; a larger configured limit takes the heap.
const STACK_SLOTS: usize = 128;

/// Header slots for httparse, uninitialised (so they cost nothing to make) and on the
/// stack up to `STACK_SLOTS`. A parse that borrows the received bytes in place needs its
/// slots to outlive the parse, so the caller owns them: one per parse, on its own stack.
pub struct HeaderSlots<'b> {
    stack: [MaybeUninit<httparse::Header<'b>>; STACK_SLOTS],
    heap: Vec<MaybeUninit<httparse::Header<'b>>>,
}

impl Default for HeaderSlots<'_> {
    #[inline]
    fn default() -> Self {
        Self::new()
    }
}

impl<'b> HeaderSlots<'b> {
    // `#[inline]` here and below: this runs for every request and response the router
    // relays, from another crate.
    #[inline]
    pub fn new() -> Self {
        HeaderSlots { stack: [const { MaybeUninit::uninit() }; STACK_SLOTS], heap: Vec::new() }
    }

    /// `n` slots, for a parse that accepts at most `n` fields.
    #[inline]
    pub fn get(&mut self, n: usize) -> &mut [MaybeUninit<httparse::Header<'b>>] {
        if n <= STACK_SLOTS {
            &mut self.stack[..n]
        } else {
            self.heap.resize_with(n, MaybeUninit::uninit);
            &mut self.heap
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn as_many_slots_as_asked_on_the_stack_or_the_heap() {
        let mut slots = HeaderSlots::new();
        assert_eq!(slots.get(3).len(), 3);
        assert_eq!(slots.get(STACK_SLOTS + 5).len(), STACK_SLOTS + 5);
    }
}

//! Target: what counts as "the same thing" for locality (made by [`crate::mapper`]).
//!
//! A [`Target`] is small and `Copy` so the simulator can move millions per second; the
//! normalised path it stands for is returned beside it by the mapper for logs and admin.

/// Identity of a normalised target (a stable 64-bit hash of its normalised form).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TargetKey(pub u64);

/// A content class (for example static vs dynamic) from the mapper's rules.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClassId(pub u8);

impl ClassId {
    /// The class of anything no rule matched.
    pub const DEFAULT: ClassId = ClassId(0);
    /// The class the default mapper rules give dynamic content (`/app/`, `.nsf`, `.cgi`, …).
    pub const DYNAMIC: ClassId = ClassId(1);
}

/// What a request needs, as far as placement is concerned.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Target {
    /// The target itself (a file, or a Domino view).
    pub key: TargetKey,
    /// The subtree holding it, at the mapper's configured depth (HACC assigns subtrees).
    pub tree: TargetKey,
    pub class: ClassId,
}

impl Target {
    /// A target known only by its key: its own tree, default class (simulator, tests).
    pub fn from_key(key: u64) -> Target {
        Target { key: TargetKey(key), tree: TargetKey(key), class: ClassId::DEFAULT }
    }
}

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

/// Most subtree levels a [`Target`] carries ([`TreePath`]): the root, six directory
/// levels below it and the target itself. Deeper directories are not offered for placement.
pub const TREE_LEVELS: usize = 8;

/// The subtrees a target lies in, coarsest first, as the mapper offers them to HACC:
/// with adaptive subtrees the root `/`, each enclosing directory and the target itself
/// (so a hot subtree can split down to single targets); with a fixed tree depth only
/// that one subtree (so nothing splits). Fixed-size, so [`Target`] stays `Copy`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct TreePath {
    keys: [TargetKey; TREE_LEVELS],
    len: u8,
}

impl TreePath {
    /// A path of one subtree.
    pub fn single(key: TargetKey) -> TreePath {
        let mut path = TreePath::default();
        path.push(key);
        path
    }

    /// Append a finer level; false (and unchanged) when the path is full.
    pub fn push(&mut self, key: TargetKey) -> bool {
        let Some(slot) = self.keys.get_mut(self.len as usize) else { return false };
        *slot = key;
        self.len += 1;
        true
    }

    /// The levels, coarsest first.
    pub fn levels(&self) -> &[TargetKey] {
        &self.keys[..self.len as usize]
    }
}

/// What a request needs, as far as placement is concerned.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Target {
    /// The target itself (a file, or a Domino view).
    pub key: TargetKey,
    /// The subtree holding it that nodes are told of (and list in their digests): the
    /// directory at the mapper's fixed tree depth, or with adaptive subtrees the target's
    /// own directory.
    pub tree: TargetKey,
    /// The subtrees HACC may place it by, coarsest first.
    pub subtrees: TreePath,
    pub class: ClassId,
}

impl Target {
    /// A target in one subtree `tree` (which never splits).
    pub fn new(key: TargetKey, tree: TargetKey, class: ClassId) -> Target {
        Target { key, tree, subtrees: TreePath::single(tree), class }
    }

    /// A target known only by its key: its own tree, default class (simulator, tests).
    pub fn from_key(key: u64) -> Target {
        Target::new(TargetKey(key), TargetKey(key), ClassId::DEFAULT)
    }
}

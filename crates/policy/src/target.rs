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

    /// The same target on the site a request's `Host` names (compared without case): every
    /// key mixed with the site's, so two sites' `/index.html` are two targets placed on
    /// their own, while the subtrees of one site still nest as its paths do. For routers
    /// in front of caches that keep one object per site (virtual hosts).
    pub fn on_site(self, host: &[u8]) -> Target {
        let mut site = crate::stable_hash::Fnv1a::new();
        for &b in host.trim_ascii() {
            site.write(&[b.to_ascii_lowercase()]);
        }
        let site = site.finish();
        let on = |k: TargetKey| TargetKey(crate::stable_hash::mix64(k.0 ^ site));
        let mut subtrees = TreePath::default();
        for &level in self.subtrees.levels() {
            subtrees.push(on(level));
        }
        Target { key: on(self.key), tree: on(self.tree), subtrees, class: self.class }
    }

    /// A target known only by its key: its own tree, default class (simulator, tests).
    pub fn from_key(key: u64) -> Target {
        Target::new(TargetKey(key), TargetKey(key), ClassId::DEFAULT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_path_on_two_sites_is_two_targets_and_a_site_ignores_case() {
        let mut subtrees = TreePath::single(TargetKey(1));
        subtrees.push(TargetKey(2));
        let t = Target { key: TargetKey(2), tree: TargetKey(1), subtrees, class: ClassId(3) };
        let (a, b) = (t.on_site(b"shop.example"), t.on_site(b"blog.example"));
        assert_ne!(a.key, b.key);
        assert_ne!(a.key, t.key);
        assert_eq!(a, t.on_site(b" SHOP.Example "));
        assert_eq!(a.subtrees.levels().len(), 2);
        assert_eq!(a.subtrees.levels()[1], a.key);
        assert_eq!(a.class, t.class);
    }
}

#!/usr/bin/env python3
"""Finds import circles between the files of each crate under crates/.

A file imports another file of its crate when one of its paths (`use crate::a::b`,
`super::x`, `crate::a::f()` in code) resolves to an item of that file's module; a path
through a `pub use` re-export resolves to where the item is defined. A circle is a set
of files that reach each other that way (a strongly connected component of two or more
files). Test modules (`#[cfg(test)]` to the end of a file) and tests/ directories are left
out: they import what they test.

Usage: scripts/module-cycles.py [ROOT]   (ROOT defaults to the repository root)
Prints every circle and exits 1 when there is one; prints "no module circles" and exits 0
otherwise.
"""

import os
import re
import sys

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
MOD_DECL = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(" + IDENT + r")\s*;", re.M)
USE_STMT = re.compile(r"\b(pub(?:\([^)]*\))?\s+)?use\s+([^;]+);", re.S)
INLINE_PATH = re.compile(r"(?<![A-Za-z0-9_:$])((?:crate|super|self)(?:::" + IDENT + r")+)")


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text)
    return re.sub(r"//[^\n]*", "", text)


def without_tests(text):
    m = re.search(r"^\s*#\[cfg\(test\)\]", text, flags=re.M)
    return text[: m.start()] if m else text


def expand_use_tree(tree):
    """`a::{b, c::{d, e as f}}` -> [(["a","b"], "b"), (["a","c","d"], "d"), (["a","c","e"], "f")]."""
    tree = re.sub(r"\s+", "", re.sub(r"\s+as\s+", "@", tree))
    out = []

    def walk(prefix, s):
        depth, start, parts = 0, 0, []
        for i, ch in enumerate(s):
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            elif ch == "," and depth == 0:
                parts.append(s[start:i])
                start = i + 1
        parts.append(s[start:])
        for part in parts:
            if not part:
                continue
            if "{" in part:
                head, rest = part.split("{", 1)
                head_segs = [x for x in head.split("::") if x]
                walk(prefix + head_segs, rest[:-1])
            else:
                part, _, alias = part.partition("@")
                segs = prefix + [x for x in part.split("::") if x]
                if segs:
                    out.append((segs, alias or segs[-1]))

    walk([], tree)
    return out


class Crate:
    def __init__(self, src):
        self.src = src
        self.files = {}  # module path tuple -> file
        root = "lib.rs" if os.path.exists(os.path.join(src, "lib.rs")) else "main.rs"
        self._load((), os.path.join(src, root), src)
        self.texts = {m: without_tests(strip_comments(open(f).read())) for m, f in self.files.items()}
        self.reexports = {m: self._reexports(m) for m in self.files}

    def _load(self, modpath, file, dirpath):
        if not os.path.exists(file):
            return
        self.files[modpath] = file
        text = strip_comments(open(file).read())
        base = os.path.basename(file)
        child_dir = dirpath if base in ("lib.rs", "main.rs", "mod.rs") else os.path.join(
            dirpath, base[:-3])
        for name in MOD_DECL.findall(text):
            for cand in (os.path.join(child_dir, name + ".rs"),
                         os.path.join(child_dir, name, "mod.rs")):
                if os.path.exists(cand):
                    self._load(modpath + (name,), cand,
                               child_dir if cand.endswith(name + ".rs") else os.path.join(child_dir, name))
                    break

    def _reexports(self, mod):
        names = {}
        for m in USE_STMT.finditer(self.texts[mod]):
            if not m.group(1):
                continue
            for segs, alias in expand_use_tree(m.group(2)):
                names[alias] = (mod, segs)
        return names

    def absolute(self, mod, segs):
        """Turn a path as written in module `mod` into an absolute segment list, or None."""
        if not segs:
            return None
        if segs[0] == "crate":
            return list(segs[1:])
        base = list(mod)
        i = 0
        while i < len(segs) and segs[i] in ("super", "self"):
            if segs[i] == "super":
                if not base:
                    return None
                base.pop()
            i += 1
        if i == 0:
            # A path relative to this module: only child modules count.
            if tuple(base + [segs[0]]) in self.files:
                return base + list(segs)
            return None
        return base + list(segs[i:])

    def resolve(self, segs, seen=0):
        """The module (file) that defines what the absolute path `segs` names."""
        mod = ()
        for i, seg in enumerate(segs):
            nxt = mod + (seg,)
            if nxt in self.files:
                mod = nxt
                continue
            exported = self.reexports.get(mod, {}).get(seg)
            if exported and seen < 8:
                where, target = exported
                target_abs = self.absolute(where, target)
                if target_abs is not None:
                    return self.resolve(target_abs + list(segs[i + 1:]), seen + 1)
            return mod
        return mod

    def edges(self):
        graph = {m: set() for m in self.files}
        for mod, text in self.texts.items():
            paths = []
            for m in USE_STMT.finditer(text):
                paths.extend(segs for segs, _ in expand_use_tree(m.group(2)))
            paths.extend(p.split("::") for p in INLINE_PATH.findall(text))
            for segs in paths:
                absolute = self.absolute(mod, segs)
                if absolute is None:
                    continue
                target = self.resolve(absolute)
                if target != mod and target in self.files:
                    graph[mod].add(target)
        return graph


def circles(graph):
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    sys.setrecursionlimit(10000)
    for v in graph:
        if v not in index:
            strong(v)
    return out


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    crates_dir = os.path.join(root, "crates")
    found = 0
    for name in sorted(os.listdir(crates_dir)):
        src = os.path.join(crates_dir, name, "src")
        if not os.path.isdir(src):
            continue
        crate = Crate(src)
        graph = crate.edges()
        for comp in circles(graph):
            found += 1
            files = sorted(os.path.relpath(crate.files[m], root) for m in comp)
            print(f"circle in {name}: " + " <-> ".join(files))
            for m in sorted(comp):
                inside = sorted(os.path.relpath(crate.files[t], root) for t in graph[m] if t in comp)
                print(f"  {os.path.relpath(crate.files[m], root)} imports {', '.join(inside)}")
    if found:
        sys.exit(1)
    print("no module circles")


if __name__ == "__main__":
    main()

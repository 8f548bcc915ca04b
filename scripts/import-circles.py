#!/usr/bin/env python3
"""Import circles between the files of a crate: pairs that import each other (A uses
crate::B, B uses crate::A) and longer cycles (A -> B -> C -> A).

Usage: scripts/import-circles.py crates/*   (exit status 1 when any circle is found)

Counts `crate::x` paths anywhere (use lines, inline paths, `use crate::{x, y::z}` groups);
`super::x` outside test modules counts as the sibling `x`. Items the crate root only
re-exports (`crate::RouterError`) are not edges. `#[cfg(test)]` modules are skipped."""
import os, re, sys
def mods(src):
    out = {}
    for root, _, files in os.walk(src):
        for f in files:
            if f.endswith('.rs'):
                p = os.path.join(root, f)
                rel = os.path.relpath(p, src)[:-3]
                parts = rel.split(os.sep)
                if parts[-1] == 'mod': parts = parts[:-1]
                out['::'.join(parts) or 'lib'] = p
    return out
def strip_tests(text):
    i = text.find('#[cfg(test)]')
    return text if i < 0 else text[:i]
def deps(name, text, names):
    text = strip_tests(text)
    text = re.sub(r'//[^\n]*', '', text)
    found = set()
    # expand use crate::{a, b::c, d::{e}}
    for m in re.finditer(r'crate::\{([^;]*?)\};', text, re.S):
        for item in re.split(r',', re.sub(r'\{[^}]*\}', '', m.group(1))):
            item = item.strip()
            if item: found.add(item.split('::')[0])
    for m in re.finditer(r'crate::([a-z_][a-z0-9_]*)', text):
        found.add(m.group(1))
    if '::' in name or name != 'lib':
        parent = '::'.join(name.split('::')[:-1]) or 'lib'
        for m in re.finditer(r'super::([a-z_][a-z0-9_]*)', text):
            found.add((parent + '::' if parent != 'lib' else '') + m.group(1))
    resolved = set()
    for d in found:
        if d in names and d != name: resolved.add(d)
        elif d.split('::')[0] in names and d.split('::')[0] != name: resolved.add(d.split('::')[0])
    return resolved
bad = 0
for crate in sys.argv[1:]:
    src = os.path.join(crate, 'src')
    ms = mods(src)
    g = {n: deps(n, open(p).read(), ms) for n, p in ms.items()}
    for a in sorted(g):
        for b in sorted(g[a]):
            if a < b and a in g.get(b, ()):
                print(f'{crate}: {a} <-> {b}'); bad += 1
    for a in sorted(g):
        seen, todo = set(), [a]
        while todo:
            for y in g.get(todo.pop(), ()):
                if y not in seen:
                    seen.add(y); todo.append(y)
        if a in seen and not any(a in g.get(b, ()) and b in g[a] for b in g):
            print(f'{crate}: {a} is on a longer import cycle'); bad += 1
print(f'{bad} import circle(s)')
sys.exit(1 if bad else 0)

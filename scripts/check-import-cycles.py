#!/usr/bin/env python3
"""No module imports, directly or through others, a module that imports it back.

Usage: scripts/check-import-cycles.py [CRATE_DIR ...]   (default: every workspace member)

How the graph is built (per crate, per crate root: src/lib.rs, src/main.rs, src/bin/*.rs,
tests/*.rs, benches/*.rs, examples/*.rs):
- Nodes are modules: one per file reached through `mod NAME;` declarations, and one per
  inline `mod NAME { ... }` block (e.g. `#[cfg(test)] mod tests`).
- An edge A -> B is any path in A's code (not in comments or strings) that names module B:
  `use crate::a::b::{c, d}`, `crate::a::b::Item` anywhere (attributes included), `super::`,
  `self::`, and relative `use child::Item` / `child::Item` paths. A path resolves to the
  longest prefix that is a module, so `crate::faults::FaultSpec` (a re-export) is an edge to
  `faults`, and `crate::faults::spec::FaultSpec` an edge to `faults::spec`.
- A `mod` declaration alone is not an edge: declaring children is structure, not use.
- Doc-comment links are comments and do not count.

The rule: every strongly connected component of that graph must be a single module. So a
module may import its own child (a `mod.rs` re-exporting `spec::FaultSpec`), and a child may
import its parent's items (`use super::Thing`), but not both: parent and child would then be
a cycle. An inline test module that does `use super::*` is fine because the parent never
imports its tests.

Exit status 1 and, per cycle, its modules and the edges inside it when any crate has one; 0 otherwise.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

WORKSPACE_CRATES = ["resp", "core", "ffi", "python", "local", "local/process-cpu", "bench", "loadgen"]
IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def strip_comments_and_strings(src: str) -> str:
    """Blank out comments, string and char literals (keeping newlines and braces' places)."""
    out = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif src.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if src.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif src.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif c == "r" and re.match(r'r#*"', src[i:i + 40]) and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_")):
            hashes = re.match(r"r(#*)\"", src[i:]).group(1)
            end = src.find('"' + hashes, i + 2 + len(hashes))
            end = n if end < 0 else end + 1 + len(hashes)
            out.append(re.sub(r"[^\n]", " ", src[i:end]))
            i = end
        elif c == '"':
            j = i + 1
            while j < n and src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            out.append(re.sub(r"[^\n]", " ", src[i:j + 1]))
            i = j + 1
        elif c == "'":
            # A char literal ('a', '\n', '\u{1F600}') or a lifetime ('a): blank only literals.
            m = re.match(r"'(\\(u\{[0-9a-fA-F]+\}|x[0-9a-fA-F]{2}|.)|[^\\'])'", src[i:i + 12])
            if m:
                out.append(" " * len(m.group(0)))
                i += len(m.group(0))
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def expand_use_tree(prefix: list[str], tree: str) -> list[list[str]]:
    """`a::{b, c::{d, e}}` -> [[a, b], [a, c, d], [a, c, e]] (globs and renames dropped)."""
    tree = tree.strip()
    if not tree:
        return [prefix] if prefix else []
    # Split off a leading path before a brace group.
    depth = 0
    for k, ch in enumerate(tree):
        if ch == "{":
            if depth == 0:
                head = [p for p in tree[:k].split("::") if p.strip()]
                inner = tree[k + 1:tree.rindex("}")]
                parts, cur, d = [], "", 0
                for ch2 in inner:
                    if ch2 == "," and d == 0:
                        parts.append(cur)
                        cur = ""
                        continue
                    d += ch2 == "{"
                    d -= ch2 == "}"
                    cur += ch2
                parts.append(cur)
                result = []
                for p in parts:
                    if p.strip():
                        result += expand_use_tree(prefix + [h.strip() for h in head], p)
                return result
            depth += 1
    path = tree.split(" as ")[0].strip()
    segs = [s.strip() for s in path.split("::") if s.strip() and s.strip() != "*"]
    return [prefix + segs]


class Crate:
    def __init__(self, root: Path):
        self.root = root
        self.modules: set[tuple[str, ...]] = set()
        # module -> (cleaned source, list of (line, path segments))
        self.bodies: dict[tuple[str, ...], str] = {}
        self.edges: dict[tuple[str, ...], set[tuple[str, ...]]] = {}

    def load(self, path: Path, module: tuple[str, ...], is_mod_rs: bool) -> None:
        src = strip_comments_and_strings(path.read_text())
        self._scan(src, module, path, is_mod_rs)

    def _scan(self, src: str, module: tuple[str, ...], path: Path, is_mod_rs: bool) -> None:
        self.modules.add(module)
        # Inline `mod name { ... }` blocks become child modules; cut them out of this body.
        body = []
        i = 0
        for m in re.finditer(rf"\bmod\s+({IDENT})\s*(;|\{{)", src):
            if m.start() < i:
                continue
            name = m.group(1)
            body.append(src[i:m.start()])
            if m.group(2) == ";":
                child_dir = path.parent if is_mod_rs or path.name in ("lib.rs", "main.rs") or self._is_root(path) else path.parent / path.stem
                for cand, child_is_mod in ((child_dir / f"{name}.rs", False), (child_dir / name / "mod.rs", True)):
                    if cand.exists():
                        self.load(cand, module + (name,), child_is_mod)
                        break
                i = m.end()
            else:
                depth, j = 1, m.end()
                while j < len(src) and depth:
                    depth += src[j] == "{"
                    depth -= src[j] == "}"
                    j += 1
                # Files of an inline module's `mod x;` children live in a folder named after it.
                inline_path = (path.parent if is_mod_rs or self._is_root(path) else path.parent / path.stem) / name / "mod.rs"
                self._scan(src[m.end():j - 1], module + (name,), inline_path, True)
                i = j
        body.append(src[i:])
        self.bodies[module] = "".join(body)

    def _is_root(self, path: Path) -> bool:
        return path in self.roots

    def paths_in(self, module: tuple[str, ...]) -> list[list[str]]:
        text = self.bodies[module]
        found: list[list[str]] = []
        # `use` trees (with braces) first, then any other `a::b::c` path in code.
        for m in re.finditer(r"\buse\s+([^;]+);", text):
            found += expand_use_tree([], m.group(1))
        rest = re.sub(r"\buse\s+[^;]+;", " ", text)
        for m in re.finditer(rf"(?<![A-Za-z0-9_:])((?:{IDENT}\s*::\s*)+{IDENT})", rest):
            found.append([s.strip() for s in m.group(1).split("::")])
        return found

    def resolve(self, module: tuple[str, ...], segs: list[str]) -> tuple[str, ...] | None:
        segs = [s for s in segs if s]
        if not segs:
            return None
        if segs[0] == "crate":
            base, segs = (), segs[1:]
        elif segs[0] == "self":
            base, segs = module, segs[1:]
        elif segs[0] == "super":
            base = module
            while segs and segs[0] == "super":
                base, segs = base[:-1], segs[1:]
        elif module + (segs[0],) in self.modules:
            base = module  # a relative path to a child module
        else:
            return None  # an external crate, a type's associated item, std, ...
        target = base
        for s in segs:
            if target + (s,) in self.modules:
                target = target + (s,)
            else:
                break
        return target

    def build(self) -> None:
        for module in self.modules:
            deps = set()
            for segs in self.paths_in(module):
                t = self.resolve(module, segs)
                if t is not None and t != module:
                    deps.add(t)
            self.edges[module] = deps


def strongly_connected(nodes, edges):
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        # Iterative Tarjan (module graphs are small, but avoid recursion limits anyway).
        work = [(v, iter(sorted(edges.get(v, ()))))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        while work:
            node, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                    advanced = True
                    break
                if w in on_stack:
                    low[node] = min(low[node], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                out.append(comp)

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def crate_roots(crate_dir: Path) -> list[Path]:
    roots = []
    for rel in ("src/lib.rs", "src/main.rs"):
        if (crate_dir / rel).exists():
            roots.append(crate_dir / rel)
    for folder in ("src/bin", "tests", "benches", "examples"):
        d = crate_dir / folder
        if d.is_dir():
            roots += sorted(d.glob("*.rs"))
            roots += sorted(p for p in d.glob("*/main.rs"))
    return roots


def check(crate_dir: Path) -> list[str]:
    problems = []
    roots = crate_roots(crate_dir)
    for root in roots:
        crate = Crate(root)
        crate.roots = set(roots)
        crate.load(root, (), False)
        crate.build()
        for comp in strongly_connected(crate.modules, crate.edges):
            if len(comp) > 1:
                names = sorted("crate" if not m else "::".join(m) for m in comp)
                problems.append(f"{root.relative_to(crate_dir.parent)}: import cycle among {len(comp)} modules: {', '.join(names)}")
                members = set(comp)
                for m in sorted(comp):
                    for t in sorted(crate.edges[m] & members):
                        problems.append(f"    {'::'.join(m) or 'crate'} -> {'::'.join(t) or 'crate'}")
    return problems


def main(argv: list[str]) -> int:
    here = Path(__file__).resolve().parent.parent
    crates = [Path(a) for a in argv] if argv else [here / c for c in WORKSPACE_CRATES]
    problems = []
    for c in crates:
        problems += check(c.resolve())
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"no import cycles in {len(crates)} crate(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

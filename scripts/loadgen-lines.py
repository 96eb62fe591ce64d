#!/usr/bin/env python3
"""The load generator's size as issue #53 counts it: the lines of each file under loadgen/src
above its first `#[cfg(test)]` (tests/ is outside), per top-level folder and in total.

A file that is compiled only under `#[cfg(test)]` (declared `#[cfg(test)] mod NAME;` by its
parent) holds tests only: it is listed apart and not counted.

Usage: scripts/loadgen-lines.py [REPO_DIR]   (default: the current directory)
"""

import pathlib
import re
import sys
from collections import Counter

CFG_TEST = re.compile(r"^\s*#\[cfg\(test\)\]")
TEST_MOD = re.compile(r"^\s*#\[cfg\(test\)\]\s*(?:\n\s*)?mod\s+(\w+)\s*;", re.M)


def counted_lines(text: str) -> int:
    """Lines above the first `#[cfg(test)]` (all of them when there is none)."""
    for number, line in enumerate(text.splitlines()):
        if CFG_TEST.match(line):
            return number
    return len(text.splitlines())


def test_only_files(src: pathlib.Path) -> set[pathlib.Path]:
    """Files a parent declares as `#[cfg(test)] mod NAME;`: `NAME.rs` or `NAME/mod.rs` beside
    the parent (or in the parent's folder, for a `mod.rs` or a `lib.rs`)."""
    found = set()
    for parent in src.rglob("*.rs"):
        folder = parent.parent if parent.name in ("mod.rs", "lib.rs", "main.rs") else parent.with_suffix("")
        for name in TEST_MOD.findall(parent.read_text()):
            for candidate in (folder / f"{name}.rs", folder / name / "mod.rs"):
                if candidate.is_file():
                    found.add(candidate)
    return found


def main() -> int:
    repo = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    src = repo / "loadgen" / "src"
    if not src.is_dir():
        print(f"loadgen-lines: no {src}", file=sys.stderr)
        return 2
    tests_only = test_only_files(src)
    per_folder = Counter()
    for path in sorted(src.rglob("*.rs")):
        if path in tests_only:
            continue
        top = path.relative_to(src).parts[0]
        per_folder[top] += counted_lines(path.read_text())
    for folder, lines in sorted(per_folder.items(), key=lambda kv: -kv[1]):
        print(f"{lines:7,}  {folder}")
    for path in sorted(tests_only):
        print(f"{'(tests)':>7}  {path.relative_to(src)}: {len(path.read_text().splitlines())} lines, not counted")
    print(f"{sum(per_folder.values()):7,}  loadgen non-test lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())

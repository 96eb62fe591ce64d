#!/usr/bin/env python3
"""Checks the built book (docs/book) and its sources (docs/src), and the README.

- every relative link of every built page leads to a page of the book and, with `#anchor`,
  to an element with that id on it;
- no page of the book, and not the README, points outside the repository (a relative link
  or an `{{#include}}` that climbs above the repository's root);
- every file an `{{#include}}` names exists;
- every link of the README to a file of the repository leads to one that exists;
- every line of the README's C, C++ and Python examples is a line of the example program it
  is taken from (which `make test` builds and runs), so the excerpts cannot rot.

Usage: check-book.py REPO_ROOT
"""

from __future__ import annotations

import re
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit


class Page(HTMLParser):
    """The ids and the hrefs of one HTML page."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name == "id" and value:
                self.ids.add(value)
            if name == "href" and value and tag == "a":
                self.hrefs.append(value)


def parse(path: Path) -> Page:
    page = Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def is_external(href: str) -> bool:
    return bool(urlsplit(href).scheme) or href.startswith("//")


def check_built(book: Path, errors: list[str]) -> None:
    pages = {path: parse(path) for path in book.rglob("*.html")}
    for path, page in pages.items():
        if path.name in ("print.html", "404.html", "toc.html"):
            continue  # generated from the other pages
        for href in page.hrefs:
            if is_external(href) or href.startswith("mailto:"):
                continue
            parts = urlsplit(href)
            target = path if not parts.path else (path.parent / unquote(parts.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            where = f"{path.relative_to(book)}: link {href!r}"
            if not target.is_relative_to(book.resolve()) and not target.is_relative_to(book):
                errors.append(f"{where} leaves the book")
                continue
            if not target.exists():
                errors.append(f"{where}: no such page")
                continue
            if parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else parse(target).ids
                if unquote(parts.fragment) not in ids:
                    errors.append(f"{where}: no anchor #{parts.fragment}")


INCLUDE = re.compile(r"\{\{#include\s+([^}:\s]+)")
LINK = re.compile(r"\]\(([^)\s]+)\)")


def check_sources(root: Path, errors: list[str]) -> None:
    src = root / "docs" / "src"
    sources = sorted(src.rglob("*.md")) + [root / "README.md"]
    for md in sources:
        text = md.read_text(encoding="utf-8")
        for name in INCLUDE.findall(text):
            target = (md.parent / name).resolve()
            if not target.is_relative_to(root.resolve()):
                errors.append(f"{md.relative_to(root)}: include {name} is outside the repository")
            elif not target.is_file():
                errors.append(f"{md.relative_to(root)}: include {name}: no such file")
        for href in LINK.findall(text):
            if is_external(href) or href.startswith("#") or href.startswith("mailto:"):
                continue
            path = unquote(urlsplit(href).path)
            target = (md.parent / path).resolve()
            if not target.is_relative_to(root.resolve()):
                errors.append(f"{md.relative_to(root)}: link {href} points outside the repository")
            elif md.name == "README.md" and not target.exists():
                errors.append(f"README.md: link {href}: no such file")


# The tested programs the README's examples are excerpts of, by the language of the block.
EXCERPTS = {
    "c": ["ffi/examples/basic.c"],
    "cpp": ["ffi/examples/guard.cpp"],
    "python": ["python/examples/quickstart.py", "python/examples/asyncio_quickstart.py"],
}
FENCE = re.compile(r"^```(\w+)[^\n]*\n(.*?)^```", re.S | re.M)


def check_readme_excerpts(root: Path, errors: list[str]) -> None:
    text = (root / "README.md").read_text(encoding="utf-8")
    for lang, body in FENCE.findall(text):
        if lang not in EXCERPTS:
            continue
        known: set[str] = set()
        for name in EXCERPTS[lang]:
            known.update(line.strip() for line in (root / name).read_text(encoding="utf-8").splitlines())
        for line in body.splitlines():
            if line.strip() and line.strip() not in known:
                errors.append(f"README.md: {lang} example line not in {', '.join(EXCERPTS[lang])}: {line.strip()!r}")


def check_code_tour(root: Path, errors: list[str]) -> None:
    """The architecture page names every module of the load generator (a folder's `mod.rs`
    by its folder), so a new file cannot join the house unannounced."""
    page = (root / "docs" / "src" / "architecture.md").read_text()
    start = page.find("**`loadgen/src/`**")
    end = page.find("- `loadgen/tests/`", start)
    tour = page[start:end]
    src = root / "loadgen" / "src"
    toured = [p for p in sorted(src.rglob("*.rs")) if p.name not in ("mod.rs", "lib.rs", "tests.rs")]
    for path in toured:
        rel = path.relative_to(src)
        named = f"`{path.name}`" in tour or f"`{rel.as_posix()}`" in tour
        if not named:
            errors.append(f"docs/src/architecture.md: the loadgen code tour does not name loadgen/src/{rel.as_posix()}")
    for folder in sorted({p.parent for p in src.rglob("*.rs") if p.name != "tests.rs"} - {src}):
        if f"`{folder.name}/`" not in tour:
            errors.append(f"docs/src/architecture.md: the loadgen code tour does not name the folder loadgen/src/{folder.relative_to(src).as_posix()}/")


def main() -> int:
    root = Path(sys.argv[1]).resolve()
    book = root / "docs" / "book"
    errors: list[str] = []
    if not (book / "index.html").exists():
        errors.append(f"{book}: not built (run `make docs`)")
    else:
        check_built(book, errors)
    check_sources(root, errors)
    check_readme_excerpts(root, errors)
    check_code_tour(root, errors)
    for error in errors:
        print(f"check-book: {error}", file=sys.stderr)
    pages = len(list(book.rglob("*.html"))) if book.exists() else 0
    print(f"check-book: {pages} pages, {len(errors)} problem(s)", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

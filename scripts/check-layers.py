#!/usr/bin/env python3
"""No module imports a module of a layer above its own.

Usage: scripts/check-layers.py [--count] [CRATE_DIR ...]   (default: every crate in LAYERS)

Each crate below declares its layers, top first; a layer is a list of modules (a module's
children belong to its layer, unless a longer path names a child's own layer: the engine's
files are layered one by one, so imports inside the engine are checked too). An import from a module to one of a higher layer fails,
named with both modules and both layers. Imports inside a layer are free (the import-cycle gate,
scripts/check-import-cycles.py, keeps them acyclic). Inline `mod tests` blocks are exempt: a
unit test may set up its scene from anywhere. A module that no layer lists fails too, so a new
top-level module must be placed. The import graph is the one check-import-cycles.py builds.

--count prints only the number of upward imports (module pairs) per crate.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("import_cycles", HERE / "check-import-cycles.py")
cycles = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cycles)

# Top layer first. The same order is written down in docs/src/architecture.md.
LAYERS: dict[str, list[tuple[str, list[str]]]] = {
    "loadgen": [
        ("entry", ["app"]),
        ("commands", ["commands"]),
        ("cli", ["cli"]),
        ("plans", ["plans"]),
        # What is done with results: the engine hands neither to renderers nor to merge.
        ("readers", ["render", "merge"]),
        # One run of one configuration, file by file: a run of its modes, a mode, a worker...
        ("engine: run", ["engine::runner"]),
        ("engine: mode", ["engine::mode"]),
        ("engine: worker", ["engine::worker"]),
        ("engine: recorder", ["engine::recorder"]),
        ("engine: locks", ["engine::locks", "engine::storage"]),
        ("engine: schedule", ["engine::schedule", "engine::probe"]),
        ("engine: hooks", ["engine::hooks"]),
        ("engine: target", ["engine::target"]),
        ("engine: config", ["engine::config"]),
        ("engine: fault specs", ["engine::faults"]),
        ("engine: parts", ["engine::history", "engine::pacing", "engine::cpu", "engine::progress", "engine::keys", "engine::checker"]),
        ("engine", ["engine"]),
        ("exporter", ["exporter"]),
        ("model", ["model"]),
        ("base", ["error", "signals", "hist"]),
    ],
    "core": [
        ("surfaces", ["blocking", "watchdog"]),
        ("client", ["client", "handoff"]),
        ("fan-out", ["fanout"]),
        ("configuration", ["config", "telemetry"]),
        ("masters", ["master"]),
        ("votes", ["collector", "lock", "error"]),
        ("base", ["vote", "answer", "quorum", "validity", "argument", "redact"]),
    ],
}


def layer_of(layers, module: tuple[str, ...]) -> tuple[int, str] | None:
    """The layer of the longest listed path that `module` starts with."""
    best = None
    for rank, (name, paths) in enumerate(layers):
        for path in paths:
            parts = tuple(path.split("::"))
            if module[: len(parts)] == parts and (best is None or len(parts) > best[0]):
                best = (len(parts), rank, name)
    return None if best is None else best[1:]


def upward_imports(crate_dir: Path, layers) -> list[str]:
    root = crate_dir / "src" / "lib.rs"
    crate = cycles.Crate(root)
    crate.roots = {root}
    crate.load(root, (), False)
    crate.build()
    problems = []
    name = crate_dir.name
    for module in sorted(crate.modules):
        if not module or "tests" in module:
            continue
        mine = layer_of(layers, module)
        if mine is None:
            problems.append(f"{name}: module {'::'.join(module)} is in no layer (add it to LAYERS in {Path(__file__).name})")
            continue
        for target in sorted(crate.edges[module]):
            theirs = layer_of(layers, target)
            if theirs is not None and theirs[0] < mine[0]:
                problems.append(
                    f"{name}: {'::'.join(module)} (layer {mine[1]}) imports {'::'.join(target)} "
                    f"(layer {theirs[1]}, above it)"
                )
    return problems


def main(argv: list[str]) -> int:
    count = "--count" in argv
    argv = [a for a in argv if a != "--count"]
    crates = [Path(a).resolve() for a in argv] if argv else [HERE.parent / c for c in LAYERS]
    problems = []
    for c in crates:
        found = upward_imports(c, LAYERS[c.name])
        if count:
            print(f"{c.name}: {sum('imports' in p for p in found)} upward import(s)")
        problems += found
    if count:
        return 0
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"layers hold in {len(crates)} crate(s): no import runs up")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Acquire+release cycles per second from Python vs the Rust blocking API, same masters, same run.

Starts 5 local redis-server masters, then measures, for 1 thread and for 16 threads sharing
one client (each thread on a resource of its own):

- Python: ``redlock_rs.Redlock`` (the installed extension; build it with --release);
- Rust: the ``blocking-cycles`` binary of crate redlock-bench (``redlock_core::blocking``).

Each configuration runs ``--runs`` times; the table shows the median and the range.
Run it with ``make bench-python``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import cast

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python" / "tests"))

from conftest import FanOutName, LocalMasters  # noqa: E402

import redlock_rs  # noqa: E402
from w2 import run_w2  # noqa: E402


def python_cycles(urls: list[str], threads: int, seconds: float, fanout: FanOutName) -> float:
    """Cycles/s of `threads` Python threads sharing one client."""
    client = redlock_rs.Redlock(urls, fanout=fanout)
    client.acquire("bench:warm-up").release()
    done = run_w2(client, threads, seconds, "bench:py")
    return done.cycles / done.wall


def rust_cycles(binary: str, urls: list[str], threads: int, seconds: float, fanout: str) -> float:
    out = subprocess.run(
        [binary, "--masters", ",".join(urls), "--threads", str(threads), "--seconds", str(seconds), "--fanout", fanout],
        check=True,
        capture_output=True,
        text=True,
        timeout=seconds * 10 + 30,
    ).stdout
    return float(json.loads(out)["cycles_per_s"])


def load() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rust", required=True, help="path of the built `blocking-cycles` binary")
    parser.add_argument("--seconds", type=float, default=2.0, help="seconds per measurement")
    parser.add_argument("--runs", type=int, default=3, help="runs per configuration (median reported)")
    parser.add_argument("--fanout", default="concurrent", choices=["concurrent", "sequential"])
    args = parser.parse_args()

    masters = LocalMasters(5)
    try:
        print(f"redlock_rs {redlock_rs.__version__}, 5 local masters, fanout={args.fanout}, "
              f"{args.runs} runs x {args.seconds}s, load before: {load()}")
        rows = []
        for threads in (1, 16):
            py_runs, rust_runs = [], []
            for _ in range(args.runs):  # interleaved, so both see the same machine state
                py_runs.append(python_cycles(masters.urls, threads, args.seconds, cast(FanOutName, args.fanout)))
                rust_runs.append(rust_cycles(args.rust, masters.urls, threads, args.seconds, args.fanout))
            rows.append((threads, py_runs, rust_runs))
        print(f"load after: {load()} (uptime: {os.popen('uptime').read().strip()})")
        print()
        print("| threads | Python cycles/s (median, range) | Rust cycles/s (median, range) | Python / Rust |")
        print("| ---: | ---: | ---: | ---: |")
        for threads, py_runs, rust_runs in rows:
            py, rust = statistics.median(py_runs), statistics.median(rust_runs)
            print(f"| {threads} | {py:,.0f} ({min(py_runs):,.0f}-{max(py_runs):,.0f}) "
                  f"| {rust:,.0f} ({min(rust_runs):,.0f}-{max(rust_runs):,.0f}) | {py / rust:.2f} |")
    finally:
        masters.stop()


if __name__ == "__main__":
    main()

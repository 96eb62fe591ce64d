"""Client CPU per acquire+release cycle from Python (16 threads sharing one client, a resource
each: W2), with metrics off (no meter provider) and on (OpenTelemetry SDK, a periodic reader
exporting every second through the console exporter into /dev/null), in alternating phases of one run on the same
5 local masters. Process CPU (getrusage) per cycle: the masters are other processes.

    REDLOCK_MASTERS_BIN=target/debug/redlock-masters \\
        python/.venv/bin/python bench/python/metrics_overhead.py --seconds 3 --phases 5

Build the extension with --release first (`make bench-python` does; or maturin develop --release).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python" / "tests"))

from conftest import LocalMasters  # noqa: E402
from opentelemetry.sdk.metrics import MeterProvider  # noqa: E402
from opentelemetry.sdk.metrics.export import (  # noqa: E402
    ConsoleMetricExporter,
    PeriodicExportingMetricReader,
)

import redlock_rs  # noqa: E402
from w2 import run_w2  # noqa: E402

THREADS = 16


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--phases", type=int, default=5)
    args = parser.parse_args()
    masters = LocalMasters(5)
    sink = open(os.devnull, "w")
    try:
        exporter = ConsoleMetricExporter(out=sink)
        provider = MeterProvider(metric_readers=[PeriodicExportingMetricReader(exporter, export_interval_millis=1000)])
        clients = {
            "off": redlock_rs.Redlock(masters.urls),
            "on": redlock_rs.Redlock(masters.urls, meter_provider=provider),
        }
        per_cycle: dict[str, list[float]] = {"off": [], "on": []}
        for label, client in clients.items():
            run_w2(client, THREADS, 0.5, f"bench:metrics:{label}")  # warm-up
        for _ in range(args.phases):
            for label, client in clients.items():
                done = run_w2(client, THREADS, args.seconds, f"bench:metrics:{label}")
                per_cycle[label].append(done.cpu * 1e6 / max(done.cycles, 1))
        for label, values in per_cycle.items():
            print(
                f"telemetry {label}: {statistics.median(values):.1f} µs CPU per cycle "
                f"(median of {args.phases}, range {min(values):.1f}–{max(values):.1f})"
            )
        ratio = statistics.median(per_cycle["on"]) / statistics.median(per_cycle["off"])
        print(f"on / off: {ratio:.3f}×")
        provider.shutdown()
    finally:
        masters.stop()
        sink.close()


if __name__ == "__main__":
    main()

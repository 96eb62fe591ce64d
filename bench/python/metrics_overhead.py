"""Client CPU per acquire+release cycle from Python (16 threads sharing one client, a resource
each: W2) with metrics off (no meter provider), through ``redlock_rs.prometheus``'s collector
(histograms aggregated in Rust, scraped into the Prometheus text format every second), and
through OpenTelemetry's SDK (``meter_provider``: one ``record()`` per value, a periodic reader
exporting every second through the console exporter into /dev/null), in alternating phases
of one run on the same 5 local masters. Process CPU (getrusage) per cycle: the masters are
other processes.

    REDLOCK_MASTERS_BIN=target/debug/redlock-masters \\
        python/.venv/bin/python bench/python/metrics_overhead.py --seconds 3 --phases 5

Build the extension with --release first (`make bench-python` does; or maturin develop --release).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python" / "tests"))

from conftest import LocalMasters  # noqa: E402
from opentelemetry.sdk.metrics import MeterProvider  # noqa: E402
from opentelemetry.sdk.metrics.export import (  # noqa: E402
    ConsoleMetricExporter,
    PeriodicExportingMetricReader,
)
from prometheus_client import CollectorRegistry, generate_latest  # noqa: E402

import redlock_rs  # noqa: E402
from redlock_rs.prometheus import RedlockCollector  # noqa: E402
from w2 import run_w2  # noqa: E402

THREADS = 16
SCRAPE_INTERVAL = 1.0  # seconds between the collector's scrapes, as a Prometheus server's


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--phases", type=int, default=5)
    args = parser.parse_args()
    masters = LocalMasters(5)
    sink = open(os.devnull, "w")
    registry = CollectorRegistry()
    stop_scraping = threading.Event()

    def scrape() -> None:
        while not stop_scraping.wait(SCRAPE_INTERVAL):
            generate_latest(registry)

    scraper = threading.Thread(target=scrape)
    try:
        exporter = ConsoleMetricExporter(out=sink)
        provider = MeterProvider(metric_readers=[PeriodicExportingMetricReader(exporter, export_interval_millis=1000)])
        clients = {
            "off": redlock_rs.Redlock(masters.urls),
            "collector": redlock_rs.Redlock(masters.urls, collector=RedlockCollector(registry=registry)),
            "meter_provider": redlock_rs.Redlock(masters.urls, meter_provider=provider),
        }
        scraper.start()
        per_cycle: dict[str, list[float]] = {label: [] for label in clients}
        for label, client in clients.items():
            run_w2(client, THREADS, 0.5, f"bench:metrics:{label}")  # warm-up
        order = list(clients)
        for phase in range(args.phases):
            # Each round starts with another mode, so no mode always follows the same one.
            shift = phase % len(order)
            for label in order[shift:] + order[:shift]:
                done = run_w2(clients[label], THREADS, args.seconds, f"bench:metrics:{label}")
                per_cycle[label].append(done.cpu * 1e6 / max(done.cycles, 1))
        for label, values in per_cycle.items():
            print(
                f"metrics {label}: {statistics.median(values):.1f} µs CPU per cycle "
                f"(median of {args.phases}, range {min(values):.1f}–{max(values):.1f})"
            )
        off = per_cycle["off"]
        for label in ("collector", "meter_provider"):
            # Each round's phase against that round's off phase.
            ratios = [on / base for on, base in zip(per_cycle[label], off)]
            print(
                f"{label} / off: {statistics.median(per_cycle[label]) / statistics.median(off):.3f}× of the medians; "
                f"per phase pair median {statistics.median(ratios):.3f}×, range {min(ratios):.3f}–{max(ratios):.3f}×"
            )
        provider.shutdown()
    finally:
        stop_scraping.set()
        if scraper.is_alive():
            scraper.join()
        masters.stop()
        sink.close()


if __name__ == "__main__":
    main()

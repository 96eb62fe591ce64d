"""CPU the OpenTelemetry SDK takes for the durations one W2 cycle records (concurrent fan-out,
5 masters: the acquire, the release, 3 answered SETs and 5 EVALSHAs), recorded as redlock_rs
records them (the same instruments, attribute sets and empty context), from one thread: what
the metrics cost per cycle at the least, whatever the binding does around them.

    python/.venv/bin/python bench/python/metrics_sdk_cost.py
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from typing import Callable

from opentelemetry.context import Context
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import ConsoleMetricExporter, PeriodicExportingMetricReader

from redlock_rs._metrics import _BOUNDARIES


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=20000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with open(os.devnull, "w") as sink:
        reader = PeriodicExportingMetricReader(ConsoleMetricExporter(out=sink), export_interval_millis=1000)
        provider = MeterProvider(metric_readers=[reader])
        meter = provider.get_meter("redlock_rs")

        def histogram(name: str) -> Callable[..., None]:
            return meter.create_histogram(name, unit="s", explicit_bucket_boundaries_advisory=_BOUNDARIES).record

        acquire = histogram("redlock.acquire.duration")
        release = histogram("redlock.release.duration")
        request = histogram("db.client.operation.duration")
        context = Context()
        requests = [
            {"db.system.name": "redis", "db.operation.name": op, "server.address": "127.0.0.1", "server.port": 7000 + i}
            for op in ("SET", "EVALSHA")
            for i in range(5)
        ]
        outcome = {"redlock.outcome": "acquired", "redlock.fanout": "concurrent"}
        per_cycle = []
        for _ in range(args.runs):
            start = time.process_time()
            for _ in range(args.cycles):
                for attributes in requests[:3] + requests[5:]:
                    request(0.0002, attributes, context)
                acquire(0.0007, outcome, context)
                release(0.0004, {}, context)
            per_cycle.append((time.process_time() - start) * 1e6 / args.cycles)
        print(
            f"SDK record() calls of one W2 cycle (10): {statistics.median(per_cycle):.1f} µs CPU "
            f"(median of {args.runs}, range {min(per_cycle):.1f}–{max(per_cycle):.1f})"
        )
        provider.shutdown()


if __name__ == "__main__":
    main()

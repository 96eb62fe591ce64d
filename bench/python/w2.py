"""W2 from Python, shared by the benchmarks here: threads sharing one client, each acquiring
and releasing a resource of its own in a loop for a fixed time."""

from __future__ import annotations

import resource
import threading
import time
from dataclasses import dataclass
from typing import Any


@dataclass
class Phase:
    """What one W2 phase did: cycles, and the wall and process CPU seconds it took."""

    cycles: int
    wall: float
    cpu: float


def process_cpu() -> float:
    """CPU seconds of this process (every thread; the masters are other processes)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run_w2(client: Any, threads: int, seconds: float, prefix: str) -> Phase:
    """`threads` threads on `client` for `seconds`, thread i on resource `{prefix}:{i}`; the
    clocks start when every thread is ready."""
    counts = [0] * threads
    start = threading.Barrier(threads + 1)

    def worker(index: int) -> None:
        name = f"{prefix}:{index}"
        start.wait()
        deadline = time.monotonic() + seconds
        done = 0
        while time.monotonic() < deadline:
            client.acquire(name, 10.0).release()
            done += 1
        counts[index] = done

    pool = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
    for thread in pool:
        thread.start()
    cpu_before = process_cpu()
    start.wait()
    began = time.monotonic()
    for thread in pool:
        thread.join()
    return Phase(sum(counts), time.monotonic() - began, process_cpu() - cpu_before)

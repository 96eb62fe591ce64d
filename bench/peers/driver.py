"""`make bench-peers` driver for Python: this project's redlock_rs and the peers aioredlock
and pottery, with the same command line, workloads and JSON result line as the Rust drivers
(bench/peers/workload/src/lib.rs):

- W1: one task, --cycles serial acquire + release cycles on one key;
- W2: --tasks tasks sharing one client, --cycles cycles each on a key of its own;
- W3: --tasks tasks on one key for --seconds; every acquire retries up to 100 times with a
  delay drawn from [10, 20] ms (the library's own retry where it can say exactly that,
  otherwise this driver's loop around one attempt).

Drivers (--driver): python-threads (redlock_rs.Redlock, one thread per task), python-asyncio
(redlock_rs.AsyncRedlock, one asyncio task per task), aioredlock (asyncio), pottery (threads).
A library that cannot be imported is reported as skipped, with the reason.
CPU: getrusage(RUSAGE_SELF) over the measured window only (start-up and imports left out).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import json
import random
import resource
import sys
import threading
import time
from typing import Any, Awaitable, Callable

W3_RETRIES = 100
W3_DELAY = (0.010, 0.020)


class Samples:
    def __init__(self) -> None:
        self.acquire_ns: list[int] = []
        self.release_ns: list[int] = []
        self.acquire_failed = 0
        self.release_failed = 0
        self.errors: list[str] = []

    def error(self, exc: BaseException) -> None:
        message = f"{type(exc).__name__}: {exc}"
        if len(self.errors) < 5 and message not in self.errors:
            self.errors.append(message)

    def merge(self, other: Samples) -> None:
        self.acquire_ns += other.acquire_ns
        self.release_ns += other.release_ns
        self.acquire_failed += other.acquire_failed
        self.release_failed += other.release_failed
        for message in other.errors:
            if len(self.errors) < 5 and message not in self.errors:
                self.errors.append(message)


def key(workload: str, task: int) -> str:
    return f"peers:w2:{task}" if workload == "w2" else f"peers:{workload}"


def cpu() -> tuple[float, float]:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime, usage.ru_stime


def emit(args: argparse.Namespace, library: str, **fields: Any) -> None:
    print(json.dumps({"driver": args.driver, "library": library, "workload": args.workload, **fields}))


def report(args: argparse.Namespace, library: str, tasks: int, wall: float,
           cpu_before: tuple[float, float], s: Samples) -> None:
    user, sys_ = cpu()
    emit(args, library, tasks=tasks, ok=len(s.acquire_ns), acquire_failed=s.acquire_failed,
         release_failed=s.release_failed, errors=s.errors, wall_s=wall,
         cpu_user_s=user - cpu_before[0], cpu_sys_s=sys_ - cpu_before[1],
         acquire_ns=s.acquire_ns, release_ns=s.release_ns)


def more(args: argparse.Namespace, done: int, deadline: float) -> bool:
    return time.monotonic() < deadline if args.workload == "w3" else done < args.cycles


# --- threads -------------------------------------------------------------------------------

def run_threads(args: argparse.Namespace, library: str, tasks: int,
                acquire: Callable[[int, str], Any], release: Callable[[Any], None]) -> None:
    guard = acquire(0, "peers:warm-up")
    release(guard)
    results = [Samples() for _ in range(tasks)]
    barrier = threading.Barrier(tasks + 1)
    deadline = [0.0]

    def worker(task: int) -> None:
        s, name = results[task], key(args.workload, task)
        barrier.wait()
        done = 0
        while more(args, done, deadline[0]):
            done += 1
            began = time.perf_counter_ns()
            try:
                guard = acquire(task, name)
            except Exception as exc:  # every library error counts as a failed acquire
                s.acquire_failed += 1
                s.error(exc)
                continue
            acquired = time.perf_counter_ns()
            s.acquire_ns.append(acquired - began)
            try:
                release(guard)
            except Exception as exc:
                s.release_failed += 1
                s.error(exc)
            s.release_ns.append(time.perf_counter_ns() - acquired)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(tasks)]
    for thread in threads:
        thread.start()
    cpu_before = cpu()
    start = time.monotonic()
    deadline[0] = start + args.seconds
    barrier.wait()
    for thread in threads:
        thread.join()
    wall = time.monotonic() - start
    total = Samples()
    for s in results:
        total.merge(s)
    report(args, library, tasks, wall, cpu_before, total)


def retry_blocking(attempt: Callable[[], Any]) -> Any:
    for _ in range(W3_RETRIES):
        try:
            return attempt()
        except Exception:
            time.sleep(random.uniform(*W3_DELAY))
    return attempt()


# --- asyncio -------------------------------------------------------------------------------

async def run_asyncio(args: argparse.Namespace, library: str, tasks: int,
                      acquire: Callable[[str], Awaitable[Any]],
                      release: Callable[[Any], Awaitable[None]]) -> None:
    await release(await acquire("peers:warm-up"))
    start = 0.0

    async def worker(task: int) -> Samples:
        s, name = Samples(), key(args.workload, task)
        deadline = start + args.seconds
        done = 0
        while more(args, done, deadline):
            done += 1
            began = time.perf_counter_ns()
            try:
                guard = await acquire(name)
            except Exception as exc:
                s.acquire_failed += 1
                s.error(exc)
                continue
            acquired = time.perf_counter_ns()
            s.acquire_ns.append(acquired - began)
            try:
                await release(guard)
            except Exception as exc:
                s.release_failed += 1
                s.error(exc)
            s.release_ns.append(time.perf_counter_ns() - acquired)
        return s

    cpu_before = cpu()
    start = time.monotonic()
    results = await asyncio.gather(*(worker(t) for t in range(tasks)))
    wall = time.monotonic() - start
    total = Samples()
    for s in results:
        total.merge(s)
    report(args, library, tasks, wall, cpu_before, total)


# --- the libraries -------------------------------------------------------------------------

def python_threads(args: argparse.Namespace, tasks: int) -> None:
    import redlock_rs

    retry = {"retry_count": W3_RETRIES, "retry_delay": W3_DELAY[1]} if args.workload == "w3" else {}
    client = redlock_rs.Redlock(args.masters, **retry)  # type: ignore[arg-type]
    run_threads(args, f"redlock_rs {redlock_rs.__version__}", tasks,
                lambda _task, name: client.acquire(name, args.ttl), lambda lock: lock.release())


def python_asyncio(args: argparse.Namespace, tasks: int) -> None:
    import redlock_rs

    async def main() -> None:
        retry = {"retry_count": W3_RETRIES, "retry_delay": W3_DELAY[1]} if args.workload == "w3" else {}
        client = redlock_rs.AsyncRedlock(args.masters, **retry)  # type: ignore[arg-type]

        async def release(lock: Any) -> None:
            await lock.release()

        await run_asyncio(args, f"redlock_rs {redlock_rs.__version__}", tasks,
                          lambda name: client.acquire(name, args.ttl), release)

    asyncio.run(main())


def aioredlock(args: argparse.Namespace, tasks: int) -> None:
    from aioredlock import Aioredlock

    async def main() -> None:
        # retry_count counts attempts; the delay is drawn from [min, max].
        retry = ({"retry_count": W3_RETRIES + 1, "retry_delay_min": W3_DELAY[0],
                  "retry_delay_max": W3_DELAY[1]} if args.workload == "w3" else {})
        manager = Aioredlock(redis_connections=list(args.masters), **retry)
        try:
            async def acquire(name: str) -> Any:
                return await manager.lock(name, lock_timeout=args.ttl)

            await run_asyncio(args, f"aioredlock {importlib.metadata.version('aioredlock')}",
                              tasks, acquire, manager.unlock)
        finally:
            await manager.destroy()

    asyncio.run(main())


def pottery(args: argparse.Namespace, tasks: int) -> None:
    import redis
    from pottery import Redlock

    masters = frozenset(redis.Redis.from_url(url) for url in args.masters)
    # One Redlock object per task (it holds the held lock's token), all on the same masters.
    locks: dict[tuple[int, str], Any] = {}

    def acquire(task: int, name: str) -> Any:
        lock = locks.get((task, name))
        if lock is None:
            lock = locks[(task, name)] = Redlock(key=name, masters=masters, auto_release_time=args.ttl)

        def attempt() -> Any:
            if not lock.acquire(blocking=False):
                raise RuntimeError("not acquired")
            return lock

        return retry_blocking(attempt) if args.workload == "w3" else attempt()

    run_threads(args, f"pottery {importlib.metadata.version('pottery')}", tasks, acquire,
                lambda lock: lock.release())


DRIVERS = {
    "python-threads": python_threads,
    "python-asyncio": python_asyncio,
    "aioredlock": aioredlock,
    "pottery": pottery,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--driver", required=True, choices=sorted(DRIVERS))
    parser.add_argument("--library", default="")
    parser.add_argument("--workload", required=True, choices=["w1", "w2", "w3"])
    parser.add_argument("--masters", required=True, type=lambda s: s.split(","))
    parser.add_argument("--cycles", type=int, default=2000)
    parser.add_argument("--tasks", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--ttl", type=float, default=10.0)
    args = parser.parse_args()
    tasks = 1 if args.workload == "w1" else max(1, args.tasks)
    try:
        DRIVERS[args.driver](args, tasks)
    except ImportError as exc:
        emit(args, "", skipped=f"cannot import: {exc}")
    except Exception as exc:
        emit(args, "", failed=f"{type(exc).__name__}: {exc}")
        sys.exit(2)


if __name__ == "__main__":
    main()

"""One client shared by many threads: the GIL is released during I/O, and the lock excludes."""

from __future__ import annotations

import threading
import time

import pytest
from conftest import FanOutName, LocalMasters, wait_until

from redlock_rs import Lock, NotAcquired, Redlock


def test_other_threads_run_while_one_is_blocked_in_acquire(masters: LocalMasters, resource: str) -> None:
    redlock = Redlock(masters.urls, retry_delay=0.02)
    holder = masters.occupy(resource)
    started = threading.Event()
    outcome: list[object] = []

    def blocked() -> None:
        started.set()
        try:
            outcome.append(redlock.acquire(resource, timeout=20.0))
        except BaseException as err:
            outcome.append(err)

    thread = threading.Thread(target=blocked)
    thread.start()
    assert started.wait(5.0)
    sets_before = masters.calls(0, "set")
    wait_until(lambda: masters.calls(0, "set") >= sets_before + 2, 10.0, "the blocked thread's retries")
    # This thread runs Python code while the other is inside acquire. Had acquire kept the GIL,
    # nothing here would run until it gave up after 20 s, long after the holder's release.
    work = sum(i * i for i in range(200_000))
    assert work > 0
    assert thread.is_alive() and outcome == []
    masters.vacate(resource, holder)
    thread.join(20.0)
    assert isinstance(outcome[0], Lock), outcome
    outcome[0].release()


@pytest.mark.parametrize("threads", [16])
def test_sixteen_threads_on_one_resource_never_hold_it_together(
    masters: LocalMasters, fanout: FanOutName, resource: str, threads: int
) -> None:
    redlock = Redlock(masters.urls, fanout=fanout, retry_delay=0.005)
    rounds = 6
    windows: list[tuple[float, float]] = []
    failures: list[BaseException] = []
    record = threading.Lock()
    inside = [0]  # holders inside the critical section right now
    most_inside = [0]

    def worker() -> None:
        try:
            for _ in range(rounds):
                lock = redlock.acquire(resource, ttl=2.0, timeout=30.0)
                entered = time.monotonic()
                with record:
                    inside[0] += 1
                    most_inside[0] = max(most_inside[0], inside[0])
                time.sleep(0.001)  # the holder's work: gives an intruder time to show up
                with record:
                    inside[0] -= 1
                left = time.monotonic()
                still_valid = lock.is_valid()
                lock.release()
                assert still_valid, "validity ran out inside a tiny critical section"
                with record:
                    windows.append((entered, left))
        except BaseException as err:
            failures.append(err)

    pool = [threading.Thread(target=worker) for _ in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join(60.0)
    assert not any(thread.is_alive() for thread in pool)
    assert failures == []
    assert len(windows) == threads * rounds
    assert most_inside[0] == 1
    windows.sort()
    overlaps = [(a, b) for a, b in zip(windows, windows[1:]) if b[0] < a[1]]
    assert overlaps == [], f"{len(overlaps)} overlapping holders"
    masters.wait_cleared(resource)


def test_sixteen_threads_on_distinct_resources_all_succeed(masters: LocalMasters, fanout: FanOutName) -> None:
    redlock = Redlock(masters.urls, fanout=fanout)
    errors: list[BaseException] = []
    cycles = [0] * 16

    def worker(index: int) -> None:
        try:
            for _ in range(25):
                # A short ttl and a timeout: if a release ever fails to reach a master, the
                # leftover key expires and the next acquire still succeeds.
                with redlock.acquire(f"distinct:{index}", ttl=1.0, timeout=10.0) as lock:
                    assert lock.vote.won
                cycles[index] += 1
        except BaseException as err:
            errors.append(err)

    pool = [threading.Thread(target=worker, args=(i,)) for i in range(16)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join(60.0)
    assert errors == [] and cycles == [25] * 16


def test_contenders_that_lose_get_not_acquired_not_a_crash(masters: LocalMasters, resource: str) -> None:
    redlock = Redlock(masters.urls)
    results: list[str] = []
    won: list[Lock] = []
    barrier = threading.Barrier(8)

    def contender() -> None:
        barrier.wait(10.0)
        try:
            won.append(redlock.try_acquire(resource, ttl=30.0))
            results.append("won")
        except NotAcquired:
            results.append("lost")

    pool = [threading.Thread(target=contender) for _ in range(8)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join(30.0)
    assert len(results) == 8 and results.count("won") <= 1
    for lock in won:
        lock.release()

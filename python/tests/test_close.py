"""close() ends what is running: acquires in flight stop promptly with "client closed", their
attempt undone on every master; locks already won are still released as before."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from conftest import LocalMasters, wait_until

from redlock_rs import AsyncRedlock, Redlock, RedlockError

# The retry budget of the acquires that close() must cut short. An acquire that ran it out
# would fail these tests by far: the bound below is a fraction of it, and generous against a
# busy machine (close() takes effect within about one per-master timeout).
BUDGET = 60.0
PROMPT = 15.0


def test_threads_blocked_in_acquire_return_promptly_after_close(masters: LocalMasters, resource: str) -> None:
    holder = Redlock(masters.urls)
    held = holder.acquire(resource, ttl=BUDGET)
    redlock = Redlock(masters.urls)
    outcomes: list[BaseException] = []
    returned_at: list[float] = []
    started = threading.Barrier(5)

    entered: list[int] = []

    def contend() -> None:
        started.wait()
        entered.append(1)
        try:
            redlock.acquire(resource, ttl=10.0, timeout=BUDGET)
        except BaseException as err:  # noqa: BLE001 - the test inspects what each thread got
            outcomes.append(err)
        returned_at.append(time.monotonic())

    threads = [threading.Thread(target=contend) for _ in range(4)]
    for thread in threads:
        thread.start()
    started.wait()
    # The contenders are retrying once their attempts reach the masters (after the holder's):
    # two rounds of them take at least a retry delay, long after every thread entered acquire.
    wait_until(lambda: len(entered) == 4 and masters.calls(0, "set") >= 1 + 8, 10.0, "the contenders' attempts")
    closed_at = time.monotonic()
    redlock.close()
    for thread in threads:
        thread.join(PROMPT)
    assert not any(thread.is_alive() for thread in threads), "an acquire kept running after close()"
    assert max(returned_at) - closed_at < PROMPT
    assert len(outcomes) == 4
    for err in outcomes:
        assert isinstance(err, RedlockError), repr(err)
        assert "client closed" in str(err) and resource in str(err), str(err)
    # Nothing the contenders set is left: only the holder's token is there.
    assert masters.holders_of(resource, held.token) == 5
    held.release()
    masters.wait_cleared(resource)


def test_an_acquire_against_silent_masters_stops_after_close(fresh_masters: LocalMasters, resource: str) -> None:
    redlock = Redlock(fresh_masters.urls, instance_timeout=0.2, retry_count=1000, retry_delay=0.05)
    redlock.wait_connected(10.0)
    for index in (0, 1, 2):
        fresh_masters.pause(index)
    outcome: list[BaseException] = []

    def acquire() -> None:
        try:
            redlock.acquire(resource, ttl=10.0)
        except BaseException as err:  # noqa: BLE001
            outcome.append(err)

    thread = threading.Thread(target=acquire)
    thread.start()
    try:
        # Several attempts have failed on the silent masters: the acquire is retrying.
        wait_until(lambda: fresh_masters.calls(3, "set") >= 3, 10.0, "three attempts")
        redlock.close()
        thread.join(PROMPT)
        assert not thread.is_alive(), "the acquire kept retrying after close()"
    finally:
        redlock.close()
        for index in (0, 1, 2):
            fresh_masters.resume(index)
        thread.join()
    assert len(outcome) == 1 and "client closed" in str(outcome[0]), outcome


def test_locks_won_before_close_are_still_released(masters: LocalMasters, resource: str) -> None:
    redlock = Redlock(masters.urls)
    lock = redlock.acquire(resource)
    redlock.close()
    with pytest.raises(RedlockError, match="closed"):
        redlock.acquire(resource + ":new")
    assert lock.release() == 5
    assert masters.values(resource) == [None] * 5


def test_asyncio_tasks_in_acquire_end_promptly_after_close(masters: LocalMasters, resource: str) -> None:
    holder = Redlock(masters.urls)
    held = holder.acquire(resource, ttl=BUDGET)

    async def main() -> list[BaseException | None]:
        redlock = AsyncRedlock(masters.urls)
        tasks = [asyncio.create_task(redlock.acquire(resource, ttl=10.0, timeout=BUDGET)) for _ in range(50)]
        # The tasks are retrying once their attempts reach the masters (after the holder's).
        deadline = time.monotonic() + 10
        while masters.calls(0, "set") < 1 + 10 and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        redlock.close()
        done, pending = await asyncio.wait(tasks, timeout=PROMPT)
        assert not pending, f"{len(pending)} acquires kept running after close()"
        return [task.exception() for task in done]

    outcomes = asyncio.run(main())
    assert len(outcomes) == 50
    for err in outcomes:
        assert isinstance(err, RedlockError) and "client closed" in str(err), repr(err)
    assert masters.holders_of(resource, held.token) == 5
    held.release()

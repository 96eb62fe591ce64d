"""A lock is released whatever ends its scope: a cancelled `async with` or `release()`, a
cancelled task holding a lock, a frame that raises past a lock, a temporary that raises. Each
case leaves no key on any master. The TTL is long (30 s) so that expiry cannot hide a stranded
lock; the wait for the releases is `await client.close()` (it waits for the client's releases in
the background), then a bounded poll of the masters (a master that timed out may apply a DEL
just after the client gave up on it, and an acquire's attempt undone on cancel is not counted
by close())."""

from __future__ import annotations

import asyncio
import gc
import random
import time
from collections.abc import Sequence
from typing import Any

import pytest
from conftest import LocalMasters
from redlock_rs import AsyncLock, AsyncRedlock, Redlock

TTL = 30.0  # far longer than any wait below: a key still there is a stranded lock
SETTLE = 15.0  # bound of the poll for keys == 0 (a busy machine; far below TTL)
RUNS = 20
TASKS = 300
CANCEL_WITHIN = 0.4  # seconds: when the cancels land
FRAMES = 640


def keys_left(masters: LocalMasters) -> list[int]:
    """DBSIZE of every master (the `masters` fixture empties them for each test)."""
    sizes = [masters.command(index, "DBSIZE") for index in range(len(masters.ports))]
    return [size if isinstance(size, int) else -1 for size in sizes]


def assert_no_key_left(masters: LocalMasters, what: str) -> None:
    """Polls (bounded by SETTLE, far below the TTL) until no master has a key."""
    deadline = time.monotonic() + SETTLE
    while any(keys_left(masters)):
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: keys left on the masters {keys_left(masters)} after {SETTLE}s")
        time.sleep(0.01)


def cancel_at_random(tasks: Sequence[asyncio.Task[Any]], rng: random.Random, within: float) -> None:
    loop = asyncio.get_running_loop()
    for task in tasks:
        loop.call_later(rng.uniform(0.0, within), task.cancel)


async def test_cancelled_async_with_blocks_leave_no_lock(masters: LocalMasters) -> None:
    rng = random.Random(50)
    for run in range(RUNS):
        client = AsyncRedlock(masters.urls)
        assert await client.wait_connected(10.0) == 5

        async def hold_in_turns(index: int) -> None:
            # Short holds, one after another: the cancels land in acquires, in bodies and in
            # the releases of `__aexit__`.
            while True:
                async with client.lock(f"scope:with:{run}:{index}", ttl=TTL):
                    await asyncio.sleep(0)

        tasks = [asyncio.create_task(hold_in_turns(index)) for index in range(TASKS)]
        cancel_at_random(tasks, rng, CANCEL_WITHIN)
        outcomes = await asyncio.gather(*tasks, return_exceptions=True)
        assert all(isinstance(outcome, asyncio.CancelledError) for outcome in outcomes), outcomes[:3]
        await client.close()
        assert_no_key_left(masters, f"run {run}")


async def test_a_cancelled_release_completes(masters: LocalMasters) -> None:
    client = AsyncRedlock(masters.urls)
    locks = [await client.acquire(f"scope:release:{index}", ttl=TTL) for index in range(TASKS)]
    # Cancelled before they start, as they begin, and while they wait for the masters.
    releases = [asyncio.create_task(lock.release()) for lock in locks]
    cancel_at_random(releases, random.Random(3), 0.005)
    await asyncio.gather(*releases, return_exceptions=True)
    await client.close()
    assert_no_key_left(masters, "cancelled releases")  # the locks are still referenced here
    assert all(lock.remaining() == 0.0 for lock in locks)


async def test_a_release_cancelled_while_it_runs_completes_before_the_cancel_goes_on(
    masters: LocalMasters,
) -> None:
    client = AsyncRedlock(masters.urls)
    lock = await client.acquire("scope:release:one", ttl=TTL)
    release = asyncio.create_task(lock.release())
    await asyncio.sleep(0)  # one loop iteration: the release has begun
    release.cancel()
    with pytest.raises(asyncio.CancelledError):
        await release
    assert release.cancelled()
    await client.close()
    assert_no_key_left(masters, "a release cancelled while running")


async def test_cancelled_tasks_holding_a_lock_leave_no_lock(masters: LocalMasters) -> None:
    client = AsyncRedlock(masters.urls)
    held = 0
    all_held = asyncio.Event()

    async def hold(index: int) -> None:
        nonlocal held
        lock: AsyncLock = await client.acquire(f"scope:held:{index}", ttl=TTL)
        assert lock.is_valid()
        held += 1
        if held == TASKS:
            all_held.set()
        await asyncio.sleep(3600)  # until cancelled; the lock is never released by hand

    tasks = [asyncio.create_task(hold(index)) for index in range(TASKS)]
    await all_held.wait()
    with pytest.warns(ResourceWarning, match="garbage-collected while held") as warned:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        del tasks, task  # the tasks' exceptions hold the frames that hold the locks
        # The loop's callbacks of this iteration still hold some tasks: let them run (a
        # bounded count of iterations) until every lock was dropped.
        for _ in range(1000):
            gc.collect()
            if len(warned) >= TASKS:
                break
            await asyncio.sleep(0)
    assert len([w for w in warned if issubclass(w.category, ResourceWarning)]) == TASKS
    await client.close()
    assert_no_key_left(masters, "cancelled holders")


def acquire_then_raise(client: Redlock, resource: str) -> None:
    lock = client.acquire(resource, ttl=TTL)
    assert lock.is_valid()
    raise LookupError(resource)  # the frame, and the lock in it, go with the exception


def test_locks_in_raising_frames_leave_no_lock(masters: LocalMasters) -> None:
    client = Redlock(masters.urls)
    with pytest.warns(ResourceWarning, match=r"garbage-collected while held \(.*\): it was released at once") as warned:
        for index in range(FRAMES):
            with pytest.raises(LookupError):
                acquire_then_raise(client, f"scope:frame:{index}")
        gc.collect()
    assert len([w for w in warned if issubclass(w.category, ResourceWarning)]) == FRAMES
    assert_no_key_left(masters, "raising frames")


def test_a_raising_temporary_lock_leaves_no_lock(masters: LocalMasters) -> None:
    client = Redlock(masters.urls)
    # The AttributeError holds the lock (its `obj`) until the error is dropped after `except`.
    with pytest.warns(ResourceWarning, match="it was released at once") as warned:
        for index in range(FRAMES):
            with pytest.raises(AttributeError):
                client.acquire(f"scope:temporary:{index}", ttl=TTL).x  # type: ignore[attr-defined]
        gc.collect()
    assert len([w for w in warned if issubclass(w.category, ResourceWarning)]) == FRAMES
    assert_no_key_left(masters, "raising temporaries")


async def test_a_closed_client_still_releases_its_dropped_locks(masters: LocalMasters) -> None:
    client = AsyncRedlock(masters.urls)
    lock = await client.acquire("scope:closed", ttl=TTL)
    closing = client.close()  # closed now; awaited below, after the lock is dropped
    with pytest.warns(ResourceWarning):
        del lock
        gc.collect()
    await closing
    assert_no_key_left(masters, "a lock dropped after close()")

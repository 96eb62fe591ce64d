"""The asyncio API behaves like asyncio: methods return coroutines that nothing runs until they
are awaited or scheduled, that create_task / TaskGroup / wait_for take, and whose cancellation
leaves no key behind."""

from __future__ import annotations

import asyncio
import collections.abc
import gc
import sys
import time
import warnings

import pytest
from conftest import LocalMasters, wait_until

from redlock_rs import AsyncLock, AsyncRedlock, NotAcquired, RedlockError


@pytest.fixture
def redlock(masters: LocalMasters) -> AsyncRedlock:
    return AsyncRedlock(masters.urls, retry_delay=0.02)


async def test_create_task_runs_an_acquire(redlock: AsyncRedlock, masters: LocalMasters, resource: str) -> None:
    task = asyncio.create_task(redlock.acquire(resource, ttl=5.0))
    lock = await task
    assert isinstance(lock, AsyncLock) and masters.holders_of(resource, lock.token) >= 3
    assert await asyncio.create_task(lock.release()) >= 3
    assert masters.values(resource) == [None] * 5


@pytest.mark.skipif(sys.version_info < (3, 11), reason="asyncio.TaskGroup is new in Python 3.11")
async def test_a_task_group_runs_acquires_and_releases(redlock: AsyncRedlock, masters: LocalMasters) -> None:
    async with asyncio.TaskGroup() as group:  # type: ignore[attr-defined,unused-ignore]
        tasks = [group.create_task(redlock.acquire(f"group:{n}", ttl=5.0)) for n in range(4)]
    locks = [task.result() for task in tasks]
    async with asyncio.TaskGroup() as group:  # type: ignore[attr-defined,unused-ignore]
        for lock in locks:
            group.create_task(lock.release())
    for n in range(4):
        assert masters.values(f"group:{n}") == [None] * 5


async def test_methods_return_coroutines(redlock: AsyncRedlock, resource: str) -> None:
    coroutine = redlock.acquire(resource)
    assert asyncio.iscoroutine(coroutine)
    assert isinstance(coroutine, collections.abc.Coroutine)
    assert coroutine.__qualname__ == "AsyncRedlock.acquire"  # type: ignore[attr-defined]
    coroutine.close()  # never started: no warning, no I/O


async def test_an_acquire_never_awaited_takes_no_lock_and_warns(
    redlock: AsyncRedlock, masters: LocalMasters, resource: str
) -> None:
    await redlock.wait_connected(5.0)
    with pytest.warns(RuntimeWarning, match="AsyncRedlock.acquire' was never awaited"):
        redlock.acquire(resource, ttl=30.0)  # type: ignore[unused-coroutine]
        gc.collect()
    # Requests to one master keep their order: once a later lock of the same client is on
    # every master, a SET of the unawaited acquire (had it been sent) would have run first.
    later = await redlock.acquire(f"{resource}:later", ttl=30.0)
    await asyncio.to_thread(
        wait_until, lambda: masters.holders_of(f"{resource}:later", later.token) == 5, 5.0, "the later lock"
    )
    assert masters.values(resource) == [None] * 5
    await later.release()


async def test_a_release_never_awaited_releases_nothing(
    redlock: AsyncRedlock, masters: LocalMasters, resource: str
) -> None:
    lock = await redlock.acquire(resource, ttl=30.0)
    with pytest.warns(RuntimeWarning, match="never awaited"):
        lock.release()  # type: ignore[unused-coroutine]
        gc.collect()
    assert lock.is_valid() and masters.holders_of(resource, lock.token) >= 3
    assert await lock.release() >= 3


async def test_wait_for_cancels_and_the_attempt_is_undone(masters: LocalMasters, resource: str) -> None:
    redlock = AsyncRedlock(masters.urls, retry_delay=0.01)
    for index in (0, 1, 2):  # someone holds 3 of 5: our attempts split and retry
        masters.command(index, "SET", resource, "someone-else", "PX", 30_000)
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(redlock.acquire(resource, ttl=30.0, timeout=30.0), 0.3)
    await asyncio.to_thread(
        wait_until, lambda: masters.values(resource)[3:] == [None, None], 5.0, "the cancelled attempt's cleanup"
    )


async def test_a_cancel_after_the_lock_was_won_releases_it(fresh_masters: LocalMasters, resource: str) -> None:
    masters = fresh_masters
    # A quorum of all 5 with two masters paused: the acquire cannot be decided (so the task
    # cannot finish) before the loop is blocked below, however fast the other masters answer.
    redlock = AsyncRedlock(masters.urls, quorum=5, instance_timeout=10.0)
    await redlock.wait_connected(5.0)
    masters.pause(3)
    masters.pause(4)
    task = asyncio.create_task(redlock.acquire(resource, ttl=30.0))
    # The acquire starts (it is sent once the loop ends the iteration that began it) and
    # reaches the masters that answer.
    await asyncio.to_thread(
        wait_until,
        lambda: all(masters.command(index, "GET", resource) is not None for index in (0, 1, 2)),
        5.0,
        "the lock on masters 0-2",
    )
    assert not task.done()
    # Block the event loop (the task cannot resume), let the paused masters answer, and wait
    # until every master holds the lock: the result is won, ready or about to be, and never
    # seen by anyone.
    masters.resume(3)
    masters.resume(4)
    wait_until(lambda: None not in masters.values(resource), 5.0, "the lock on every master")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.to_thread(wait_until, lambda: masters.values(resource) == [None] * 5, 5.0, "the release")


async def test_an_acquire_closed_in_the_step_it_began_sends_nothing(fresh_masters: LocalMasters, resource: str) -> None:
    masters = fresh_masters
    redlock = AsyncRedlock(masters.urls)
    await redlock.wait_connected(5.0)
    sets_before = [masters.calls(index, "set") for index in range(5)]
    # Operations begun in one iteration of the loop start together when it ends, however long
    # the rest of the iteration takes (here 50 ms): nothing is sent before, and one abandoned
    # before then never reaches a master.
    coroutine = redlock.acquire(resource, ttl=30.0)
    coroutine.send(None)
    time.sleep(0.05)
    assert [masters.calls(index, "set") for index in range(5)] == sets_before
    coroutine.close()
    # Requests to one master keep their order: once a later acquire is on every master, a
    # SET of the abandoned one would have run first.
    later = await redlock.acquire(f"{resource}:later", ttl=30.0)
    await asyncio.to_thread(
        wait_until, lambda: masters.holders_of(f"{resource}:later", later.token) == 5, 5.0, "the later lock"
    )
    assert [masters.calls(index, "set") for index in range(5)] == [before + 1 for before in sets_before]
    assert masters.values(resource) == [None] * 5
    assert await later.release() == 5


async def test_a_coroutine_runs_once(redlock: AsyncRedlock, resource: str) -> None:
    coroutine = redlock.acquire(resource)
    lock = await coroutine
    with pytest.raises(RuntimeError, match="cannot reuse already awaited coroutine"):
        await coroutine
    await lock.release()


async def test_throw_into_an_unstarted_coroutine_raises_and_does_nothing(
    redlock: AsyncRedlock, masters: LocalMasters, resource: str
) -> None:
    coroutine = redlock.acquire(resource)
    with pytest.raises(KeyError):
        coroutine.throw(KeyError("stop"))
    with pytest.raises(RuntimeError, match="cannot reuse"):
        coroutine.send(None)
    assert masters.values(resource) == [None] * 5


async def test_argument_errors_raise_at_the_call(redlock: AsyncRedlock, resource: str) -> None:
    # Like a wrong call signature: no coroutine is made, so none is left unawaited.
    with pytest.raises(ValueError, match="timeout"):
        redlock.acquire(resource, timeout=10**400)  # type: ignore[unused-coroutine]
    with pytest.raises(TypeError, match="ttl"):
        redlock.try_acquire(resource, ttl="10")  # type: ignore[arg-type,unused-coroutine]


async def test_async_with_closes_the_client(masters: LocalMasters, resource: str) -> None:
    async with AsyncRedlock(masters.urls) as redlock:
        assert not redlock.closed
        lock = await redlock.acquire(resource)
    assert redlock.closed and "closed" in repr(redlock)
    with pytest.raises(RedlockError, match="closed"):
        await redlock.acquire(resource)
    # Locks of a closed client can still be released.
    assert await lock.release() >= 3
    assert masters.values(resource) == [None] * 5


async def test_wait_connected_and_connected_masters(fresh_masters: LocalMasters) -> None:
    fresh_masters.kill(4)
    redlock = AsyncRedlock(fresh_masters.urls)
    assert await redlock.wait_connected(10.0) == 4
    assert redlock.connected_masters() == 4


async def test_contention_inside_a_task_is_not_acquired(redlock: AsyncRedlock, resource: str) -> None:
    holder = await redlock.acquire(resource)
    with pytest.raises(NotAcquired):
        await asyncio.create_task(redlock.try_acquire(resource))
    await holder.release()


async def test_an_async_lock_garbage_collected_while_held_is_released_and_warns(
    redlock: AsyncRedlock, masters: LocalMasters, resource: str
) -> None:
    lock = await redlock.acquire(resource, ttl=30.0)
    with pytest.warns(ResourceWarning, match=r"garbage-collected while held \(.*\): it is released in the background"):
        del lock
        gc.collect()
    masters.wait_cleared(resource)  # released, not left to its 30 s TTL


async def test_a_released_async_lock_is_collected_quietly(redlock: AsyncRedlock, resource: str) -> None:
    lock = await redlock.acquire(resource)
    await lock.release()
    assert lock.remaining() == 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        del lock
        gc.collect()


def test_a_task_left_on_a_closed_loop_releases_its_lock_once_collected(masters: LocalMasters, resource: str) -> None:
    # A task still awaiting an acquire when its loop is closed is a reference cycle (task,
    # coroutine, future). Nothing outside Python may keep it alive: once the garbage collector
    # takes it, the lock the acquire won is released.
    redlock = AsyncRedlock(masters.urls)

    async def start_and_leave() -> None:
        await redlock.wait_connected(5.0)
        asyncio.get_running_loop().create_task(redlock.acquire(resource, ttl=30.0))
        await asyncio.sleep(0)  # the task begins the acquire

    event_loop = asyncio.new_event_loop()
    event_loop.run_until_complete(start_and_leave())
    wait_until(lambda: sum(value is not None for value in masters.values(resource)) >= 3, 5.0, "the lock won")
    event_loop.close()
    del event_loop
    gc.collect()
    masters.wait_cleared(resource)  # bounded at 10 s, a third of the lock's TTL


class _LoopWithoutReaders(asyncio.SelectorEventLoop):
    """An event loop that cannot watch file descriptors (like a proactor loop)."""

    def add_reader(self, *args: object) -> None:
        raise NotImplementedError("no add_reader on this loop")


def test_a_loop_that_cannot_watch_sockets_still_gets_its_results(masters: LocalMasters, resource: str) -> None:
    # Completions normally reach the loop through a socket it watches; without add_reader they
    # go through call_soon_threadsafe, one by one.
    async def cycles() -> int:
        redlock = AsyncRedlock(masters.urls, retry_delay=0.02)
        locks = await asyncio.gather(*(redlock.acquire(f"{resource}:{n}", ttl=5.0) for n in range(8)))
        released = await asyncio.gather(*(lock.release() for lock in locks))
        return sum(1 for votes in released if votes >= 3)

    event_loop = _LoopWithoutReaders()
    try:
        assert event_loop.run_until_complete(cycles()) == 8
    finally:
        event_loop.close()
    for n in range(8):
        masters.wait_cleared(f"{resource}:{n}")


class _LoopCountingReaders(asyncio.SelectorEventLoop):
    readers = 0

    def add_reader(self, *args: object) -> None:
        self.readers += 1
        super().add_reader(*args)  # type: ignore[arg-type]


def test_one_watched_socket_per_loop_carries_every_completion(masters: LocalMasters, resource: str) -> None:
    async def cycles(redlock: AsyncRedlock, round_: int) -> None:
        for n in range(4):
            lock = await redlock.acquire(f"{resource}:{round_}:{n}", ttl=5.0)
            assert await lock.release() >= 3

    event_loop = _LoopCountingReaders()
    try:
        redlock = AsyncRedlock(masters.urls, retry_delay=0.02)
        event_loop.run_until_complete(cycles(redlock, 0))
        event_loop.run_until_complete(cycles(AsyncRedlock(masters.urls), 1))
    finally:
        event_loop.close()
    assert event_loop.readers == 1


async def test_many_completions_at_once_all_reach_their_tasks(
    redlock: AsyncRedlock, masters: LocalMasters, resource: str
) -> None:
    # Completions that arrive while the loop is busy share one wake-up: none may be lost.
    keys = [f"{resource}:{n}" for n in range(200)]
    locks = await asyncio.gather(*(redlock.acquire(key, ttl=5.0) for key in keys))
    assert len({lock.token for lock in locks}) == len(keys)
    released = await asyncio.gather(*(lock.release() for lock in locks))
    assert all(votes >= 3 for votes in released)
    for key in keys[::37]:
        masters.wait_cleared(key)

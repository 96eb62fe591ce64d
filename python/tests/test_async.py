"""The asyncio API: the same operations as coroutines, `async with`, cancellation."""

from __future__ import annotations

import asyncio

import pytest
from conftest import FanOutName, LocalMasters, wait_until

from redlock_rs import AsyncLock, AsyncRedlock, LockLost, NotAcquired, RedlockError, Unavailable


@pytest.fixture
def redlock(masters: LocalMasters, fanout: FanOutName) -> AsyncRedlock:
    return AsyncRedlock(masters.urls, fanout=fanout, retry_delay=0.02)


async def test_acquire_and_release(redlock: AsyncRedlock, masters: LocalMasters, resource: str) -> None:
    lock = await redlock.acquire(resource, ttl=5.0)
    assert isinstance(lock, AsyncLock)
    assert lock.resource == resource and len(lock.token) == 40
    assert 0.0 < lock.validity <= 5.0 and lock.is_valid()
    assert lock.vote.won and lock.vote.granted >= 3
    assert masters.holders_of(resource, lock.token) >= 3
    assert await lock.release() >= 3
    masters.wait_cleared(resource)
    assert await lock.release() == 0


async def test_try_acquire_contention_raises_not_acquired(redlock: AsyncRedlock, resource: str) -> None:
    holder = await redlock.acquire(resource)
    with pytest.raises(NotAcquired) as caught:
        await redlock.try_acquire(resource)
    assert caught.value.vote is not None and caught.value.vote.denied >= 3
    assert caught.value.resource == resource
    await holder.release()


async def test_async_with_lock_context(redlock: AsyncRedlock, masters: LocalMasters, resource: str) -> None:
    async with redlock.lock(resource, ttl=5.0) as lock:
        assert isinstance(lock, AsyncLock)
        assert masters.holders_of(resource, lock.token) >= 3
    masters.wait_cleared(resource)
    with pytest.raises(ValueError):
        async with redlock.lock(resource) as lock:
            raise ValueError("the block's own error")
    masters.wait_cleared(resource)


async def test_async_with_an_acquired_lock(redlock: AsyncRedlock, masters: LocalMasters, resource: str) -> None:
    async with await redlock.acquire(resource) as lock:
        assert lock.is_valid()
    masters.wait_cleared(resource)


async def test_extend_and_extend_after_expiry(redlock: AsyncRedlock, masters: LocalMasters, resource: str) -> None:
    lock = await redlock.acquire(resource, ttl=1.0)
    await lock.extend(20.0)
    assert lock.ttl == 20.0 and lock.extensions == 1 and lock.validity > 19.0
    await lock.release()
    short = await redlock.acquire(resource, ttl=0.05)
    await asyncio.to_thread(wait_until, lambda: masters.values(resource) == [None] * 5, 5.0, "expiry")
    with pytest.raises(LockLost):
        await short.extend(1.0)


async def test_leaving_a_block_after_expiry_raises_lock_lost(redlock: AsyncRedlock, resource: str) -> None:
    # The core's scope rule (the C++ Guard's too), with its words.
    with pytest.raises(LockLost, match="validity ran out before it was released"):
        async with redlock.lock(resource, ttl=0.05) as lock:
            while lock.is_valid():
                await asyncio.sleep(0.01)


async def test_auto_extend_renews_and_reports_loss(
    redlock: AsyncRedlock, masters: LocalMasters, resource: str
) -> None:
    async with redlock.lock(resource, ttl=1.0, auto_extend=True) as lock:
        for _ in range(2000):
            if lock.extensions >= 3:
                break
            await asyncio.sleep(0.01)
        assert lock.extensions >= 3 and lock.is_valid()
        with pytest.raises(RedlockError, match="background"):
            await lock.extend()
    masters.wait_cleared(resource)

    with pytest.raises(LockLost):
        async with redlock.lock(resource, ttl=0.3, auto_extend=True) as lock:
            for index in range(5):
                masters.command(index, "DEL", resource)
            for _ in range(2000):
                if not lock.is_valid():
                    break
                await asyncio.sleep(0.01)


async def test_cancelled_acquire_leaves_no_key(masters: LocalMasters, fanout: FanOutName, resource: str) -> None:
    redlock = AsyncRedlock(masters.urls, fanout=fanout, retry_delay=0.01)
    # Someone holds the resource on masters 0-2: our attempts win masters 3-4 (a split vote)
    # and keep retrying until cancelled.
    for index in (0, 1, 2):
        masters.command(index, "SET", resource, "someone-else", "PX", 30_000)
    sets_before = masters.calls(3, "set")
    task = asyncio.ensure_future(redlock.acquire(resource, ttl=30.0, timeout=30.0))
    while masters.calls(3, "set") < sets_before + 3:
        await asyncio.sleep(0.005)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # The in-flight attempt is undone in the background right after the cancel.
    await asyncio.to_thread(
        wait_until, lambda: masters.values(resource)[3:] == [None, None], 5.0, "the cancelled attempt's cleanup"
    )
    assert masters.values(resource)[:3] == ["someone-else"] * 3


async def test_wait_for_timeout_then_the_resource_is_free(redlock: AsyncRedlock, resource: str) -> None:
    holder = await redlock.acquire(resource, ttl=30.0)
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(redlock.acquire(resource, timeout=30.0), 0.2)
    await holder.release()
    lock = await redlock.acquire(resource, timeout=5.0)
    await lock.release()


async def test_sixteen_tasks_on_one_resource_never_overlap(redlock: AsyncRedlock, resource: str) -> None:
    inside = 0
    most_inside = 0
    acquired = 0

    async def worker() -> None:
        nonlocal inside, most_inside, acquired
        for _ in range(5):
            async with redlock.lock(resource, ttl=5.0, timeout=30.0):
                inside += 1
                most_inside = max(most_inside, inside)
                await asyncio.sleep(0.001)  # the holder's work: lets an intruder show up
                inside -= 1
                acquired += 1

    await asyncio.wait_for(asyncio.gather(*(worker() for _ in range(16))), 60.0)
    assert most_inside == 1 and acquired == 80


async def test_unavailable_when_most_masters_are_down(fresh_masters: LocalMasters, fanout: FanOutName) -> None:
    redlock = AsyncRedlock(fresh_masters.urls, fanout=fanout, retry_count=0)
    for index in (0, 1, 2):
        fresh_masters.kill(index)
    with pytest.raises(Unavailable):
        await redlock.acquire("orders:42")


async def test_client_properties(masters: LocalMasters, fanout: FanOutName) -> None:
    redlock = AsyncRedlock(masters.urls, fanout=fanout)
    assert redlock.masters == masters.urls and redlock.fanout == fanout and redlock.quorum == 3
    assert repr(redlock).startswith("AsyncRedlock(")
    lock = await redlock.acquire("r")
    assert lock.token not in repr(lock) and lock.token[:8] in repr(lock)
    await lock.release()


async def test_a_rust_panic_in_a_coroutine_surfaces_as_redlock_error() -> None:
    from redlock_rs import _redlock_rs

    with pytest.raises(RedlockError, match="kaboom"):
        await _redlock_rs._panic_in_coroutine("kaboom")


def test_the_sync_and_async_apis_mix_in_one_thread(masters: LocalMasters, resource: str) -> None:
    async def main() -> str:
        lock = await AsyncRedlock(masters.urls).acquire(resource)
        await lock.release()
        return lock.token

    token = asyncio.run(main())
    assert len(token) == 40
    masters.wait_cleared(resource)

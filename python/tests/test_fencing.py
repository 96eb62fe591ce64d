"""Fencing tokens on 5 local masters: tokens increase in real-time order and are never returned
twice, from threads and from asyncio tasks; an unfenced lock has none."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from conftest import FanOutName, LocalMasters

from redlock_rs import AsyncRedlock, NotAcquired, Redlock

CONTENTION_SECONDS = 6.0


def test_sixty_turns_across_three_clients_get_strictly_increasing_tokens(
    masters: LocalMasters, fanout: FanOutName, resource: str
) -> None:
    clients = [Redlock(masters.urls, fanout=fanout, fencing=True) for _ in range(3)]
    tokens = []
    for turn in range(60):
        with clients[turn % 3].lock(resource) as lock:
            assert isinstance(lock.fencing_token, int)
            tokens.append(lock.fencing_token)
    assert tokens == sorted(set(tokens)), tokens
    assert all(client.fencing for client in clients)


class Ledger:
    """Tokens returned so far, checked as they come: each must be above every token returned
    before its acquire began, and none may come twice."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.highest = 0
        self.returned: list[int] = []
        self.problems: list[str] = []

    def begin(self) -> int:
        with self._lock:
            return self.highest

    def returned_token(self, before: int, token: int | None) -> None:
        with self._lock:
            if token is None or token <= before:
                self.problems.append(f"token {token} not above {before}, returned before its acquire began")
            else:
                self.highest = max(self.highest, token)
            self.returned.append(token or 0)

    def check(self) -> None:
        assert self.problems == []
        assert len(set(self.returned)) == len(self.returned), "a token was returned twice"
        assert len(self.returned) >= 2, "too few acquisitions to tell"


def test_eight_threads_on_two_clients_never_get_a_token_twice(masters: LocalMasters, resource: str) -> None:
    clients = [Redlock(masters.urls, fencing=True, retry_delay=0.01) for _ in range(2)]
    ledger = Ledger()
    until = time.monotonic() + CONTENTION_SECONDS
    failures: list[BaseException] = []

    def contend(client: Redlock) -> None:
        try:
            while time.monotonic() < until:
                before = ledger.begin()
                try:
                    lock = client.acquire(resource, timeout=max(0.0, until - time.monotonic()))
                except NotAcquired:
                    continue
                ledger.returned_token(before, lock.fencing_token)
                lock.release()
        except BaseException as err:
            failures.append(err)

    threads = [threading.Thread(target=contend, args=(clients[i % 2],)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(CONTENTION_SECONDS + 30.0)
    assert not any(thread.is_alive() for thread in threads)
    assert failures == []
    ledger.check()


async def test_eight_tasks_on_two_async_clients_never_get_a_token_twice(
    masters: LocalMasters, resource: str
) -> None:
    clients = [AsyncRedlock(masters.urls, fencing=True, retry_delay=0.01) for _ in range(2)]
    ledger = Ledger()
    until = time.monotonic() + CONTENTION_SECONDS

    async def contend(client: AsyncRedlock) -> None:
        while time.monotonic() < until:
            before = ledger.begin()
            try:
                lock = await client.acquire(resource, timeout=max(0.0, until - time.monotonic()))
            except NotAcquired:
                continue
            ledger.returned_token(before, lock.fencing_token)
            await lock.release()

    await asyncio.wait_for(
        asyncio.gather(*(contend(clients[i % 2]) for i in range(8))), CONTENTION_SECONDS + 30.0
    )
    ledger.check()


async def test_async_tokens_increase_and_unfenced_locks_have_none(masters: LocalMasters, resource: str) -> None:
    fenced = AsyncRedlock(masters.urls, fencing=True)
    first = await fenced.acquire(resource)
    await first.release()
    async with fenced.lock(resource) as second:
        assert first.fencing_token is not None and second.fencing_token is not None
        assert second.fencing_token > first.fencing_token
    plain = AsyncRedlock(masters.urls)
    async with plain.lock(resource) as lock:
        assert lock.fencing_token is None
    assert not plain.fencing and fenced.fencing


def test_an_unfenced_lock_has_no_token_and_extend_keeps_a_fenced_one(masters: LocalMasters, resource: str) -> None:
    with Redlock(masters.urls).lock(resource) as lock:
        assert lock.fencing_token is None
    with Redlock(masters.urls, fencing=True).lock(resource) as lock:
        token = lock.fencing_token
        lock.extend(20.0)
        assert lock.fencing_token == token


@pytest.mark.parametrize("value", [1, "yes", None])
def test_fencing_must_be_a_bool(masters: LocalMasters, value: object) -> None:
    with pytest.raises(TypeError, match="fencing must be a bool"):
        Redlock(masters.urls, fencing=value)  # type: ignore[arg-type]

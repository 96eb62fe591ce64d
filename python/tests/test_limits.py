"""Bounded inputs: a resource name over 64 KiB is refused before anything is sent, and no
message grows with what the caller passed."""

from __future__ import annotations

import asyncio
import time

import pytest
from conftest import LocalMasters

from redlock_rs import AsyncRedlock, NotAcquired, Redlock

LIMIT = 64 * 1024


def test_a_16_mib_resource_is_refused_at_once_with_a_short_message_naming_the_limit(masters: LocalMasters) -> None:
    redlock = Redlock(masters.urls)
    huge = "r" * (16 << 20)
    before = sum(masters.calls(i, "set") for i in range(5))
    for call in (
        lambda: redlock.acquire(huge),
        lambda: redlock.try_acquire(huge),
        lambda: redlock.lock(huge),
        lambda: redlock.acquire("é" * (LIMIT // 2 + 1)),  # the limit counts UTF-8 bytes
    ):
        started = time.monotonic()
        with pytest.raises(ValueError) as raised:
            call()
        message = str(raised.value)
        assert len(message) < 4096, f"{len(message)} characters"
        assert message.startswith("resource ") and "the maximum is 65536 bytes" in message, message
        # Reported, not asserted for speed: the refusal sends nothing.
        print(f"refused in {time.monotonic() - started:.3f} s")
    assert sum(masters.calls(i, "set") for i in range(5)) == before, "a refused name reached the masters"


def test_a_resource_at_the_limit_works_and_messages_about_it_stay_short(masters: LocalMasters) -> None:
    redlock = Redlock(masters.urls)
    longest = "k" * LIMIT
    with redlock.acquire(longest, ttl=10.0) as lock:
        with pytest.raises(NotAcquired) as raised:
            redlock.try_acquire(longest)
        assert len(str(raised.value)) < 4096
        assert raised.value.resource == longest  # the attribute keeps the whole name
        assert len(repr(lock)) < 1024
    assert masters.values(longest) == [None] * 5


def test_the_asyncio_client_refuses_it_too(masters: LocalMasters) -> None:
    async def main() -> None:
        redlock = AsyncRedlock(masters.urls)
        with pytest.raises(ValueError, match="65536 bytes"):
            await redlock.acquire("r" * (LIMIT + 1))

    asyncio.run(main())


def test_a_lone_surrogate_says_the_name_is_not_utf8_encodable(masters: LocalMasters) -> None:
    redlock = Redlock(masters.urls)
    with pytest.raises(ValueError) as raised:
        redlock.acquire("orders:\udc80")
    message = str(raised.value)
    assert "not UTF-8 encodable" in message and "index 7" in message, message
    with pytest.raises(TypeError, match="must be a str"):
        redlock.acquire(b"orders")  # type: ignore[arg-type]

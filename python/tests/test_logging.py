"""The `redlock_rs` logger: attempts, releases and renewals at DEBUG, failed masters and lost
locks at WARNING, and never a token or a password in a record."""

from __future__ import annotations

import asyncio
import logging

import pytest
from conftest import LocalMasters, wait_until

from redlock_rs import AsyncRedlock, LockLost, Redlock

PASSWORD = "s3cret-Pa55"


def wrong_password_urls(masters: LocalMasters) -> list[str]:
    """Masters 0 and 1 with a password these servers refuse (they have none): both fail."""
    urls = masters.urls
    return [url.replace("redis://", f"redis://:{PASSWORD}@") if i < 2 else url for i, url in enumerate(urls)]


def messages(caplog: pytest.LogCaptureFixture, level: int) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "redlock_rs" and r.levelno == level]


def assert_no_secret(caplog: pytest.LogCaptureFixture, *secrets: str) -> None:
    for record in caplog.records:
        for secret in secrets:
            assert secret not in record.getMessage(), record.getMessage()


def test_failed_masters_warn_and_attempts_are_debug(
    caplog: pytest.LogCaptureFixture, masters: LocalMasters, resource: str
) -> None:
    caplog.set_level(logging.DEBUG, logger="redlock_rs")
    redlock = Redlock(wrong_password_urls(masters), fanout="sequential")
    lock = redlock.acquire(resource, ttl=5.0)
    lock.extend(10.0)
    lock.release()
    warnings = messages(caplog, logging.WARNING)
    for index in (0, 1):
        assert any(m.startswith(f"master #{index} redis://") and resource in m for m in warnings), warnings
    debug = messages(caplog, logging.DEBUG)
    assert any("attempt 1: won" in m and resource in m for m in debug), debug
    assert any(m.startswith(f'extended "{resource}"') for m in debug), debug
    assert any(m.startswith(f'released "{resource}" on 3 of 5') for m in debug), debug
    assert_no_secret(caplog, PASSWORD, lock.token)


def test_nothing_below_warning_by_default(caplog: pytest.LogCaptureFixture, masters: LocalMasters, resource: str) -> None:
    caplog.set_level(logging.WARNING, logger="redlock_rs")
    Redlock(masters.urls).acquire(resource).release()
    assert [r for r in caplog.records if r.name == "redlock_rs"] == []


def test_renewals_are_debug_and_a_lost_lock_warns(
    caplog: pytest.LogCaptureFixture, masters: LocalMasters, resource: str
) -> None:
    caplog.set_level(logging.DEBUG, logger="redlock_rs")
    redlock = Redlock(masters.urls, retry_delay=0.02)
    with pytest.raises(LockLost):
        with redlock.lock(resource, ttl=0.5, auto_extend=True) as lock:
            wait_until(lambda: lock.extensions >= 2, 20.0, "two renewals")
            wait_until(
                lambda: any("renewed" in m for m in messages(caplog, logging.DEBUG)), 20.0, "a renewal record"
            )
            for index in range(5):  # the keys vanish: the next renewal finds the lock gone
                masters.command(index, "DEL", resource)
            wait_until(lambda: not lock.is_valid(), 20.0, "the loss")
            token = lock.token
    lost = [m for m in messages(caplog, logging.WARNING) if "lost" in m]
    assert len(lost) == 1 and resource in lost[0], lost
    assert_no_secret(caplog, token)


async def test_the_asyncio_api_logs_too(caplog: pytest.LogCaptureFixture, masters: LocalMasters, resource: str) -> None:
    caplog.set_level(logging.DEBUG, logger="redlock_rs")
    redlock = AsyncRedlock(wrong_password_urls(masters), fanout="sequential")
    lock = await redlock.acquire(resource)
    await lock.release()
    assert any(m.startswith("master #0 ") for m in messages(caplog, logging.WARNING))
    assert any("attempt 1: won" in m for m in messages(caplog, logging.DEBUG))
    assert_no_secret(caplog, PASSWORD, lock.token)
    await asyncio.sleep(0)

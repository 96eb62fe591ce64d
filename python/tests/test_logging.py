"""The `redlock_rs` logger: attempts, releases and renewals at DEBUG, failed masters (at most
one WARNING per failing master per second) and lost locks at WARNING, never a token or a
password in a record, and resource names only with trace_resource_names=True."""

from __future__ import annotations

import asyncio
import logging
import re
import time

import pytest
from conftest import LocalMasters, wait_until

from redlock_rs import AsyncRedlock, LockLost, Redlock, Unavailable

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
    redlock = Redlock(wrong_password_urls(masters), fanout="sequential", trace_resource_names=True)
    lock = redlock.acquire(resource, ttl=5.0)
    lock.extend(10.0)
    lock.release()
    # One record per call, naming the cause once: a WARNING for the first (the failing masters'
    # first in this second), DEBUG for the calls right after it; each failed master at DEBUG.
    warnings = messages(caplog, logging.WARNING)
    assert warnings == [m for m in warnings if m.startswith(f'acquired "{resource}" despite failed masters: 2 of 5 masters ')]
    assert len(warnings) == 1, warnings
    # The WARNING names each failing master: its position and address (password redacted).
    for index in (0, 1):
        assert re.search(rf"master #{index} redis://[^ ]*127\.0\.0\.1:{masters.ports[index]} \([a-z]+\)", warnings[0]), warnings
    debug = messages(caplog, logging.DEBUG)
    for done in (f'extended "{resource}"', f'released "{resource}" on 3 of 5 masters'):
        calls = [m for m in debug if m.startswith(f"{done} despite failed masters: 2 of 5 masters ")]
        assert len(calls) == 1, debug
    for index in (0, 1):
        assert any(m.startswith(f"master #{index} redis://") and resource in m for m in debug), debug
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
    redlock = Redlock(masters.urls, retry_delay=0.02, trace_resource_names=True)
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
    redlock = AsyncRedlock(wrong_password_urls(masters), fanout="sequential", trace_resource_names=True)
    lock = await redlock.acquire(resource)
    await lock.release()
    assert any(m.startswith("master #0 ") for m in messages(caplog, logging.DEBUG))
    assert any(m.startswith(f'acquired "{resource}" despite failed masters') for m in messages(caplog, logging.WARNING))
    assert any("attempt 1: won" in m for m in messages(caplog, logging.DEBUG))
    assert_no_secret(caplog, PASSWORD, lock.token)
    await asyncio.sleep(0)


def test_an_acquire_with_every_master_down_warns_once_naming_the_cause(
    caplog: pytest.LogCaptureFixture, fresh_masters: LocalMasters, resource: str
) -> None:
    caplog.set_level(logging.DEBUG, logger="redlock_rs")
    for index in range(5):
        fresh_masters.kill(index)
    redlock = Redlock(fresh_masters.urls, retry_count=3, retry_delay=0.01, trace_resource_names=True)
    with pytest.raises(Unavailable) as caught:
        redlock.acquire(resource)
    warnings = messages(caplog, logging.WARNING)
    assert len(warnings) == 1, warnings
    assert warnings[0].startswith(f"acquire failed: {caught.value}; failing: master #0 redis://"), warnings
    assert f'lock on "{resource}" unavailable after 4 attempts in ' in warnings[0]
    # Concurrent fan-out stops listening once failures decide the round: a master whose
    # reconnect was under way may be left unawaited, never counted as anything else.
    vote = caught.value.vote
    assert vote is not None and vote.timed_out == 0, warnings[0]
    assert vote.failed >= 3 and vote.failed + vote.not_awaited == 5, warnings[0]
    assert f"{vote.failed} of 5 masters could not be reached (" in warnings[0], warnings[0]
    assert "refused" in warnings[0].lower()
    # The detail, per master and attempt, is at DEBUG.
    per_master = [m for m in messages(caplog, logging.DEBUG) if m.startswith("master #")]
    assert len(per_master) >= 5 and all("refused" in m.lower() for m in per_master), per_master
    assert all(" during acquire attempt " in m for m in per_master), per_master


def test_a_failed_background_renewal_warns_naming_the_masters(
    caplog: pytest.LogCaptureFixture, fresh_masters: LocalMasters, resource: str
) -> None:
    caplog.set_level(logging.WARNING, logger="redlock_rs")
    redlock = Redlock(fresh_masters.urls, retry_delay=0.02, trace_resource_names=True)
    with pytest.raises(LockLost):
        with redlock.lock(resource, ttl=1.0, auto_extend=True) as lock:
            for index in (0, 1, 2):
                fresh_masters.kill(index)

            def renewals() -> list[str]:
                return [m for m in messages(caplog, logging.WARNING) if m.startswith(f'renewal of "{resource}" failed')]

            wait_until(lambda: bool(renewals()), 20.0, "a failed renewal's record")
            wait_until(lambda: not lock.is_valid(), 20.0, "the loss")
    # Each names the 3 masters down: refused, or, when this client was off the CPU past the
    # per-master timeout and the grace after it (a loaded host), timed out.
    for m in renewals():
        failing = re.findall(r"(\d) of 5 masters (could not be reached|timed out) \(", m)
        assert sum(int(n) for n, _ in failing) == 3, renewals()
    warnings = messages(caplog, logging.WARNING)
    lost = [m for m in warnings if "lost" in m]
    assert len(lost) == 1 and "could not be reached" in lost[0], lost


def test_records_hide_resource_names_unless_opted_in(
    caplog: pytest.LogCaptureFixture, fresh_masters: LocalMasters, resource: str
) -> None:
    caplog.set_level(logging.DEBUG, logger="redlock_rs")
    redlock = Redlock(wrong_password_urls(fresh_masters), fanout="sequential", retry_count=0)
    redlock.acquire(resource).release()
    for index in range(5):
        fresh_masters.kill(index)
    with pytest.raises(Unavailable) as caught:
        redlock.acquire(resource)
    # The exception (the caller's own) names it; no record does.
    assert resource in str(caught.value)
    records = messages(caplog, logging.DEBUG) + messages(caplog, logging.WARNING)
    assert any(m.startswith("acquired <resource> despite failed masters") for m in records), records
    assert any(m.startswith("acquire failed: lock on <resource> unavailable") for m in records), records
    assert_no_secret(caplog, resource, PASSWORD)


def test_a_failed_master_warns_at_most_once_a_second_with_the_count_held_back(
    caplog: pytest.LogCaptureFixture, fresh_masters: LocalMasters
) -> None:
    """1,000 locks taken and released as fast as the client goes with one master down: the
    WARNING records about it are bounded by the run's own duration (one per second, plus the
    first), and each one after the first counts the records held back at DEBUG since."""
    caplog.set_level(logging.DEBUG, logger="redlock_rs")
    # A generous per-master timeout: on a busy machine no healthy master times out, so the
    # only failures are the dead one's (refused at once).
    redlock = Redlock(fresh_masters.urls, instance_timeout=2.0)
    fresh_masters.kill(4)
    started = time.monotonic()
    for i in range(1000):
        redlock.acquire(f"burst:{i}").release()
    elapsed = time.monotonic() - started
    records = [r for r in caplog.records if r.name == "redlock_rs" and "despite failed masters" in r.getMessage()]
    # One record per call whose vote saw master 4 fail: every release (it waits for all five),
    # and the acquires that had not reached their quorum before the failure came back.
    assert 1000 <= len(records) <= 2000, len(records)
    warnings = [i for i, r in enumerate(records) if r.levelno == logging.WARNING]
    assert 1 <= len(warnings) <= int(elapsed) + 2, (len(warnings), elapsed)
    assert "held back" not in records[warnings[0]].getMessage()
    for before, after in zip(warnings, warnings[1:]):
        held_back = re.search(r"\((\d+) similar warnings held back\)$", records[after].getMessage())
        assert held_back is not None and int(held_back.group(1)) == after - before - 1, records[after].getMessage()

"""Exceptions raised by Python code the library runs (logging handlers, Ctrl-C landing there)
reach the caller once the library has done what safety needs, never "Exception ignored"."""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
from collections.abc import Iterator

import pytest
from conftest import LocalMasters, wait_until

from redlock_rs import AsyncRedlock, Redlock

PASSWORD = "s3cret-Pa55"


class Boom(Exception):
    """What the raising handler raises."""


class RaisingHandler(logging.Handler):
    """A handler that raises out of the logging call, as a KeyboardInterrupt landing there does."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.calls += 1
        raise Boom(record.getMessage())


@pytest.fixture
def raising_handler() -> Iterator[RaisingHandler]:
    logger = logging.getLogger("redlock_rs")
    handler = RaisingHandler()
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def two_failing(masters: LocalMasters) -> list[str]:
    """Masters 0 and 1 refuse our password (they have none): each call logs one WARNING."""
    return [url.replace("redis://", f"redis://:{PASSWORD}@") if i < 2 else url for i, url in enumerate(masters.urls)]


def test_an_exception_from_a_log_handler_during_acquire_reaches_the_caller_and_the_lock_is_undone(
    raising_handler: RaisingHandler, masters: LocalMasters, resource: str
) -> None:
    redlock = Redlock(two_failing(masters), fanout="sequential")
    with pytest.raises(Boom, match="despite failed masters: 2 of 5 masters"):
        redlock.acquire(resource, ttl=30.0)
    # The attempt won on the three healthy masters; nobody holds that lock, so it is gone.
    masters.wait_cleared(resource)
    assert raising_handler.calls == 1  # the operation's other records were skipped


def test_an_exception_from_a_log_handler_during_release_and_extend_comes_after_the_work(
    masters: LocalMasters, resource: str
) -> None:
    redlock = Redlock(two_failing(masters), fanout="sequential")
    lock = redlock.acquire(resource, ttl=30.0)
    logger = logging.getLogger("redlock_rs")
    handler = RaisingHandler()
    logger.addHandler(handler)
    # At DEBUG: the failing masters' WARNINGs right after the acquire's are rate-limited to
    # DEBUG records, which the handler must see too.
    level = logger.level
    logger.setLevel(logging.DEBUG)
    try:
        with pytest.raises(Boom):
            lock.extend(60.0)
        assert lock.ttl == 60.0  # the extension was made and kept
        with pytest.raises(Boom):
            lock.release()
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    assert masters.values(resource) == [None] * 5
    assert lock.release() == 0  # released once, by the call that raised


def test_an_exception_from_a_log_handler_reaches_the_awaiting_task(
    raising_handler: RaisingHandler, masters: LocalMasters, resource: str
) -> None:
    async def main() -> None:
        redlock = AsyncRedlock(two_failing(masters), fanout="sequential")
        with pytest.raises(Boom):
            await redlock.acquire(resource, ttl=30.0)

    asyncio.run(main())
    masters.wait_cleared(resource)


def test_an_exception_from_a_log_handler_during_a_renewal_is_raised_by_the_release(
    masters: LocalMasters, resource: str
) -> None:
    logger = logging.getLogger("redlock_rs")
    level = logger.level
    logger.setLevel(logging.DEBUG)
    handler = RaisingHandler()
    try:
        redlock = Redlock(masters.urls)
        with pytest.raises(Boom, match="renewed"):
            with redlock.lock(resource, ttl=0.6, auto_extend=True) as lock:
                logger.addHandler(handler)  # from here on, the renewals' records raise
                wait_until(lambda: handler.calls > 0, 10.0, "a renewal logged")
                logger.removeHandler(handler)
                assert lock.is_valid()  # the renewal itself went on
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    assert masters.values(resource) == [None] * 5


# The script behind the SIGINT tests: takes a lock with all five masters up, says so, waits for
# the test to pause masters 0 and 1 (asked one after another, they cost a second each), then
# runs OPERATION with a SIGINT DELAY seconds into it. It installs Python's SIGINT handler
# itself: a process started with SIGINT ignored (`make test &` in a script) passes that on.
SIGINT_SCRIPT = """
import logging, os, signal, sys, threading, time
import redlock_rs
signal.signal(signal.SIGINT, signal.default_int_handler)
operation, level, delay = sys.argv[1], sys.argv[2], float(sys.argv[3])
logging.getLogger("redlock_rs").setLevel(getattr(logging, level))
redlock = redlock_rs.Redlock(os.environ["REDLOCK_URLS"].split(","), instance_timeout=1.0, fanout="sequential")
redlock.wait_connected(10.0)
if operation == "renewal":
    context = redlock.lock("sigint", ttl=3.0, auto_extend=True)
    lock = context.__enter__()
else:
    lock = redlock.acquire("sigint", ttl=30.0)
print("held", flush=True)
sys.stdin.readline()
threading.Timer(delay, os.kill, (os.getpid(), signal.SIGINT)).start()
try:
    if operation == "acquire":
        redlock.acquire("sigint", ttl=30.0, timeout=30.0)
    elif operation == "release":
        lock.release()
    elif operation == "extend":
        lock.extend(30.0)
    else:
        with lock:
            time.sleep(30.0)
    print("returned", flush=True)
except KeyboardInterrupt:
    print("interrupted", flush=True)
"""


def start_script(code: str, urls: list[str], *args: str) -> subprocess.Popen[str]:
    env = dict(os.environ, REDLOCK_URLS=",".join(urls), PYTHONUNBUFFERED="1")
    return subprocess.Popen(
        [sys.executable, "-c", code, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


@pytest.mark.parametrize("level", ["DEBUG", "WARNING", "CRITICAL"])
@pytest.mark.parametrize("operation", ["acquire", "release", "extend", "renewal"])
def test_sigint_with_silent_masters_raises_keyboard_interrupt_in_the_caller(
    fresh_masters: LocalMasters, operation: str, level: str
) -> None:
    # During a renewal: it starts about 1 s after the acquire and takes 2 s.
    delay = "1.5" if operation == "renewal" else "0.05"
    proc = start_script(SIGINT_SCRIPT, fresh_masters.urls, operation, level, delay)
    try:
        assert proc.stdout is not None and proc.stdin is not None
        ready = proc.stdout.readline()
        assert ready.strip() == "held", (ready, proc.communicate(timeout=30))
        fresh_masters.pause(0)
        fresh_masters.pause(1)
        out, err = proc.communicate(input="go\n", timeout=50)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert "Exception ignored" not in err, err
    assert out.splitlines()[-1:] == ["interrupted"], (out, err)
    if operation in ("release", "renewal"):
        # The release was made on every master it could reach before the interrupt was raised.
        assert [fresh_masters.command(i, "GET", "sigint") for i in (2, 3, 4)] == [None] * 3

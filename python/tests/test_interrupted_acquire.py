"""Ctrl-C never strands a lock: SIGINT at random points of fast acquires (sync and asyncio,
fenced and unfenced, `acquire()` and `with lock()`), hundreds of times, leaves no lock key on
any master. A lock the caller received is the caller's to release; every other lock won as
the interrupt arrived is released by the library.

The child process announces each acquire on stdout; the parent then sends SIGINT after a
random delay drawn around the child's own median acquire time, so the interrupts fall before,
during and after the acquires. Each run is bounded by a count, and by pytest's timeout."""

from __future__ import annotations

import queue
import random
import signal
import subprocess
import threading
import time
from collections.abc import Callable

import pytest
from conftest import LocalMasters, wait_until

INTERRUPTS = 150

SYNC_CHILD = """
import faulthandler, os, signal, sys, time, warnings
from redlock_rs import Redlock

faulthandler.register(signal.SIGUSR1)  # the parent asks for stacks if this child goes silent
warnings.simplefilter("always", ResourceWarning)  # a lock dropped while held says so
# Ctrl-C raises KeyboardInterrupt, as in a program started from a terminal, even when this
# suite runs as a background job (a shell starts those with SIGINT ignored, and Python then
# installs no handler of its own).
signal.signal(signal.SIGINT, signal.default_int_handler)

def until_interrupted():
    # Short sleeps: a signal that arrives just before a sleep starts (after the interpreter's
    # last check) does not cut that sleep short, only the next check sees it.
    while True:
        time.sleep(0.02)

redlock = Redlock(os.environ["REDLOCK_URLS"].split(","), fencing={fencing}, retry_count=0)
redlock.wait_connected(10.0)
took = []
for i in range(30):
    start = time.perf_counter()
    redlock.acquire(f"{prefix}-warm-{{i}}", ttl=60.0).release()
    took.append(time.perf_counter() - start)
print("median", sorted(took)[len(took) // 2], flush=True)
landed = {{"before": 0, "during": 0, "held": 0}}
for i in range({count}):
    resource = f"{prefix}-{{i}}"
    started = False
    lock = None
    try:
        print("go", i, flush=True)
        started = True
        if i % 2:
            lock = redlock.acquire(resource, ttl=60.0)
            until_interrupted()  # the interrupt lands here if it missed the acquire
        else:
            with redlock.lock(resource, ttl=60.0) as lock:
                until_interrupted()
    except KeyboardInterrupt:
        pass
    if lock is not None:
        lock.release()  # handed to the caller: the caller's to release
    landed["held" if lock is not None else "during" if started else "before"] += 1
    print("done", i, flush=True)
print("landed", landed["before"], landed["during"], landed["held"], flush=True)
time.sleep(60.0)  # stay alive until the parent has looked at the masters (then killed)
"""

ASYNC_CHILD = """
import asyncio, faulthandler, os, signal, sys, time, warnings
from redlock_rs import AsyncRedlock

faulthandler.register(signal.SIGUSR1)  # the parent asks for stacks if this child goes silent
warnings.simplefilter("always", ResourceWarning)  # a lock dropped while held says so

async def main():
    redlock = AsyncRedlock(os.environ["REDLOCK_URLS"].split(","), fencing={fencing}, retry_count=0)
    await redlock.wait_connected(10.0)
    took = []
    for i in range(30):
        start = time.perf_counter()
        await (await redlock.acquire(f"{prefix}-warm-{{i}}", ttl=60.0)).release()
        took.append(time.perf_counter() - start)
    print("median", sorted(took)[len(took) // 2], flush=True)
    loop = asyncio.get_running_loop()
    landed = {{"before": 0, "during": 0, "held": 0}}
    for i in range({count}):
        resource = f"{prefix}-{{i}}"
        state = {{"started": False, "lock": None, "with": i % 2 == 0}}

        async def job():
            print("go", i, flush=True)
            state["started"] = True
            if state["with"]:
                async with redlock.lock(resource, ttl=60.0) as lock:
                    state["lock"] = lock
                    await asyncio.sleep(60.0)
            else:
                state["lock"] = await redlock.acquire(resource, ttl=60.0)
                await asyncio.sleep(60.0)

        # What asyncio.run does on Ctrl-C: cancel the task that runs the program.
        task = asyncio.create_task(job())
        loop.add_signal_handler(signal.SIGINT, task.cancel)
        try:
            await task
        except asyncio.CancelledError:
            pass
        loop.remove_signal_handler(signal.SIGINT)
        lock = state["lock"]
        if lock is not None and not state["with"]:
            await lock.release()  # handed to the caller: the caller's to release
        landed["held" if lock is not None else "during" if state["started"] else "before"] += 1
        print("done", i, flush=True)
    print("landed", landed["before"], landed["during"], landed["held"], flush=True)
    await asyncio.sleep(60.0)  # stay alive until the parent has looked at the masters

asyncio.run(main())
"""


def lock_keys(masters: LocalMasters, prefix: str) -> list[tuple[int, bytes]]:
    """Every lock key of this run on every master (fencing counters are not lock keys)."""
    found: list[tuple[int, bytes]] = []
    for index in range(len(masters.urls)):
        keys = masters.command(index, "KEYS", f"{prefix}-*")
        assert isinstance(keys, list)
        found += [(index, k) for k in keys if isinstance(k, bytes) and not k.endswith(b"\xfffence")]
    return found


class ChildLines:
    """The child's stdout, line by line, read by a thread (so a wait for a line is bounded)."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put("")  # end of output

    def expect(self, word: str, within: float = 30.0) -> list[str]:
        """The next line, which must start with `word`; a child silent for `within` seconds
        dumps its threads' stacks (faulthandler) into the failure."""
        try:
            line = self.lines.get(timeout=within).split()
        except queue.Empty:
            line = []
            self.proc.send_signal(signal.SIGUSR1)
            time.sleep(1.0)  # let faulthandler write its dump before the kill
        if not line or line[0] != word:
            self.proc.kill()
            assert self.proc.stderr is not None
            err = self.proc.stderr.read()
            raise AssertionError(f"expected {word!r} from the child, got {line}; stderr:\n{err}")
        return line[1:]


@pytest.mark.parametrize("api", ["sync", "asyncio"])
@pytest.mark.parametrize("fencing", [False, True], ids=["unfenced", "fenced"])
def test_sigint_at_random_points_of_fast_acquires_leaves_no_lock_key(
    masters: LocalMasters,
    python_script: Callable[[str, list[str]], subprocess.Popen[str]],
    api: str,
    fencing: bool,
) -> None:
    prefix = f"sigint-{api}-{'fenced' if fencing else 'unfenced'}-{random.randrange(1 << 30)}"
    child = SYNC_CHILD if api == "sync" else ASYNC_CHILD
    proc = python_script(
        child.format(fencing=fencing, prefix=prefix, count=INTERRUPTS), masters.urls
    )
    child_lines = ChildLines(proc)
    expect = child_lines.expect
    median = float(expect("median")[0])
    rng = random.Random(prefix)
    for i in range(INTERRUPTS):
        assert expect("go") == [str(i)]
        # Fault injection, not synchronisation: a random point of the acquire (or around it).
        delay = rng.uniform(0.0, median)
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        assert expect("done") == [str(i)]
    before, during, held = (int(n) for n in expect("landed"))
    print(f"{api} fencing={fencing}: median acquire {median * 1000:.2f} ms; SIGINT landed before {before}, during {during}, after {held}")
    assert before + during + held == INTERRUPTS
    # The interrupts fell both inside the acquires and after them.
    assert during > 0 and held > 0, (before, during, held)
    # Looked at while the child still runs: a background release has had no shortcut.
    wait_until(lambda: not lock_keys(masters, prefix), 10.0, f"no lock key of {prefix} left")
    proc.kill()
    assert proc.stderr is not None
    err = proc.stderr.read()
    assert "Traceback" not in err and "Exception ignored" not in err and "Warning" not in err, err

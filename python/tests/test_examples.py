"""The book's Python example (python/examples/local_masters.py), run as a user runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Optional

from conftest import LocalMasters

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "local_masters.py"


def run(urls: Optional[list[str]]) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "REDLOCK_MASTERS"}
    if urls is not None:
        env["REDLOCK_MASTERS"] = ",".join(urls)
    return subprocess.run([sys.executable, str(EXAMPLE)], env=env, capture_output=True, text=True, timeout=60)


def test_the_example_locks_on_the_masters_in_redlock_masters(fresh_masters: LocalMasters) -> None:
    done = run(fresh_masters.urls)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("locked reports:nightly for "), done.stdout
    assert fresh_masters.values("reports:nightly") == [None] * 5  # released


def test_the_example_tells_busy_from_down(fresh_masters: LocalMasters) -> None:
    missing = run(None)
    assert missing.returncode == 2 and "REDLOCK_MASTERS" in missing.stderr
    token = fresh_masters.occupy("reports:nightly")
    busy = run(fresh_masters.urls)
    assert busy.returncode == 1 and "another holder has it" in busy.stderr, busy.stderr
    fresh_masters.vacate("reports:nightly", token)
    for index in range(5):
        fresh_masters.kill(index)
    down = run(fresh_masters.urls)
    assert down.returncode == 3 and "could not be reached" in down.stderr, down.stderr

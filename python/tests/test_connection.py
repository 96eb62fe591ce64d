"""The connection layer from Python: a fresh client's first lock reaches every master, and a
master that refuses us says why (`MasterVote.error`, the exception's message)."""

from __future__ import annotations

import socket
from pathlib import Path

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


def test_after_a_restart_the_client_reconnects_and_locks_land_on_every_master(
    fresh_masters: LocalMasters,
) -> None:
    client = redlock_rs.Redlock(fresh_masters.urls, instance_timeout=5.0)
    for round_ in range(5):
        restarted = round_ % 5
        fresh_masters.restart(restarted)

        def reconnected() -> bool:
            # The restarted server is empty: any connection in its client list other than the
            # one asking means the client is back (its handshake loads the scripts, then asks
            # INFO server to learn which release and extend commands the master has).
            clients = fresh_masters.command(restarted, "CLIENT", "LIST")
            text = clients.decode() if isinstance(clients, bytes) else str(clients)
            return any("cmd=client|list" not in line for line in text.splitlines() if line.strip())

        wait_until(reconnected, 10.0, f"reconnect to restarted master {restarted}")
        key = f"py:restart:{round_}"
        lock = client.acquire(key, ttl=10.0)
        wait_until(lambda: fresh_masters.holders_of(key, lock.token) == 5, 10.0, f"round {round_}: token on all 5")
        lock.release()
        wait_until(lambda: fresh_masters.values(key) == [None] * 5, 10.0, f"round {round_}: no key left")


def test_an_untrusted_tls_certificate_is_named() -> None:
    # TLS masters with a self-signed certificate; without the URL's "#insecure" the client
    # verifies it against the system's roots, which do not know it.
    servers = LocalMasters(3, tls=True)
    try:
        urls = [url.removesuffix("#insecure") for url in servers.urls]
        client = redlock_rs.Redlock(urls, fanout="sequential", retry_count=0)
        _refused_by_every_master(client, "certificate")
    finally:
        servers.stop()


def test_a_private_ca_and_mutual_tls_come_from_the_url(tmp_path: Path) -> None:
    servers = LocalMasters(3, private_ca=tmp_path, mutual_tls=True)
    try:
        trusted = f"ssl_ca_certs={tmp_path / 'server-ca.pem'}"
        with_cert = f"{trusted}&ssl_certfile={tmp_path / 'client.pem'}&ssl_keyfile={tmp_path / 'client.key'}"
        client = redlock_rs.Redlock([f"{u}?{with_cert}" for u in servers.urls], fanout="sequential")
        lock = client.acquire("py:mtls", ttl=10.0)
        assert lock.vote.granted == 3
        assert lock.release() == 3
        # Without the client certificate the masters refuse the handshake, and say so; and the
        # system roots do not know the private CA.
        for urls, words in [([f"{u}?{trusted}" for u in servers.urls], "CertificateRequired"), (servers.urls, "certificate")]:
            refused = redlock_rs.Redlock(urls, fanout="sequential", retry_count=0)
            _refused_by_every_master(refused, words)
    finally:
        servers.stop()


def _refused_by_every_master(client: redlock_rs.Redlock, words: str) -> None:
    def refused_by_all() -> bool:
        try:
            client.acquire("py:tls", ttl=10.0)
        except redlock_rs.Unavailable as err:
            vote = err.vote
            return vote is not None and all(m.failure == "tls" for m in vote.masters)
        return False

    # Until the handshakes are done, a cause may still be a connection one; then it is TLS's.
    wait_until(refused_by_all, 10.0, "every master fails the TLS handshake")
    with pytest.raises(redlock_rs.Unavailable) as caught:
        client.acquire("py:tls", ttl=10.0)
    _every_master_failed(caught.value, "tls", words)


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

"""The resource side of fencing, with real parts: the examples in python/examples (included
in the book's fencing page) refuse the late write of a holder that paused past its lock's
validity, in a Redis and in SQLite."""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from conftest import LocalMasters, wait_until

from redlock_rs import Lock, Redlock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))

from fencing_redis import FencedStore  # noqa: E402
from fencing_redis import update_order as update_stored_order  # noqa: E402
from fencing_sqlite import FencedOrders  # noqa: E402
from fencing_sqlite import update_order as update_sql_order  # noqa: E402


@pytest.fixture
def storage() -> Iterator[redis.Redis]:
    """One more local redis-server, playing the protected resource."""
    server = LocalMasters(1)
    try:
        with redis.Redis.from_url(server.urls[0]) as client:
            yield client
    finally:
        server.stop()


@pytest.fixture
def redlock(masters: LocalMasters) -> Redlock:
    return Redlock(masters.urls, fencing=True, retry_count=100, retry_delay=0.02)


def paused_holder(redlock: Redlock, order: str) -> Lock:
    """A holder that acquired the order's lock, then stopped (a GC pause, a stopped VM) until
    its lock expired, before it could write."""
    lock = redlock.acquire(f"lock:{order}", ttl=0.3)
    wait_until(lambda: not lock.is_valid(), 5.0, "the paused holder's lock to expire")
    return lock


def test_a_redis_resource_refuses_a_paused_holders_late_write(redlock: Redlock, storage: redis.Redis) -> None:
    store = FencedStore(storage)
    late = paused_holder(redlock, "order-1")
    assert update_stored_order(redlock, store, "order-1", "shipped")
    # The paused holder wakes up and writes, believing it still holds the lock.
    assert late.fencing_token is not None
    assert not store.write("order-1", "cancelled", late.fencing_token)
    assert store.read("order-1") == b"shipped"
    # The next holder writes again: accepted.
    assert update_stored_order(redlock, store, "order-1", "delivered")
    assert store.read("order-1") == b"delivered"


def test_an_sql_resource_refuses_a_paused_holders_late_update(redlock: Redlock, tmp_path: Path) -> None:
    with sqlite3.connect(tmp_path / "orders.db") as db:
        orders = FencedOrders(db)
        orders.create("order-1", "new")
        late = paused_holder(redlock, "order-1")
        assert update_sql_order(redlock, orders, "order-1", "shipped")
        assert late.fencing_token is not None
        assert not orders.update("order-1", "cancelled", late.fencing_token)
        assert orders.status("order-1") == "shipped"
        assert update_sql_order(redlock, orders, "order-1", "delivered")
        assert orders.status("order-1") == "delivered"
    db.close()

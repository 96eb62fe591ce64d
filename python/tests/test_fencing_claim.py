"""What fencing does and does not do, with the book's examples and real parts: a late write
that reaches a record before the next holder touches it is accepted, so a read-modify-write
job loses an update; claiming the record before reading closes that gap. Tokens at the bound
(2**53 - 1) are compared exactly, and anything above it is refused.

Every interleaving here is fixed by the program's order (a holder "pauses" by not running its
next step until its lock has expired), never by timing."""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from conftest import LocalMasters, wait_until

from redlock_rs import MAX_FENCING_TOKEN, Lock, Redlock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))

from fencing_redis import FencedStore, add_to_stock  # noqa: E402
from fencing_redis import update_order as update_stored_order  # noqa: E402
from fencing_sqlite import FencedOrders, append_to_status  # noqa: E402
from fencing_sqlite import update_order as update_sql_order  # noqa: E402


# The protected resource and the fenced client are the examples' tests' fixtures.
from test_fencing_examples import redlock, storage  # noqa: E402,F401


@pytest.fixture
def db(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    connection = sqlite3.connect(tmp_path / "orders.db")
    try:
        yield connection
    finally:
        connection.close()


def token_of(lock: Lock) -> int:
    assert lock.fencing_token is not None
    return lock.fencing_token


def expired(lock: Lock) -> Lock:
    """The holder pauses (a GC pause, a stopped VM) until its lock has expired."""
    wait_until(lambda: not lock.is_valid(), 5.0, "the paused holder's lock to expire")
    return lock


def two_increments(redlock: Redlock, store: FencedStore, item: str, claim: bool) -> tuple[int, int]:
    """Holder A and then holder B each add 1 to `item` (read, then write), A pausing between
    its read and its write until B has read. Returns (writes accepted, final value)."""
    store.write(item, "10", 1)
    a = redlock.acquire(f"lock:{item}", ttl=0.3)
    if claim:
        assert store.claim(item, token_of(a))
    a_read = int(store.read(item) or b"0")
    expired(a)
    b = redlock.acquire(f"lock:{item}", ttl=10.0)
    if claim:
        assert store.claim(item, token_of(b))
    b_read = int(store.read(item) or b"0")
    # A wakes up and writes what it computed before its pause; then B writes.
    accepted = [store.write(item, str(a_read + 1), token_of(a)), store.write(item, str(b_read + 1), token_of(b))]
    b.release()
    return sum(accepted), int(store.read(item) or b"0")


def test_without_a_claim_a_late_write_is_accepted_and_an_update_is_lost(
    redlock: Redlock, storage: redis.Redis
) -> None:
    accepted, final = two_increments(redlock, FencedStore(storage), "stock:1", claim=False)
    # Both writes were accepted, yet the value went up by one: A's update was lost.
    assert (accepted, final) == (2, 11)


def test_with_the_claim_the_late_write_is_refused_and_no_update_is_lost(
    redlock: Redlock, storage: redis.Redis
) -> None:
    accepted, final = two_increments(redlock, FencedStore(storage), "stock:1", claim=True)
    # A's write was refused (A knows it failed); B's counted once: nothing lost.
    assert (accepted, final) == (1, 11)


def test_the_books_claiming_job_refuses_a_holder_overtaken_before_its_claim(
    redlock: Redlock, storage: redis.Redis
) -> None:
    store = FencedStore(storage)
    late = expired(redlock.acquire("lock:stock:2", ttl=0.3))
    assert add_to_stock(redlock, store, "stock:2", 5)
    assert add_to_stock(redlock, store, "stock:2", 2)
    assert store.read("stock:2") == b"7"
    # The paused holder cannot claim, so it never reads nor writes.
    assert not store.claim("stock:2", token_of(late))
    assert not store.write("stock:2", "100", token_of(late))
    assert store.read("stock:2") == b"7"


def test_an_sql_row_claimed_first_refuses_the_late_update(redlock: Redlock, db: sqlite3.Connection) -> None:
    orders = FencedOrders(db)
    orders.create("order-7", "new")
    late = redlock.acquire("lock:order-7", ttl=0.3)
    late_read = orders.status("order-7")
    expired(late)
    # Without a claim by the next holder the late update lands, before its work.
    assert orders.update("order-7", f"{late_read}, paid", token_of(late))
    orders.create("order-8", "new")
    late = redlock.acquire("lock:order-8", ttl=0.3)
    late_read = orders.status("order-8")
    expired(late)
    next_holder = redlock.acquire("lock:order-8", ttl=10.0)
    assert orders.claim("order-8", token_of(next_holder))
    assert not orders.update("order-8", f"{late_read}, paid", token_of(late))
    next_holder.release()
    assert append_to_status(redlock, orders, "order-8", "shipped")
    assert orders.status("order-8") == "new, shipped"


def plant_counters(masters: LocalMasters, resource: str, value: int) -> None:
    key = resource.encode() + b"\xfffence"
    for index in range(len(masters.urls)):
        assert masters.command(index, "SET", key, str(value)) == "OK"


def test_a_redis_record_refuses_a_stale_write_at_the_bound(
    redlock: Redlock, masters: LocalMasters, storage: redis.Redis
) -> None:
    store = FencedStore(storage)
    plant_counters(masters, "lock:edge-1", MAX_FENCING_TOKEN - 2)
    late = expired(redlock.acquire("lock:edge-1", ttl=0.3))
    assert token_of(late) == MAX_FENCING_TOKEN - 1
    assert update_stored_order(redlock, store, "edge-1", "shipped")
    assert not store.write("edge-1", "cancelled", token_of(late))
    assert store.read("edge-1") == b"shipped"
    # No token above the bound exists; the store refuses one, and the script refuses what is
    # not a token whoever calls it (here 2**63, which Lua's doubles would round).
    with pytest.raises(ValueError, match="9007199254740992"):
        store.write("edge-1", "x", MAX_FENCING_TOKEN + 1)
    script = storage.register_script(
        (Path(__file__).resolve().parent.parent / "examples" / "fencing_redis.py")
        .read_text()
        .split('FENCED_WRITE = """')[1]
        .split('"""')[0]
    )
    not_tokens: list[int | str] = [2**63, 2**63 + 1, "00042", "-1", "1e3"]
    for not_a_token in not_tokens:
        with pytest.raises(redis.ResponseError, match="not a fencing token"):
            script(keys=["edge-1"], args=[not_a_token, "x"])
    assert store.read("edge-1") == b"shipped"


def test_an_sql_row_refuses_a_stale_update_at_the_bound(
    redlock: Redlock, masters: LocalMasters, db: sqlite3.Connection
) -> None:
    orders = FencedOrders(db)
    orders.create("edge-2", "new")
    plant_counters(masters, "lock:edge-2", MAX_FENCING_TOKEN - 2)
    late = expired(redlock.acquire("lock:edge-2", ttl=0.3))
    assert token_of(late) == MAX_FENCING_TOKEN - 1
    assert update_sql_order(redlock, orders, "edge-2", "shipped")
    assert not orders.update("edge-2", "cancelled", token_of(late))
    assert orders.status("edge-2") == "shipped"
    with pytest.raises(ValueError, match="9007199254740992"):
        orders.update("edge-2", "x", MAX_FENCING_TOKEN + 1)
    # The table itself refuses what no token is.
    with pytest.raises(sqlite3.IntegrityError):
        with db:
            db.execute("UPDATE orders SET fencing_token = ? WHERE id = 'edge-2'", (MAX_FENCING_TOKEN + 1,))
    assert orders.status("edge-2") == "shipped"


def test_the_bound_is_two_pow_53_minus_1() -> None:
    assert MAX_FENCING_TOKEN == 2**53 - 1 == 9007199254740991

"""An SQL resource that checks fencing tokens: each row keeps the highest token it has seen,
and an update is a conditional UPDATE that matches only when the writer's token is at least
that one. A holder that paused past its lock's validity updates no row once a higher token
has reached it.

The condition is part of the UPDATE itself, so the database checks and writes in one step.
Tokens are at most 2**53 - 1, so they fit SQLite's INTEGER (signed 64-bit) and compare
exactly; the table refuses anything else.
"""

from __future__ import annotations

import sqlite3

from redlock_rs import MAX_FENCING_TOKEN, Redlock

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS orders (
    id TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    fencing_token INTEGER NOT NULL DEFAULT 0
        CHECK (fencing_token BETWEEN 0 AND {MAX_FENCING_TOKEN})
)
"""


class FencedOrders:
    """An `orders` table that refuses updates carrying a token below the row's."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db
        with db:
            db.execute(SCHEMA)

    def create(self, order: str, status: str) -> None:
        with self._db:
            self._db.execute("INSERT INTO orders (id, status) VALUES (?, ?)", (order, status))

    def update(self, order: str, status: str, token: int) -> bool:
        """Sets the order's status if `token` is at least the row's; True when updated."""
        with self._db:
            updated = self._db.execute(
                "UPDATE orders SET status = ?, fencing_token = ? WHERE id = ? AND fencing_token <= ?",
                (status, _checked(token), order, token),
            )
        return updated.rowcount == 1

    def claim(self, order: str, token: int) -> bool:
        """Raises the row's token to `token` (its status unchanged), so that every later
        update with a lower token is refused. Call it before reading; False: a higher token
        was there, this holder has been overtaken and must not go on."""
        with self._db:
            claimed = self._db.execute(
                "UPDATE orders SET fencing_token = ? WHERE id = ? AND fencing_token <= ?",
                (_checked(token), order, token),
            )
        return claimed.rowcount == 1

    def status(self, order: str) -> str:
        row = self._db.execute("SELECT status FROM orders WHERE id = ?", (order,)).fetchone()
        return str(row[0])


def _checked(token: int) -> int:
    if not 0 < token <= MAX_FENCING_TOKEN:
        raise ValueError(f"token must be in 1..={MAX_FENCING_TOKEN}, got {token}")
    return token


def update_order(redlock: Redlock, orders: FencedOrders, order: str, status: str) -> bool:
    """The client side: hold the lock, and send its fencing token with the update."""
    with redlock.lock(f"lock:{order}", ttl=10.0) as lock:
        token = lock.fencing_token
        assert token is not None, "the client needs Redlock(..., fencing=True)"
        updated = orders.update(order, status, token)
    return updated


def append_to_status(redlock: Redlock, orders: FencedOrders, order: str, note: str) -> bool:
    """A read-modify-write job: claim the row first, then read, then update. False: this
    holder was overtaken (its lock expired); nothing written."""
    with redlock.lock(f"lock:{order}", ttl=10.0) as lock:
        token = lock.fencing_token
        assert token is not None, "the client needs Redlock(..., fencing=True)"
        updated = False
        if orders.claim(order, token):
            updated = orders.update(order, f"{orders.status(order)}, {note}", token)
    return updated

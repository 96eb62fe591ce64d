"""An SQL resource that checks fencing tokens: each row keeps the token of its last write, and
an update is a conditional UPDATE that matches only when the writer's token is at least that
one. A holder that paused past its lock's validity updates no row.

The condition is part of the UPDATE itself, so the database checks and writes in one step.
"""

from __future__ import annotations

import sqlite3

from redlock_rs import Redlock

SCHEMA = """
CREATE TABLE IF NOT EXISTS orders (
    id TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    fencing_token INTEGER NOT NULL DEFAULT 0
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
                (status, token, order, token),
            )
        return updated.rowcount == 1

    def status(self, order: str) -> str:
        row = self._db.execute("SELECT status FROM orders WHERE id = ?", (order,)).fetchone()
        return str(row[0])


def update_order(redlock: Redlock, orders: FencedOrders, order: str, status: str) -> bool:
    """The client side: hold the lock, and send its fencing token with the update."""
    with redlock.lock(f"lock:{order}", ttl=10.0) as lock:
        token = lock.fencing_token
        assert token is not None, "the client needs Redlock(..., fencing=True)"
        updated = orders.update(order, status, token)
    return updated

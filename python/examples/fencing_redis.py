# ANCHOR: store
"""A Redis resource that checks fencing tokens: a write is stored only if its token is at
least the highest token stored for that record, so a holder that paused past its lock's
validity cannot overwrite what the next holder wrote.

The check runs inside Redis, in one script, so no other write can come between the check and
the store. (Lua compares the tokens as numbers: exact up to 2**53, far beyond any count of
acquisitions.)
"""

from __future__ import annotations

from typing import Optional, cast

import redis

from redlock_rs import Redlock

# KEYS[1]: the record (a hash of value and token). ARGV: the writer's token, the new value.
FENCED_WRITE = """
local highest = redis.call('HGET', KEYS[1], 'token')
if highest and tonumber(ARGV[1]) < tonumber(highest) then
    return 0
end
redis.call('HSET', KEYS[1], 'token', ARGV[1], 'value', ARGV[2])
return 1
"""


class FencedStore:
    """Records in a Redis that refuse writes carrying a token below the highest seen."""

    def __init__(self, storage: redis.Redis) -> None:
        self._storage = storage
        self._write = storage.register_script(FENCED_WRITE)

    def write(self, record: str, value: str, token: int) -> bool:
        """Stores `value` if `token` is at least the record's highest; True when stored."""
        return bool(self._write(keys=[record], args=[token, value]) == 1)

    def read(self, record: str) -> Optional[bytes]:
        return cast(Optional[bytes], self._storage.hget(record, "value"))

# ANCHOR_END: store


# ANCHOR: client
def update_order(redlock: Redlock, store: FencedStore, order: str, status: str) -> bool:
    """The client side: hold the lock, and send its fencing token with the write."""
    with redlock.lock(f"lock:{order}", ttl=10.0) as lock:
        token = lock.fencing_token
        assert token is not None, "the client needs Redlock(..., fencing=True)"
        stored = store.write(order, status, token)
    return stored
# ANCHOR_END: client

# ANCHOR: store
"""A Redis resource that checks fencing tokens: a write is stored only if its token is at
least the highest token the record has seen, so a holder that paused past its lock's validity
cannot overwrite the work of a holder with a higher token.

The check runs inside Redis, in one script, so no other write can come between the check and
the store. Tokens are compared exactly, as canonical decimals of at most 16 digits (length
first, then digits), never as Lua numbers; the script refuses anything that is not a token
(1 to 2**53 - 1, the largest token Redlock Suite issues).
"""

from __future__ import annotations

from typing import Optional, cast

import redis

from redlock_rs import MAX_FENCING_TOKEN, Redlock

# KEYS[1]: the record (a hash of value and token). ARGV[1]: the writer's token. ARGV[2]: the
# new value, or nothing for a claim (raise the record's token, keep its value).
FENCED_WRITE = """
local t = ARGV[1]
if not string.match(t, '^[1-9][0-9]*$') or #t > 16 or (#t == 16 and t > '9007199254740991') then
    return redis.error_reply('ERR not a fencing token: ' .. string.sub(t, 1, 40))
end
local seen = redis.call('HGET', KEYS[1], 'token')
if seen and (#t < #seen or (#t == #seen and t < seen)) then
    return 0
end
if ARGV[2] then
    redis.call('HSET', KEYS[1], 'token', t, 'value', ARGV[2])
else
    redis.call('HSET', KEYS[1], 'token', t)
end
return 1
"""


class FencedStore:
    """Records in a Redis that refuse writes carrying a token below the highest seen."""

    def __init__(self, storage: redis.Redis) -> None:
        self._storage = storage
        self._write = storage.register_script(FENCED_WRITE)

    def write(self, record: str, value: str, token: int) -> bool:
        """Stores `value` if `token` is at least the record's highest; True when stored."""
        return bool(self._write(keys=[record], args=[_checked(token), value]) == 1)

    def claim(self, record: str, token: int) -> bool:
        """Raises the record's token to `token` (its value unchanged), so that every later
        write with a lower token is refused. Call it before reading; False: a higher token
        was there, this holder has been overtaken and must not go on."""
        return bool(self._write(keys=[record], args=[_checked(token)]) == 1)

    def read(self, record: str) -> Optional[bytes]:
        return cast(Optional[bytes], self._storage.hget(record, "value"))


def _checked(token: int) -> int:
    if not 0 < token <= MAX_FENCING_TOKEN:
        raise ValueError(f"token must be in 1..={MAX_FENCING_TOKEN}, got {token}")
    return token

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


# ANCHOR: claim
def add_to_stock(redlock: Redlock, store: FencedStore, item: str, count: int) -> bool:
    """A read-modify-write job: claim the record with the token first, then read, then write.
    A holder that paused and wakes up later cannot slip its write in between: the claim made
    its token too low. False: this holder was overtaken (its lock expired); nothing written."""
    with redlock.lock(f"lock:{item}", ttl=10.0) as lock:
        token = lock.fencing_token
        assert token is not None, "the client needs Redlock(..., fencing=True)"
        stored = False
        if store.claim(item, token):
            stock = int(store.read(item) or b"0")
            stored = store.write(item, str(stock + count), token)
    return stored
# ANCHOR_END: claim

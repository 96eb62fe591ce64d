"""Redlock: a distributed lock over N independent Redis masters (Rust core).

Blocking API::

    from redlock_rs import Redlock, NotAcquired

    redlock = Redlock(["redis://127.0.0.1:7001", "redis://127.0.0.1:7002", "redis://127.0.0.1:7003"])
    with redlock.lock("orders:42", ttl=10.0) as lock:
        ...  # act as the owner while lock.is_valid()

asyncio API: the same with ``AsyncRedlock``, ``await`` and ``async with``; its methods
return coroutines (nothing reaches Redis until they run), which ``asyncio.create_task``,
``TaskGroup`` and ``asyncio.wait_for`` take.

Logging: the ``redlock_rs`` logger records attempts, extensions, releases, renewals and each
failed master at DEBUG; at WARNING one record per call in which masters failed, naming their
causes once, per failed background renewal, and per lost lock (never a token or a password).

Errors: ``RedlockError`` > ``NotAcquired`` (someone else holds it), ``Unavailable`` (too few
masters answered), ``LockLost`` (extend failed, expired, renewal lost); bad arguments raise
``ValueError``/``TypeError`` naming the argument. Times are seconds (floats).
"""

import logging as _logging

from ._redlock_rs import (
    DEFAULT_DRIFT_FACTOR,
    DEFAULT_FANOUT,
    DEFAULT_INSTANCE_TIMEOUT,
    DEFAULT_MAX_EXTENSIONS,
    DEFAULT_RETRY_COUNT,
    DEFAULT_RETRY_DELAY,
    DEFAULT_TTL,
    MAX_FENCING_TOKEN,
    AsyncLock,
    AsyncLockContext,
    AsyncRedlock,
    Lock,
    LockContext,
    LockLost,
    MasterVote,
    NotAcquired,
    Redlock,
    RedlockError,
    Unavailable,
    Vote,
    __version__,
)

__all__ = [
    "DEFAULT_DRIFT_FACTOR",
    "DEFAULT_FANOUT",
    "DEFAULT_INSTANCE_TIMEOUT",
    "DEFAULT_MAX_EXTENSIONS",
    "DEFAULT_RETRY_COUNT",
    "DEFAULT_RETRY_DELAY",
    "DEFAULT_TTL",
    "MAX_FENCING_TOKEN",
    "AsyncLock",
    "AsyncLockContext",
    "AsyncRedlock",
    "Lock",
    "LockContext",
    "LockLost",
    "MasterVote",
    "NotAcquired",
    "Redlock",
    "RedlockError",
    "Unavailable",
    "Vote",
    "__version__",
]

# A library's logger: silent until the application configures logging.
_logging.getLogger("redlock_rs").addHandler(_logging.NullHandler())

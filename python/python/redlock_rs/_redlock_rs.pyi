"""Type stubs of the native module redlock_rs._redlock_rs (checked with mypy.stubtest)."""

from collections.abc import Awaitable, Sequence
from types import TracebackType
from typing import Literal, Optional, final

__version__: str
__all__ = [
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
]

_Outcome = Literal["granted", "denied", "failed", "timed_out", "not_awaited"]
_Verdict = Literal["won", "expired", "split_vote", "clean_loss"]
_FanOut = Literal["concurrent", "sequential"]

class RedlockError(Exception):
    """Base class of every error redlock_rs raises (besides ValueError/TypeError)."""

    resource: Optional[str]
    vote: Optional[Vote]

class NotAcquired(RedlockError):
    """The vote was lost to contention: someone else holds the resource."""

class Unavailable(RedlockError):
    """Fewer than a quorum of masters answered: Redis is down or unreachable."""

class LockLost(RedlockError):
    """The lock is no longer held: an extend failed, it expired, or its renewal stopped."""

@final
class MasterVote:
    """One master's part of a vote."""

    @property
    def master(self) -> int: ...
    @property
    def outcome(self) -> _Outcome: ...
    @property
    def failure(
        self,
    ) -> Optional[Literal["connection", "server", "protocol", "auth", "tls", "overloaded", "other"]]: ...
    @property
    def error(self) -> Optional[str]: ...
    @property
    def round_trip(self) -> Optional[float]: ...

@final
class Vote:
    """What every master answered in one acquire attempt, extend or release."""

    @property
    def granted(self) -> int: ...
    @property
    def denied(self) -> int: ...
    @property
    def failed(self) -> int: ...
    @property
    def timed_out(self) -> int: ...
    @property
    def not_awaited(self) -> int: ...
    @property
    def quorum(self) -> int: ...
    @property
    def elapsed(self) -> float: ...
    @property
    def validity(self) -> Optional[float]: ...
    @property
    def won(self) -> bool: ...
    @property
    def verdict(self) -> _Verdict: ...
    @property
    def masters(self) -> list[MasterVote]: ...

@final
class Lock:
    """A lock won on a quorum of masters; a context manager that releases on exit."""

    @property
    def resource(self) -> str: ...
    @property
    def token(self) -> str: ...
    @property
    def ttl(self) -> float: ...
    @property
    def validity(self) -> float: ...
    @property
    def extensions(self) -> int: ...
    @property
    def vote(self) -> Vote: ...
    @property
    def auto_extend(self) -> bool: ...
    def remaining(self) -> float: ...
    def is_valid(self) -> bool: ...
    def extend(self, ttl: Optional[float] = None) -> None: ...
    def release(self) -> int: ...
    def __enter__(self) -> Lock: ...
    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> bool: ...

@final
class LockContext:
    """Returned by Redlock.lock(): acquires on entry, releases on exit."""

    def __enter__(self) -> Lock: ...
    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> bool: ...

@final
class Redlock:
    """A Redlock client over N independent Redis masters (blocking API, thread-safe)."""

    def __new__(
        cls,
        masters: Sequence[str],
        *,
        retry_count: int = 3,
        retry_delay: float = 0.2,
        drift_factor: float = 0.01,
        instance_timeout: float = 0.05,
        fanout: _FanOut = "concurrent",
        quorum: Optional[int] = None,
        max_extensions: int = 1000,
    ) -> Redlock: ...
    def acquire(self, resource: str, ttl: float = 10.0, *, timeout: Optional[float] = None) -> Lock: ...
    def try_acquire(self, resource: str, ttl: float = 10.0) -> Lock: ...
    def lock(
        self,
        resource: str,
        ttl: float = 10.0,
        *,
        timeout: Optional[float] = None,
        auto_extend: bool = False,
    ) -> LockContext: ...
    @property
    def masters(self) -> list[str]: ...
    @property
    def fanout(self) -> _FanOut: ...
    @property
    def quorum(self) -> int: ...

@final
class AsyncLock:
    """A lock won on a quorum of masters (asyncio API); an async context manager."""

    @property
    def resource(self) -> str: ...
    @property
    def token(self) -> str: ...
    @property
    def ttl(self) -> float: ...
    @property
    def validity(self) -> float: ...
    @property
    def extensions(self) -> int: ...
    @property
    def vote(self) -> Vote: ...
    @property
    def auto_extend(self) -> bool: ...
    def remaining(self) -> float: ...
    def is_valid(self) -> bool: ...
    def extend(self, ttl: Optional[float] = None) -> Awaitable[None]: ...
    def release(self) -> Awaitable[int]: ...
    def __aenter__(self) -> Awaitable[AsyncLock]: ...
    def __aexit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> Awaitable[bool]: ...

@final
class AsyncLockContext:
    """Returned by AsyncRedlock.lock(): acquires on entry, releases on exit."""

    def __aenter__(self) -> Awaitable[AsyncLock]: ...
    def __aexit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> Awaitable[bool]: ...

@final
class AsyncRedlock:
    """A Redlock client over N independent Redis masters (asyncio API)."""

    def __new__(
        cls,
        masters: Sequence[str],
        *,
        retry_count: int = 3,
        retry_delay: float = 0.2,
        drift_factor: float = 0.01,
        instance_timeout: float = 0.05,
        fanout: _FanOut = "concurrent",
        quorum: Optional[int] = None,
        max_extensions: int = 1000,
    ) -> AsyncRedlock: ...
    def acquire(
        self, resource: str, ttl: float = 10.0, *, timeout: Optional[float] = None
    ) -> Awaitable[AsyncLock]: ...
    def try_acquire(self, resource: str, ttl: float = 10.0) -> Awaitable[AsyncLock]: ...
    def lock(
        self,
        resource: str,
        ttl: float = 10.0,
        *,
        timeout: Optional[float] = None,
        auto_extend: bool = False,
    ) -> AsyncLockContext: ...
    @property
    def masters(self) -> list[str]: ...
    @property
    def fanout(self) -> _FanOut: ...
    @property
    def quorum(self) -> int: ...

# Test hooks: a Rust panic inside a blocking call / a coroutine surfaces as RedlockError.
def _panic_in_call(message: str) -> None: ...
def _panic_in_coroutine(message: str) -> Awaitable[None]: ...

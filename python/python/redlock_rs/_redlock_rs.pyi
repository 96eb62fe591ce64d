"""Type stubs of the native module redlock_rs._redlock_rs (checked with mypy.stubtest)."""

from collections.abc import Awaitable, Callable, Coroutine, Sequence
from types import TracebackType
from typing import Any, Literal, Optional, final

from typing_extensions import Self

__version__: str
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
]

_Outcome = Literal["granted", "denied", "failed", "timed_out", "not_awaited"]
_Verdict = Literal["won", "expired", "split_vote", "clean_loss", "unavailable"]
_Failure = Literal["connection", "server", "protocol", "auth", "tls", "overloaded", "other"]
_FanOut = Literal["concurrent", "sequential"]

# The core's defaults (redlock-core's DEFAULT_* constants) in Python's units; the signatures
# below show the same values.
DEFAULT_TTL: float
DEFAULT_RETRY_COUNT: int
DEFAULT_RETRY_DELAY: float
DEFAULT_DRIFT_FACTOR: float
DEFAULT_INSTANCE_TIMEOUT: float
DEFAULT_FANOUT: _FanOut
DEFAULT_MAX_EXTENSIONS: int
# The largest fencing token ever issued: 2**53 - 1 (exact in every consumer's integers).
MAX_FENCING_TOKEN: int

class RedlockError(Exception):
    """Base class of every error redlock_rs raises (besides ValueError/TypeError for bad
    arguments). ``resource`` and ``vote`` (the last vote, per master) are set when the error
    has them. Errors pickle with their vote (e.g. across a ProcessPoolExecutor)."""

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
    """One master's part of a vote. Compares equal field by field and pickles."""

    @property
    def master(self) -> int:
        """Index of the master in the configured order."""
    @property
    def outcome(self) -> _Outcome:
        """"granted", "denied", "failed", "timed_out" or "not_awaited"."""
    @property
    def failure(self) -> Optional[_Failure]:
        """For a failed master: "connection", "server", "protocol", "auth", "tls", "overloaded"
        or "other"; else None."""
    @property
    def error(self) -> Optional[str]:
        """Why it failed or timed out, in the words of whoever said so (the server's error
        reply, the TLS or socket error); None when it answered."""
    @property
    def round_trip(self) -> Optional[float]:
        """Seconds of its round trip; None when it timed out or was not awaited."""

@final
class Vote:
    """What every master answered in one acquire attempt, extend or release.

    Each master is counted once: granted + denied + failed + not_awaited is the number of
    masters; timed_out tells how many of the failed ones timed out. Compares equal field by
    field and pickles.
    """

    @property
    def granted(self) -> int:
        """Masters that granted (acquire: set the key; extend: renewed it; release: deleted it)."""
    @property
    def denied(self) -> int:
        """Masters that said no (held by someone else; for extend/release: not ours any more)."""
    @property
    def failed(self) -> int:
        """Masters that failed, by an error or a timeout (timed-out ones included)."""
    @property
    def timed_out(self) -> int:
        """How many of the failed masters timed out (a part of failed, not counted apart)."""
    @property
    def not_awaited(self) -> int:
        """Masters whose answer concurrent fan-out did not wait for."""
    @property
    def quorum(self) -> int:
        """Votes needed to win."""
    @property
    def elapsed(self) -> float:
        """Seconds the operation took."""
    @property
    def validity(self) -> Optional[float]:
        """Seconds of validity left when a winning acquire/extend completed, else None."""
    @property
    def won(self) -> bool:
        """True when granted >= quorum with validity left."""
    @property
    def verdict(self) -> _Verdict:
        """"won", "expired", "split_vote", "clean_loss" or "unavailable" (the suite's metric
        definitions: split_vote and clean_loss need a master that denied, i.e. another holder;
        a failed attempt without a denial is "unavailable", an outage)."""
    @property
    def masters(self) -> list[MasterVote]:
        """Per-master answers, in configured master order."""

class _LockState:
    """What Lock and AsyncLock share (stub only: both classes have these members)."""

    @property
    def resource(self) -> str:
        """The locked resource (the Redis key)."""
    @property
    def token(self) -> str:
        """The random token that proves ownership (40 hex characters). Keep it secret."""
    @property
    def fencing_token(self) -> Optional[int]:
        """The fencing token of a client made with fencing=True (above the token of every lock
        of this resource returned before this one's acquire began); None without fencing."""
    @property
    def ttl(self) -> float:
        """Seconds the keys were last set or renewed for."""
    @property
    def validity(self) -> float:
        """Seconds of validity when last acquired, extended or renewed (ttl - elapsed - drift)."""
    @property
    def extensions(self) -> int:
        """Successful extensions so far."""
    @property
    def vote(self) -> Vote:
        """The vote of the last acquire attempt, extension or renewal."""
    @property
    def auto_extend(self) -> bool:
        """True when renewed in the background (lock(..., auto_extend=True))."""
    def remaining(self) -> float:
        """Seconds of validity left now: 0.0 once expired, lost or released."""
    def is_valid(self) -> bool:
        """True while this holder may act as the owner: not released, not lost, validity left."""

@final
class Lock(_LockState):
    """A lock won on a quorum of masters (blocking API).

    Act as the owner only while is_valid(). Release it with release() or use it as a context
    manager, which releases on exit. A lock garbage-collected while still held is released
    at once (each master bounded by the per-master timeout) and raises a ResourceWarning.
    """

    def extend(self, ttl: Optional[float] = None) -> None:
        """Renews the lock to ttl seconds (default: its current ttl) on a quorum of masters.
        Raises LockLost if it is no longer held, Unavailable if too few masters answered."""
    def release(self) -> int:
        """Releases the lock on every master still holding it and returns how many released.
        Releasing twice, or an expired lock, is not an error (0). Raises LockLost if a
        background renewal had lost the lock."""
    def __enter__(self) -> Lock:
        """The lock itself."""
    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> bool:
        """Releases; raises LockLost if the lock was lost or expired inside the block (unless
        the block raised: its exception propagates)."""

@final
class LockContext:
    """Returned by Redlock.lock(): acquires on entry, releases on exit. Enter it once."""

    def __enter__(self) -> Lock:
        """Acquires the lock (see Redlock.acquire()) and returns it."""
    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> bool:
        """Releases the lock; raises LockLost if it was lost or expired inside the block
        (unless the block raised: its exception propagates)."""

class _Client:
    """What Redlock and AsyncRedlock share (stub only: both classes have these members)."""

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
        local_handoff: bool = True,
        fencing: bool = False,
        trace_resource_names: bool = False,
        meter_provider: Optional[Any] = None,
        collector: Optional[Any] = None,
    ) -> Self:
        """Checks every argument (ValueError/TypeError naming a bad one); no I/O."""
    def connected_masters(self) -> int:
        """How many masters have an established connection right now."""
    @property
    def closed(self) -> bool:
        """True once close() was called."""
    @property
    def masters(self) -> list[str]:
        """Master URLs in configured order, passwords redacted."""
    @property
    def fanout(self) -> _FanOut:
        """"concurrent" or "sequential"."""
    @property
    def quorum(self) -> int:
        """Votes needed to win."""
    @property
    def local_handoff(self) -> bool:
        """Whether a release by this client wakes its next waiter for the same resource."""
    @property
    def fencing(self) -> bool:
        """Whether this client's locks carry fencing tokens."""

@final
class Redlock(_Client):
    """A Redlock client over N independent Redis masters (blocking API).

    masters: the master URLs, redis://[user:password@]host:port[/db] (rediss:// for TLS).
    retry_count: attempts after the first one in acquire() (without timeout).
    retry_delay: seconds; the pause before a retry is drawn from [retry_delay/2, retry_delay].
    drift_factor: clock drift allowance as a fraction of the ttl (plus 2 ms), in [0, 1).
    instance_timeout: seconds each master gets to answer one request.
    fanout: "concurrent" (all masters at once) or "sequential" (one after another).
    quorum: votes needed to win, in [N/2+1, N]; None for the majority N/2+1.
    max_extensions: how many times one lock may be extended.
    local_handoff: True (default): threads of this client waiting for the same resource take
        turns, and a release wakes the next one at once instead of after its retry delay.
    fencing: True: every lock carries a fencing token (Lock.fencing_token), at the cost of one
        more round trip per acquire.
    trace_resource_names: True: the redlock_rs logger's records name resources (they may carry
        user data); False (default): they show <resource>.

    Creating a client does no I/O. One client is safe to share between threads. ``with
    Redlock(...) as redlock:`` closes it at the end of the block.
    """

    def acquire(self, resource: str, ttl: float = 10.0, *, timeout: Optional[float] = None) -> Lock:
        """Acquires resource for ttl seconds: up to 1 + retry_count attempts, or attempts
        until timeout seconds have passed. Raises NotAcquired (someone else holds it) or
        Unavailable (too few masters answered). Ctrl-C interrupts it."""
    def try_acquire(self, resource: str, ttl: float = 10.0) -> Lock:
        """Like acquire() with exactly one attempt."""
    def lock(
        self,
        resource: str,
        ttl: float = 10.0,
        *,
        timeout: Optional[float] = None,
        auto_extend: bool = False,
    ) -> LockContext:
        """A context manager that acquires on entry and releases on exit; with
        auto_extend=True the lock is renewed in the background while the block runs."""
    def wait_connected(self, timeout: float) -> int:
        """Waits until every master is connected or known to be down, at most timeout
        seconds, and returns how many are connected."""
    def close(self) -> None:
        """Closes the client at once: new calls raise RedlockError, and an acquire still
        running (any thread) stops promptly with RedlockError ("client closed"), its attempt
        in flight undone on every master; its locks can still be extended and released, and
        one garbage-collected while held is still released. Closing twice is fine."""
    def __enter__(self) -> Redlock:
        """The client itself."""
    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> bool:
        """Closes the client."""

@final
class AsyncLock(_LockState):
    """A lock won on a quorum of masters (asyncio API).

    extend() and release() return coroutines; ``async with lock:`` releases on exit. A
    cancelled release still completes on every master. A lock garbage-collected while still
    held is released in the background (``await client.close()`` waits for it) and raises a
    ResourceWarning.
    """

    def extend(self, ttl: Optional[float] = None) -> Coroutine[Any, Any, None]:
        """Coroutine: renews the lock to ttl seconds (default: its current ttl) on a quorum of
        masters. Raises LockLost if it is no longer held, Unavailable if too few answered."""
    def release(self) -> Coroutine[Any, Any, int]:
        """Coroutine: releases the lock on every master still holding it and returns how many
        released (0 when released before or expired). Cancelled, it still completes on every
        master before CancelledError is raised."""
    def __aenter__(self) -> Coroutine[Any, Any, AsyncLock]:
        """Coroutine: the lock itself."""
    def __aexit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> Coroutine[Any, Any, bool]:
        """Coroutine: releases; raises LockLost if the lock was lost or expired inside the
        block (unless the block raised). Cancelled, it still completes the release before
        CancelledError is raised."""

@final
class AsyncLockContext:
    """Returned by AsyncRedlock.lock(): acquires on entry, releases on exit. Enter it once."""

    def __aenter__(self) -> Coroutine[Any, Any, AsyncLock]:
        """Coroutine: acquires the lock (see AsyncRedlock.acquire()) and returns it."""
    def __aexit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> Coroutine[Any, Any, bool]:
        """Coroutine: releases the lock; raises LockLost if it was lost or expired inside the
        block (unless the block raised). Cancelled, it still completes the release before
        CancelledError is raised."""

@final
class AsyncRedlock(_Client):
    """A Redlock client over N independent Redis masters (asyncio API).

    The parameters are those of Redlock (masters, retry_count, retry_delay, drift_factor,
    instance_timeout, fanout, quorum, max_extensions). Every operation returns a coroutine:
    nothing reaches Redis until it runs (await it, or hand it to asyncio.create_task, a
    TaskGroup or asyncio.wait_for; operations begun in one iteration of the event loop are
    sent together when it ends), and cancelling it undoes an in-flight attempt on every
    master. ``async with AsyncRedlock(...) as redlock:`` closes it at the end of the block.
    """

    def acquire(
        self, resource: str, ttl: float = 10.0, *, timeout: Optional[float] = None
    ) -> Coroutine[Any, Any, AsyncLock]:
        """Coroutine: acquires resource for ttl seconds: up to 1 + retry_count attempts, or
        attempts until timeout seconds have passed. Raises NotAcquired or Unavailable."""
    def try_acquire(self, resource: str, ttl: float = 10.0) -> Coroutine[Any, Any, AsyncLock]:
        """Coroutine: like acquire() with exactly one attempt."""
    def lock(
        self,
        resource: str,
        ttl: float = 10.0,
        *,
        timeout: Optional[float] = None,
        auto_extend: bool = False,
    ) -> AsyncLockContext:
        """An async context manager that acquires on entry and releases on exit; with
        auto_extend=True the lock is renewed in the background while the block runs."""
    def wait_connected(self, timeout: float) -> Coroutine[Any, Any, int]:
        """Coroutine: waits until every master is connected or known to be down, at most
        timeout seconds, and returns how many are connected."""
    def close(self) -> Awaitable[None]:
        """Closes the client at once, as Redlock.close(), and returns an awaitable: ``await
        client.close()`` also waits until the releases this client runs in the background
        are done (a cancelled release or async-with exit, a lock garbage-collected while held
        or won by a cancelled acquire). Not awaiting it is fine."""
    def __aenter__(self) -> Coroutine[Any, Any, AsyncRedlock]:
        """Coroutine: the client itself."""
    def __aexit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> Coroutine[Any, Any, bool]:
        """Coroutine: closes the client, then waits for its releases in the background."""

# Test hooks: a Rust panic inside a blocking call / a coroutine surfaces as RedlockError.
def _panic_in_call(message: str) -> None: ...
def _panic_in_coroutine(message: str) -> Coroutine[Any, Any, None]: ...

# One meter's measurements between the clients and its instruments (see _metrics.py).
@final
class _Tally:
    def __new__(
        cls,
        acquire: Callable[..., object],
        extend: Callable[..., object],
        release: Callable[..., object],
        request: Callable[..., object],
        context: object,
    ) -> _Tally:
        """The four histograms' record methods, and the context to record in."""
    @staticmethod
    def aggregating() -> _Tally:
        """A tally that keeps each series' exact bucket counts itself."""
    def histograms(self) -> list[tuple[int, dict[str, Any], list[int], float]]:
        """[(histogram, attributes, bucket counts, sum)] of an aggregating tally."""
    def add_server(self, attributes: dict[str, Any]) -> int:
        """Registers a server's attributes (server.address, server.port); returns its id."""
    def flush(self) -> None:
        """Records every pending histogram value."""
    def pending(self) -> int:
        """Histogram values waiting to be recorded."""
    def attempts(self) -> list[tuple[str, int]]:
        """[(redlock.attempt.result, attempts)] since the start: every result, 0 until seen."""
    def locks_held(self) -> int:
        """Locks held now (won, and neither released, found lost nor dropped); 0 at the start."""
    def locks_lost(self) -> int:
        """Held locks found lost since the start."""
    def failures(self) -> list[tuple[int, str, int]]:
        """[(server id, error.type, failures)] since the start: every registered server with
        every error.type, 0 until it fails so."""
